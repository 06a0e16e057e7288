//! Route files: no panic, spans inside the text; fmt is idempotent.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (_, diags) = routex::syntax::parse_route_file(text);
    for d in &diags {
        assert!(d.span.start <= d.span.end && d.span.end <= text.len(), "{d:?}");
    }
    if let Ok(formatted) = routex::syntax::format_route_file(text) {
        let again = routex::syntax::format_route_file(&formatted);
        assert_eq!(again.as_deref(), Ok(formatted.as_str()));
    }
});
