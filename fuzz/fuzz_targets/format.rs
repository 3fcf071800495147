//! The `format` text parser (`csp::sandbox::text`, docs/fuzzing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| csp::sandbox::text("format", data));
