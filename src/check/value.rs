//! Typing of expression values by kind (docs/stargate.md 5.2), and
//! the per-field range rules of expressions (5.4).

use super::schema::{Field, Kind, Typed};
use crate::diag::Code;
use crate::ir::{Comparator, RendezvousWeight};
use crate::syntax::ast::Value;

/// A value as the user wrote it, for messages: strings quoted.
pub fn raw(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Integer(s) | Value::Decimal(s) | Value::Token(s) | Value::Unsupported(s) => {
            s.clone()
        }
    }
}

/// The plain-number grammar of quoted numbers: optional single sign, at
/// least one digit, optionally `.` and at least one digit.
pub fn is_plain_number(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(int) && frac.is_none_or(digits)
}

/// An integer literal or plain number without fraction as u64: `None` when
/// negative (other than -0), fractional or too large.
fn unsigned_of(text: &str) -> Option<u64> {
    if !is_plain_number(text) || text.contains('.') {
        return None;
    }
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let v: u64 = digits.parse().ok()?;
    (!negative || v == 0).then_some(v)
}

/// A quoted plain number parsed as an unsigned integer: Rust's `u64`
/// parse, which takes a `+` but no `-` (so `"-0"` is invalid, while the
/// integer literal `-0` is RFC 8941's 0 and accepted).
fn quoted_unsigned_of(text: &str) -> Option<u64> {
    if !is_plain_number(text) {
        return None;
    }
    text.parse().ok()
}

/// A plain number as a finite f64.
fn decimal_of(text: &str) -> Option<f64> {
    if !is_plain_number(text) {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Types a value for a field's kind; Err is the invalid_value message.
pub fn type_value(field: Field, value: &Value) -> Result<Typed, String> {
    let name = field.name();
    let wrong = || {
        format!(
            "invalid value {} for {name}: expected {}",
            raw(value),
            field.kind().describe()
        )
    };
    let text = match value {
        Value::String(s) | Value::Token(s) => Some(s.as_str()),
        _ => None,
    };
    match field.kind() {
        Kind::Boolean => match text {
            Some("true") => Ok(Typed::Bool(true)),
            Some("false") => Ok(Typed::Bool(false)),
            _ => Err(wrong()),
        },
        Kind::Text => text.map(|s| Typed::Text(s.to_string())).ok_or_else(wrong),
        Kind::Comparator => match text {
            Some(s) => Comparator::from_name(s)
                .map(Typed::Comparator)
                .ok_or_else(|| format!("unknown comparator '{s}'")),
            None => Err(wrong()),
        },
        Kind::Weight => match text {
            Some(s) => RendezvousWeight::from_name(s)
                .map(Typed::Weight)
                .ok_or_else(|| format!("unknown rendezvous weight '{s}'")),
            None => Err(wrong()),
        },
        Kind::Unsigned => match value {
            Value::Integer(s) => unsigned_of(s).map(Typed::Unsigned).ok_or_else(wrong),
            Value::String(s) => quoted_unsigned_of(s).map(Typed::Unsigned).ok_or_else(wrong),
            _ => Err(wrong()),
        },
        Kind::Decimal => match value {
            Value::Integer(s) | Value::Decimal(s) | Value::String(s) => {
                decimal_of(s).map(Typed::Decimal).ok_or_else(wrong)
            }
            _ => Err(wrong()),
        },
    }
}

/// The range rules of expressions (5.4): Err is (code, message).
pub fn check_expression_range(field: Field, value: &Typed) -> Result<(), (Code, String)> {
    let name = field.name();
    let inert = || {
        Err((
            Code::InertValue,
            format!("{name} must be at least 1, got 0 (0 would disable it)"),
        ))
    };
    match (field, value) {
        (Field::MaxInputWorkSeconds, Typed::Decimal(v)) if *v <= 0.0 => Err((
            Code::InertValue,
            format!("{name} must be greater than 0, got {v}"),
        )),
        (Field::SampleCount, Typed::Unsigned(v)) if !(1..=64).contains(v) => Err((
            Code::InvalidValue,
            format!("{name} must be between 1 and 64, got {v}"),
        )),
        (
            Field::N | Field::TtftBucketSizeMs | Field::CacheAffinityBackendSelectionCount,
            Typed::Unsigned(0),
        ) => inert(),
        (Field::CacheAffinityVirtualNodes, Typed::Unsigned(0)) => inert(),
        (Field::CacheAffinityVirtualNodes, Typed::Unsigned(v)) if *v > 1024 => Err((
            Code::InvalidValue,
            format!("{name} must be at most 1024, got {v}"),
        )),
        (Field::CacheAffinityInputTokensScale, Typed::Decimal(v)) if !(0.0..=1.0).contains(v) => {
            Err((
                Code::InvalidValue,
                format!("{name} must be between 0.0 and 1.0, got {v}"),
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers() {
        for ok in ["0", "+1", "-2", "1.5", "0.0625", "007"] {
            assert!(is_plain_number(ok), "{ok}");
        }
        for bad in [
            "", "1e3", "0x10", "inf", "NaN", ".5", "1.", " 1", "1.2.3", "+-1", "--1",
        ] {
            assert!(!is_plain_number(bad), "{bad}");
        }
    }

    #[test]
    fn quoted_unsigned_numbers_parse_as_u64_does() {
        assert_eq!(quoted_unsigned_of("+5"), Some(5));
        assert_eq!(quoted_unsigned_of("007"), Some(7));
        assert_eq!(quoted_unsigned_of("-0"), None);
        assert_eq!(quoted_unsigned_of("1.0"), None);
        assert_eq!(quoted_unsigned_of("18446744073709551616"), None);
    }

    #[test]
    fn unsigned_accepts_minus_zero_but_not_negatives() {
        assert_eq!(unsigned_of("-0"), Some(0));
        assert_eq!(unsigned_of("-1"), None);
        assert_eq!(unsigned_of("18446744073709551615"), Some(u64::MAX));
        assert_eq!(unsigned_of("18446744073709551616"), None);
    }
}
