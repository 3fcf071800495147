//! Children and the end of the program (docs/os.md, "Processes"): every way out
//! kills what the program started, its children's children too, and reaps the
//! children, so none is left running or a zombie.
//!
//! csp runs under a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`): whatever
//! it leaves behind is handed to the subreaper instead of init, where the test
//! can see it in /proc. The subreaper is this test binary started again in
//! `wrapper` mode, a process of its own, so the parallel tests' orphans do not
//! mix.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CSP: &str = env!("CARGO_BIN_EXE_csp");
const WRAPPER_ENV: &str = "CSP_TEST_SUBREAPER_ARGS";

/// A process as /proc shows it: pid, state letter, parent.
#[derive(Debug, Clone)]
struct Ps {
    pid: u32,
    state: char,
    ppid: u32,
}

fn ps(pid: u32) -> Option<Ps> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    Some(Ps { pid, state: f[0].chars().next()?, ppid: f[1].parse().ok()? })
}

fn all_ps() -> Vec<Ps> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter_map(ps).collect()
}

/// The wrapper: made a subreaper, it runs csp with the arguments it was given
/// (sending SIGTERM after csp's first line of output when asked), and when csp
/// has exited reports csp's output and every process handed to it: at once,
/// then the ones still running after a grace of two seconds (a group's
/// members die a moment after the SIGKILL). It then kills and reaps them all.
#[test]
fn wrapper() {
    let Ok(args) = std::env::var(WRAPPER_ENV) else { return };
    let mut args: Vec<&str> = args.split('\u{1f}').collect();
    // "sigterm": SIGTERM after csp's first line; "sigterm2": a second one 300 ms later.
    let terms = match args[0] {
        "sigterm" => 1,
        "sigterm2" => 2,
        _ => 0,
    };
    args.remove(0);
    // SAFETY: prctl on this process; the flag survives nothing but this process.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0);
    let mut child =
        Command::new(CSP).args(&args).env("NO_COLOR", "1").stdout(Stdio::piped()).spawn().expect("csp starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 {
        if terms > 0 && lines.is_empty() {
            let pid = child.id() as i32;
            // SAFETY: kill(2) on our own unreaped child (csp holds its stdout
            // open until it exits, so it is not reaped before the second).
            unsafe { libc::kill(pid, libc::SIGTERM) };
            if terms == 2 {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                });
            }
        }
        lines.push(line.trim_end().to_string());
        line.clear();
    }
    let status = child.wait().unwrap();
    let me = std::process::id();
    let orphans = |state: fn(char) -> bool| -> Vec<String> {
        all_ps().iter().filter(|p| p.ppid == me && state(p.state)).map(|p| format!("{}:{}", p.pid, p.state)).collect()
    };
    // After libtest's "test wrapper ... ", on a line of its own.
    println!();
    println!("SUBREAPER exit {}", status.code().unwrap_or(-1));
    for l in &lines {
        println!("SUBREAPER out {l}");
    }
    println!("SUBREAPER orphans {}", orphans(|_| true).join(" "));
    let until = Instant::now() + Duration::from_secs(2);
    while !orphans(|s| s != 'Z').is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("SUBREAPER running {}", orphans(|s| s != 'Z').join(" "));
    for p in all_ps().iter().filter(|p| p.ppid == me) {
        // SAFETY: kill(2) and waitpid(2) on processes handed to this subreaper.
        unsafe {
            libc::kill(p.pid as i32, libc::SIGKILL);
            libc::waitpid(p.pid as i32, std::ptr::null_mut(), 0);
        }
    }
}

/// What the wrapper saw: csp's exit code, its stdout lines, the processes left
/// to the subreaper when csp had exited (`pid:state`), and those still running
/// two seconds later.
struct Seen {
    code: i32,
    out: Vec<String>,
    orphans: Vec<String>,
    running: Vec<String>,
}

fn under_subreaper(mode: &str, csp_args: &[&str]) -> Seen {
    let me = std::env::current_exe().unwrap();
    let mut args = vec![mode];
    args.extend_from_slice(csp_args);
    let out = Command::new(me)
        .args(["--exact", "wrapper", "--nocapture", "--test-threads=1"])
        .env(WRAPPER_ENV, args.join("\u{1f}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut seen = Seen { code: -1, out: Vec::new(), orphans: Vec::new(), running: Vec::new() };
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    for l in text.lines() {
        let Some(l) = l.strip_prefix("SUBREAPER ") else { continue };
        let (what, rest) = l.split_once(' ').unwrap_or((l, ""));
        match what {
            "exit" => seen.code = rest.parse().unwrap(),
            "out" => seen.out.push(rest.to_string()),
            "orphans" => seen.orphans = words(rest),
            "running" => seen.running = words(rest),
            _ => {}
        }
    }
    assert!(seen.code != -1, "the wrapper did not report:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    seen
}

/// Starts a direct child (`sleep`) and a shell with a child of its own, prints
/// their pids, then ends the program by `end`.
fn script(end: &str) -> String {
    format!(
        r#"import "std/proc"
let a = proc.spawn(["sleep", "30"])
let b = proc.spawn("sleep 30; echo never", {{shell: true}})
print("pids", a.pid, b.pid)
{end}
"#
    )
}

/// csp's children must be gone (reaped by csp, so not even a zombie handed
/// on), and nothing they started may still run.
fn assert_clean(how: &str, seen: &Seen) {
    let pids: Vec<&str> =
        seen.out.iter().find_map(|l| l.strip_prefix("pids ")).expect("pids line").split(' ').collect();
    for pid in pids {
        assert!(
            !seen.orphans.iter().any(|o| o.split(':').next() == Some(pid)),
            "{how}: child {pid} was left to the subreaper (orphans {:?})",
            seen.orphans
        );
    }
    assert!(seen.running.is_empty(), "{how}: still running after csp exited: {:?}", seen.running);
}

#[test]
fn every_way_out_kills_and_reaps_children() {
    let ends = [
        ("normal end", "", 0),
        ("uncaught error", "let xs = []\nprint(xs[3])", 1),
        ("exit(0)", "exit(0)", 0),
        ("exit(3) from a fiber", "go fn() { exit(3) }()\nsleep(10000)", 3),
        ("a deadlock", "let c = chan()\n<-c", 3),
    ];
    for (how, end, code) in ends {
        let s = common::Script::new("end.csp", &script(end));
        let seen = under_subreaper("plain", &["run", s.path()]);
        assert_eq!(seen.code, code, "{how}: exit code");
        assert_clean(how, &seen);
    }
}

/// `--timeout` and SIGTERM cancel the program; both end it with the children gone.
#[test]
fn timeout_and_sigterm_kill_and_reap_children() {
    let s = common::Script::new("end.csp", &script("sleep(10000)"));
    let seen = under_subreaper("plain", &["run", "--timeout", "300ms", s.path()]);
    assert_eq!(seen.code, 124, "--timeout exit code");
    assert_clean("--timeout", &seen);
    // Cleanup that outlasts --timeout's grace: the process ends at once, still without leftovers.
    let s = common::Script::new("end.csp", &script("try { sleep(10000) } finally { for i in 0..1000000000 { } }"));
    let seen = under_subreaper("plain", &["run", "--timeout", "300ms", s.path()]);
    assert_eq!(seen.code, 124, "--timeout after the grace: exit code");
    assert_clean("--timeout after the grace", &seen);
    let seen = under_subreaper("sigterm", &["run", s.path()]);
    assert_eq!(seen.code, 143, "SIGTERM exit code");
    assert_clean("SIGTERM", &seen);
    // A second SIGTERM while the cleanup runs ends the process at once, still without leftovers.
    let seen = under_subreaper("sigterm2", &["run", s.path()]);
    assert_eq!(seen.code, 143, "second SIGTERM exit code");
    assert_clean("a second SIGTERM", &seen);
}

/// csp source for `running(secs)`: how many `sleep SECS` processes are running
/// (not zombies), read from /proc; each test sleeps for its own odd time.
const RUNNING: &str = r#"import "std/fs"
fn running(secs) {
    let n = 0
    for d in fs.list("/proc") {
        if !d.is_digit() { continue }
        try {
            let stat = fs.read("/proc/${d}/stat")
            let state = stat.slice(stat.rfind(")") + 2).split(" ")[0]
            if fs.read("/proc/${d}/cmdline") == "sleep\0${secs}\0" && state != "Z" { n += 1 }
        } catch e { if e.kind != "io" { throw e } }
    }
    return n
}
"#;

/// A timeout or a cancellation kills the child's whole process group: a
/// shell's own children do not go on running, holding the pipes.
#[test]
fn timeout_and_cancellation_kill_the_group() {
    let out = common::ok(
        "group",
        &format!(
            r#"import "std/proc"
{RUNNING}
let started = now()
try {{ proc.run("sleep 30.1; echo x", {{shell: true, timeout: 300}}) }} catch e {{ print(e.kind) }}
print(now() - started < 3000)
sleep(100)
print(running("30.1"))
let t = go fn() {{ proc.spawn("sleep 30.2; echo x", {{shell: true}}).wait() }}()
sleep(200)
print(running("30.2"))
t.cancel()
try {{ wait t }} catch e {{ print(e.kind) }}
sleep(100)
print(running("30.2"))
let q = proc.spawn("sleep 30.3; echo x", {{shell: true}})
sleep(200)
q.kill()
print(q.wait().signal)
sleep(100)
print(running("30.3"))
"#
        ),
    );
    assert_eq!(out, "timeout\ntrue\n0\n1\ncancelled\n0\nSIGTERM\n0\n");
}

/// A daemon that must outlive the program leaves csp's reach by starting a
/// session of its own (`setsid -f`): the program's end does not kill it.
#[test]
fn a_setsid_daemon_outlives_the_program() {
    let s = common::Script::new(
        "daemon.csp",
        r#"import "std/proc"
print("pids", proc.spawn(["setsid", "-f", "sleep", "30.4"]).pid)
sleep(100)
"#,
    );
    let seen = under_subreaper("plain", &["run", s.path()]);
    assert_eq!(seen.code, 0);
    assert_eq!(seen.running.len(), 1, "the daemon runs on: {:?}", seen.running);
}

/// Under a terminal, a child that inherits it as stdin stays in the terminal's
/// foreground group (csp's), so it can read it and take Ctrl-C; one that does
/// not read the terminal leads a group of its own. `script` gives csp a
/// terminal.
#[test]
fn a_child_reading_the_terminal_stays_in_the_foreground() {
    if Command::new("script").arg("--version").output().is_err() {
        let install = "install util-linux's `script` (Debian: apt-get install bsdutils)";
        assert!(std::env::var_os("CI").is_none(), "`script` is missing but CI is set: {install}");
        eprintln!("skipped the terminal test: `script` not found; {install}");
        return;
    }
    let s = common::Script::new(
        "tty.csp",
        r#"import "std/proc"
import "std/fs"
import "std/os"
fn fields(stat) { return stat.slice(stat.rfind(")") + 2).split(" ") }
let terminal = fields(fs.read("/proc/${os.pid()}/stat"))[5]
for stdin in ["inherit", "null"] {
    let p = proc.spawn(["cat", "/proc/self/stat"], {stdin: stdin})
    let f = fields(p.stdout.read_text())
    p.wait()
    print(stdin, f[2] == terminal ? "foreground" : f[2] == str(p.pid) ? "own group" : "other ${f[2]}")
}
"#,
    );
    let out = Command::new("script")
        .args(["-qec", &format!("{CSP} run {}", s.path()), "/dev/null"])
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert_eq!(text, "inherit foreground\nnull own group\n", "{}", String::from_utf8_lossy(&out.stderr));
}
