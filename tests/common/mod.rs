//! Running the real `csp` binary on a script, for the integration tests of
//! processes and sockets.

#![allow(dead_code)] // each test crate uses some of the helpers

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// csp source for `fds()`: how many descriptors the csp process has open.
pub const FDS: &str = "import \"std/fs\"\nfn fds() { return len(fs.list(\"/proc/self/fd\")) }\n";

/// True when `tool --version` runs; otherwise says that `what` was skipped
/// (or, when the environment variable `CI` is set, fails: CI installs it).
pub fn have(tool: &str, what: &str, install: &str) -> bool {
    if matches!(Command::new(tool).arg("--version").output(), Ok(o) if o.status.success()) {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("`{tool}` is not installed but CI is set, so {what} cannot be skipped: {install}");
    }
    eprintln!("skipped {what}: `{tool}` not found; {install}");
    false
}

/// Runs `src` from a temporary file; (exit code, stdout, stderr).
pub fn run(tag: &str, src: &str) -> (i32, String, String) {
    run_with(tag, None, src)
}

/// `run` through `/bin/sh` after the commands `sh` (such as `ulimit -n 64;`),
/// killed after a minute (exit 137) so that a hang fails the test.
pub fn run_sh(tag: &str, sh: &str, src: &str) -> (i32, String, String) {
    run_with(tag, Some(sh), src)
}

/// A file under the temp dir holding `src` (a script, or data a script
/// reads), its name ending in `name`; removed on drop.
pub struct Script(PathBuf);

impl Script {
    pub fn new(name: &str, src: &str) -> Script {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("csp_{}_{n}_{name}", std::process::id()));
        std::fs::write(&path, src).unwrap();
        Script(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn run_with(tag: &str, sh: Option<&str>, src: &str) -> (i32, String, String) {
    let script = Script::new(&format!("{tag}.csp"), src);
    let path = script.path();
    let mut cmd = match sh {
        None => Command::new(CSP),
        Some(sh) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(format!("{sh} exec timeout -s KILL 60 \"$0\" \"$@\"")).arg(CSP);
            c
        }
    };
    let out = cmd.arg("run").arg(path).env("NO_COLOR", "1").output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `run`, which must exit 0; its stdout.
pub fn ok(tag: &str, src: &str) -> String {
    check(run(tag, src))
}

/// `run_sh`, which must exit 0; its stdout.
pub fn ok_sh(tag: &str, sh: &str, src: &str) -> String {
    check(run_sh(tag, sh, src))
}

fn check((code, out, err): (i32, String, String)) -> String {
    assert_eq!(code, 0, "exit {code}\nstdout:\n{out}\nstderr:\n{err}");
    out
}

/// Every `*.csp` file under `dir`, in sorted order, appended to `out`.
pub fn csp_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            csp_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "csp") {
            out.push(p);
        }
    }
}

/// Runs `csp ARGS` and returns its exit code, its stdout, and its peak
/// resident size in KB (from `wait4`). A child's peak counts its parent's
/// until it execs (the kernel keeps the larger): measure from a small process.
#[allow(clippy::zombie_processes)] // reaped by wait4, which reports its rusage
pub fn peak_kb(args: &[&str]) -> (i32, String, i64) {
    use std::io::Read;
    let mut child = Command::new(CSP).args(args).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let (code, peak) = reap(child);
    (code, out, peak)
}

/// Waits for `child`: its exit code (128 + the signal that ended it) and
/// its peak resident size in KB (from `wait4`).
#[allow(clippy::zombie_processes)] // reaped by wait4, which reports its rusage
pub fn reap(child: std::process::Child) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: plain data filled in by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for our own child; the pointers are to live locals.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
    (code, usage.ru_maxrss)
}
