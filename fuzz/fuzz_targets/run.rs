//! Compile and run in the sandbox, under `csp::sandbox::BUDGET`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        // ASan's larger frames need more than the plain 256 KiB.
        csp::sandbox::on_stack(4 * csp::sandbox::STACK, || {
            csp::sandbox::run(src);
        });
    }
});
