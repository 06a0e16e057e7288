//! Call form: no panic; what fmt prints parses and formats to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = routex::syntax::parse_call(text);
    if let Ok(printed) = routex::syntax::format_expression(text, false) {
        let again = routex::syntax::format_expression(&printed, false);
        assert_eq!(again.as_deref(), Ok(printed.as_str()));
    }
});
