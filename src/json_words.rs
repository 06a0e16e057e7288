//! serde_json's data errors in the words a user reads, for the JSON inputs
//! read through serde (`decide`'s input, simulator scenarios): "an integer
//! from 0 to 2^64-1" instead of `u64`, "number" instead of "floating
//! point", "array" and "object" instead of "sequence" and "map", and why an
//! integer does not fit (negative, too large, not an integer): the words
//! lb-config.json's own reader uses (`config::entry`).
//!
//! serde's messages have a fixed shape (`invalid type: {unexpected},
//! expected {expected}`, `invalid value: ...`, `unknown variant ...`);
//! anything else passes through unchanged.

/// `message` (serde_json's, without its " at line L column C") in user
/// words.
pub fn user_message(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    // serde reads an array into a struct by position, so an array where an
    // object belongs is "invalid length N, expected struct T with M
    // elements".
    if let Some((_, expected)) = message
        .strip_prefix("invalid length ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        if expected.starts_with("struct ") {
            return "invalid type: array, expected an object".to_string();
        }
    }
    let (kind, rest) = match (
        message.strip_prefix("invalid type: "),
        message.strip_prefix("invalid value: "),
    ) {
        (Some(rest), _) => ("invalid type", rest),
        (_, Some(rest)) => ("invalid value", rest),
        _ => return message.to_string(),
    };
    let Some((unexpected, expected)) = rest.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let integer = integer_words(expected);
    let expected = integer
        .or_else(|| other_words(expected))
        .unwrap_or(expected);
    let unexpected = match integer {
        Some(_) => why_not_an_integer(unexpected),
        None => unexpected_words(unexpected),
    };
    format!("{kind}: {unexpected}, expected {expected}")
}

/// The range of serde's unsigned integer types.
fn integer_words(expected: &str) -> Option<&'static str> {
    Some(match expected {
        "u8" => "an integer from 0 to 255",
        "u16" => "an integer from 0 to 65535",
        "u32" => "an integer from 0 to 2^32-1",
        "u64" | "usize" => "an integer from 0 to 2^64-1",
        _ => return None,
    })
}

fn other_words(expected: &str) -> Option<&'static str> {
    Some(match expected {
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "an object",
        "a borrowed string" => "a string",
        _ if expected.starts_with("struct ") => "an object",
        _ => return None,
    })
}

/// serde's names of JSON values (`floating point`, `sequence`, `map`).
fn unexpected_words(unexpected: &str) -> String {
    match unexpected {
        "sequence" => "array".to_string(),
        "map" => "object".to_string(),
        _ => match unexpected.strip_prefix("floating point ") {
            Some(number) => format!("number {number}"),
            None => unexpected.to_string(),
        },
    }
}

/// Why a number is not the unsigned integer expected: serde_json reads an
/// integer beyond 2^64-1 (or written with an exponent) as a float, and
/// reports a negative or too-large integer without saying which.
fn why_not_an_integer(unexpected: &str) -> String {
    if let Some(n) = quoted(unexpected, "integer ") {
        let what = if n.starts_with('-') {
            "negative"
        } else {
            "too large"
        };
        return format!("integer `{n}` is {what}");
    }
    if let Some(n) = quoted(unexpected, "floating point ") {
        return match n.parse::<f64>() {
            Ok(v) if v.fract() == 0.0 && v != 0.0 => {
                let what = if v < 0.0 { "negative" } else { "too large" };
                // serde prints `-1e3` as `-1000.0`.
                format!("integer `{}` is {what}", n.strip_suffix(".0").unwrap_or(n))
            }
            _ => format!("number `{n}`"),
        };
    }
    unexpected_words(unexpected)
}

/// `x` of "{prefix}`x`".
fn quoted<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)?
        .strip_prefix('`')?
        .strip_suffix('`')
}

#[cfg(test)]
mod tests {
    use super::user_message;

    /// serde_json's message for `text` read as `T`.
    fn serde<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
        let message = serde_json::from_str::<T>(text).unwrap_err().to_string();
        match message.rfind(" at line ") {
            Some(at) => message[..at].to_string(),
            None => message,
        }
    }

    #[test]
    fn integers_say_their_range_and_why_a_value_is_not_one() {
        for (message, want) in [
            (
                serde::<u32>("-1"),
                "invalid value: integer `-1` is negative, expected an integer from 0 to 2^32-1",
            ),
            (
                serde::<u32>("4294967296"),
                "invalid value: integer `4294967296` is too large, expected an integer from 0 to 2^32-1",
            ),
            (
                serde::<u64>("1e23"),
                "invalid type: integer `1e+23` is too large, expected an integer from 0 to 2^64-1",
            ),
            (
                serde::<u64>("18446744073709551616"),
                "invalid type: integer `1.8446744073709552e+19` is too large, expected an integer from 0 to 2^64-1",
            ),
            (
                serde::<u64>("-1e3"),
                "invalid type: integer `-1000` is negative, expected an integer from 0 to 2^64-1",
            ),
            (
                serde::<u64>("1.5"),
                "invalid type: number `1.5`, expected an integer from 0 to 2^64-1",
            ),
            (
                serde::<u64>("\"x\""),
                "invalid type: string \"x\", expected an integer from 0 to 2^64-1",
            ),
            (
                serde::<u64>("null"),
                "invalid type: null, expected an integer from 0 to 2^64-1",
            ),
        ] {
            assert_eq!(user_message(&message), want, "{message}");
        }
    }

    #[test]
    fn json_values_and_other_types_are_named_as_json_names_them() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct S {
            a: u8,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(rename_all = "lowercase")]
        enum E {
            Fast,
            Slow,
        }
        for (message, want) in [
            (
                serde::<f64>("\"x\""),
                "invalid type: string \"x\", expected a number",
            ),
            (
                serde::<String>("[1]"),
                "invalid type: array, expected a string",
            ),
            (
                serde::<Vec<u8>>("{}"),
                "invalid type: object, expected an array",
            ),
            (
                serde::<S>("3"),
                "invalid type: integer `3`, expected an object",
            ),
            (
                serde::<std::collections::BTreeMap<String, u8>>("[]"),
                "invalid type: array, expected an object",
            ),
            (serde::<S>("[]"), "invalid type: array, expected an object"),
            (
                serde::<E>("\"fastest\""),
                "unknown value `fastest`, expected `fast` or `slow`",
            ),
            (
                serde::<i64>("1.5"),
                "invalid type: number `1.5`, expected an integer",
            ),
        ] {
            assert_eq!(user_message(&message), want, "{message}");
        }
        // Other messages are already words.
        for message in [
            serde::<S>("{\"b\": 1}"),
            serde::<S>("{}"),
            "EOF while parsing a value".to_string(),
        ] {
            assert_eq!(user_message(&message), message);
        }
    }
}
