//! lb-config.json: no input makes the reader panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = routex::config::check_lb_config("f.json", text);
});
