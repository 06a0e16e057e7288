//! The help for an unquoted value that cannot stand bare: one that starts
//! with a digit but is not a number (`405b-v1`), or holds a character a
//! token cannot (`a/b c`, `x@y`). Each form judges by its own token rule
//! (a header's RFC 8941 token takes `a/b`, a route file's token does not)
//! and says the same thing in its own spelling: `seed="405b-v1"` in a
//! header, `seed = "405b-v1"` in a route file or call.

/// Whether `c` may continue an RFC 8941 token (tchar, `:` or `/`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~:/".contains(c)
}

/// Whether `value` could be written bare in a header: an RFC 8941 token
/// (ALPHA or `*`, then token characters) or a number.
fn stands_bare_in_header(value: &str) -> bool {
    let mut chars = value.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '*' => chars.all(is_token_char),
        Some(c) if c.is_ascii_digit() || c == '-' => is_sf_number(value),
        _ => false,
    }
}

/// An RFC 8941 integer (`-`, then 1 to 15 digits) or decimal (`-`, 1 to
/// 12 digits, `.`, 1 to 3 digits): `1.5.2` or a 16-digit run is neither,
/// and needs quoting in a header.
fn is_sf_number(value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = value.strip_prefix('-').unwrap_or(value);
    match unsigned.split_once('.') {
        Some((whole, fraction)) => {
            digits(whole) && whole.len() <= 12 && digits(fraction) && fraction.len() <= 3
        }
        None => digits(unsigned) && unsigned.len() <= 15,
    }
}

/// Whether `value` could be written bare in a call or a route file: the
/// grammar's own `token` (ASCII_ALPHA, then ASCII letters, digits, `_`,
/// `-`, `.`) or `number` (a sign, digits, at most one `.` with digits
/// after it), grammar/routex.pest. Narrower than a header token: `a/b` or
/// `a:b` must be quoted there.
fn stands_bare_in_call(value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut chars = value.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {
            chars.all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        }
        Some(_) => {
            let unsigned = value.strip_prefix(['-', '+']).unwrap_or(value);
            match unsigned.split_once('.') {
                Some((whole, fraction)) => digits(whole) && digits(fraction),
                None => digits(unsigned),
            }
        }
        None => false,
    }
}

/// `value` as a quoted string (`"` and `\` escaped).
fn quoted(value: &str) -> String {
    format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The help for `name` given the unquoted `value`, in the header form
/// (`header`) or the call and route-file form; `None` when the value is
/// empty, already quoted, or could stand bare.
pub(crate) fn help(name: &str, value: &str, header: bool) -> Option<String> {
    let value = value.trim();
    // A value holding `=` is a missing separator, not a value to quote.
    if value.is_empty()
        || value.starts_with('"')
        || value.contains('=')
        || if header {
            stands_bare_in_header(value)
        } else {
            stands_bare_in_call(value)
        }
        || value.len() > 256
    {
        return None;
    }
    let written = if header {
        format!("{name}={}", quoted(value))
    } else {
        format!("{name} = {}", quoted(value))
    };
    Some(format!(
        "quote the value: {written} (a value that starts with a digit but is not a number, or holds a character a bare word cannot, must be a quoted string)"
    ))
}

/// The help for a header-form failure at byte `at` of `raw`: the
/// parameter value it falls in, to its `;` or the end.
pub(crate) fn header_help(raw: &str, at: usize) -> Option<String> {
    let before = raw.get(..at)?;
    let segment = before.rfind(';')? + 1;
    let eq = segment + raw.get(segment..at)?.find('=')?;
    let name = raw.get(segment..eq)?.trim();
    let end = raw.get(at..)?.find(';').map_or(raw.len(), |n| at + n);
    help(name, raw.get(eq + 1..end)?, true)
}

/// The help for a call or route-file failure at byte `pos` of `text`,
/// when it falls inside a value written after `NAME =`: the value runs to
/// the next `,`, `)` or end of line.
pub(crate) fn call_help(text: &str, pos: usize) -> Option<String> {
    let before = text.get(..pos)?;
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    let line = &before[line_start..];
    let eq = line.rfind('=')?;
    // Only the value's own characters between `=` and the failure.
    let start_text = &line[eq + 1..];
    if start_text.trim().is_empty() || start_text.contains([',', '(', ')', '"']) {
        return None;
    }
    let name_text = line[..eq].trim_end();
    // The name: the trailing run of ASCII word characters (a char
    // boundary, whatever precedes it).
    let name_start = name_text
        .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
        .len();
    let name = name_text.get(name_start..)?;
    // A parameter's `=` (after `(` or `,`), not an entry's (`default = x`).
    let opens = text
        .get(..line_start + name_start)?
        .trim_end()
        .ends_with(['(', ',']);
    if name.is_empty() || !opens {
        return None;
    }
    let rest = text.get(pos..)?;
    let end = rest.find([',', ')', '\n']).unwrap_or(rest.len());
    help(name, &format!("{start_text}{}", &rest[..end]), false)
}
