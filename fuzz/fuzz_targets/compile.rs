//! Parse, compile and `csp check` in a sandboxed VM (std-only imports).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        csp::sandbox::on_stack(csp::sandbox::STACK, || csp::sandbox::compile(src));
    }
});
