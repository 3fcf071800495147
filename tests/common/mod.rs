#![allow(dead_code)] // each test crate uses some of these
//! Running the real `csp` binary on a script, for the integration tests of
//! processes and sockets.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// csp source for `fds()`: how many descriptors the csp process has open.
pub const FDS: &str = "import \"std/fs\"\nfn fds() { return len(fs.list(\"/proc/self/fd\")) }\n";

/// Runs `src` from a temporary file; (exit code, stdout, stderr).
pub fn run(tag: &str, src: &str) -> (i32, String, String) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let path = std::env::temp_dir().join(format!("csp_{tag}_{}_{n}.csp", std::process::id()));
    std::fs::write(&path, src).unwrap();
    let out = Command::new(CSP).arg("run").arg(&path).env("NO_COLOR", "1").output().unwrap();
    let _ = std::fs::remove_file(&path);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `run`, which must exit 0; its stdout.
pub fn ok(tag: &str, src: &str) -> String {
    let (code, out, err) = run(tag, src);
    assert_eq!(code, 0, "exit {code}\nstdout:\n{out}\nstderr:\n{err}");
    out
}
