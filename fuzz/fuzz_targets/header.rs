//! Header form: no panic; whatever `fmt --header` prints passes the header
//! rules again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(expr) = routex::syntax::parse_header(text) {
        if let Ok(printed) = routex::syntax::print_header(&expr) {
            assert!(routex::syntax::parse_header(&printed).is_ok(), "{printed:?}");
        }
    }
    let _ = routex::syntax::format_expression(text, true);
});
