//! Signals sent to a real `csp run`: the default handling (SIGINT/SIGTERM cancel
//! the program, SIGQUIT lists the fibers), inherited ignored signals, and
//! signals received on a channel (`os.signals`).

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const CSP: &str = env!("CARGO_BIN_EXE_csp");
/// The longest any step may take before the test fails (and kills the child).
const LIMIT: Duration = Duration::from_secs(5);

/// A `csp run` of a script, its stdout read line by line as it comes.
struct Running {
    child: Child,
    script: PathBuf,
    lines: Receiver<String>,
    seen: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

/// How it ended.
struct Ended {
    code: Option<i32>,
    stdout: Vec<String>,
    stderr: String,
    took: Duration,
}

/// Starts `csp run` on `src`, with SIGINT ignored (as a shell leaves it for a
/// background job) or with the signals' default dispositions.
fn start(name: &str, src: &str, ignore_sigint: bool) -> Running {
    start_with(name, src, ignore_sigint, &[])
}

/// `start` with options given to `csp run`.
fn start_with(name: &str, src: &str, ignore_sigint: bool, flags: &[&str]) -> Running {
    let script = std::env::temp_dir().join(format!("csp_signals_{}_{name}.csp", std::process::id()));
    std::fs::write(&script, src).unwrap();
    let mut cmd = Command::new(CSP);
    cmd.arg("run").args(flags).arg(&script).env("NO_COLOR", "1").stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGQUIT] {
                libc::signal(sig, libc::SIG_DFL);
            }
            if ignore_sigint {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let (tx, lines) = channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    Running { child, script, lines, seen: Vec::new(), stderr: Some(stderr) }
}

impl Running {
    /// Waits for stdout line `want`.
    fn expect_line(&mut self, want: &str) {
        let deadline = Instant::now() + LIMIT;
        while let Ok(line) = self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            self.seen.push(line.clone());
            if line == want {
                return;
            }
        }
        panic!("no line {want:?} on stdout; saw {:?}", self.seen);
    }

    fn send(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own child.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, sig) }, 0);
    }

    /// Waits for the process to exit (within `LIMIT`).
    fn finish(mut self) -> Ended {
        let began = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(began.elapsed() < LIMIT, "csp did not exit; stdout so far {:?}", self.seen);
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = began.elapsed();
        let mut stdout = std::mem::take(&mut self.seen);
        stdout.extend(self.lines.iter());
        let stderr = self.stderr.take().map(|t| t.join().unwrap()).unwrap_or_default();
        Ended { code: status.code(), stdout, stderr, took }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A failed test leaves no process behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.script);
    }
}

fn has(lines: &[String], want: &str) -> bool {
    lines.iter().any(|l| l == want)
}

/// The main fiber holds a lock and sleeps (and rethrows the `Cancelled` it
/// gets, which then goes unreported); a child sleeps.
const CLEANUP: &str = r#"
let m = mutex()
go fn() {
    try { sleep(10000) } finally { print("child finally") }
}()
try {
    lock m {
        print("ready")
        sleep(10000)
    }
} catch err {
    print(err.kind, err.trace[len(err.trace) - 1])
    throw err
} finally {
    print("main finally")
    lock m { print("lock was released") }
}
print("not reached")
"#;

#[test]
fn sigint_cancels_the_program_and_exits_130() {
    let mut p = start("int", CLEANUP, false);
    p.expect_line("ready");
    p.send(libc::SIGINT);
    let e = p.finish();
    assert_eq!(e.code, Some(130), "stdout {:?} stderr {}", e.stdout, e.stderr);
    for line in ["cancelled cancelled by SIGINT", "main finally", "lock was released", "child finally"] {
        assert!(has(&e.stdout, line), "no {line:?} in {:?}", e.stdout);
    }
    assert!(!has(&e.stdout, "not reached"));
    assert_eq!(e.stderr, "", "a cancelled program reports nothing");
}

#[test]
fn sigterm_cancels_the_program_and_exits_143() {
    let mut p = start("term", CLEANUP, false);
    p.expect_line("ready");
    p.send(libc::SIGTERM);
    let e = p.finish();
    assert_eq!(e.code, Some(143), "stdout {:?} stderr {}", e.stdout, e.stderr);
    for line in ["cancelled cancelled by SIGTERM", "main finally", "child finally"] {
        assert!(has(&e.stdout, line), "no {line:?} in {:?}", e.stdout);
    }
    assert_eq!(e.stderr, "");
}

#[test]
fn a_second_sigint_during_a_finally_exits_at_once() {
    // The finally runs 5 s inside a lock block, where cancellation waits.
    let src = r#"
let m = mutex()
try {
    print("ready")
    sleep(10000)
} finally {
    lock m {
        print("cleaning")
        let t = now()
        while now() - t < 5000 { }
    }
    print("cleaned")
}
"#;
    let mut p = start("twice", src, false);
    p.expect_line("ready");
    p.send(libc::SIGINT);
    p.expect_line("cleaning");
    p.send(libc::SIGINT);
    let e = p.finish();
    assert_eq!(e.code, Some(130));
    assert!(e.took < Duration::from_secs(2), "took {:?}", e.took);
    assert!(!has(&e.stdout, "cleaned"));
}

/// A cancelled program's `finally` blocks run to their end (a call, a sleep, a
/// lock) but one that blocks or computes past the grace time does not keep
/// the program: it ends when `--grace` has passed.
#[test]
fn sigterm_waits_for_cleanup_within_the_grace_time_only() {
    let src = r#"
let m = mutex()
go fn() {
    try { sleep(100000) } finally {
        sleep(50)
        lock m { print("child cleaned up") }
        sleep(100000)
        print("never")
    }
}()
try {
    print("ready")
    sleep(100000)
} finally {
    print("main cleanup")
    let t = now()
    while true { }
}
"#;
    let mut p = start_with("grace", src, false, &["--grace", "400ms"]);
    p.expect_line("ready");
    let sent = Instant::now();
    p.send(libc::SIGTERM);
    let e = p.finish();
    let took = sent.elapsed();
    assert_eq!(e.code, Some(143), "stdout {:?} stderr {}", e.stdout, e.stderr);
    assert!(has(&e.stdout, "main cleanup") && has(&e.stdout, "child cleaned up"), "{:?}", e.stdout);
    assert!(!has(&e.stdout, "never"), "{:?}", e.stdout);
    assert!(e.stderr.contains("cleanup did not finish within the grace time (400ms"), "{}", e.stderr);
    assert!(took >= Duration::from_millis(350) && took < Duration::from_millis(1400), "took {took:?}");
}

#[test]
fn an_inherited_ignored_sigint_stays_ignored() {
    let src = "print(\"ready\")\nlet c = after(300)\n<-c\nprint(\"done\")\n";
    let mut p = start("ignored", src, true);
    p.expect_line("ready");
    p.send(libc::SIGINT);
    let e = p.finish();
    assert_eq!(e.code, Some(0), "stderr {}", e.stderr);
    assert!(has(&e.stdout, "done"));
    assert_eq!(e.stderr, "");
}

#[test]
fn signals_asked_for_arrive_on_a_channel() {
    // SIGINT asked for: no longer cancels the program.
    let src = r#"
import "std/os"
let sigs = os.signals("SIGUSR1", "SIGINT")
print("ready")
print("got", <-sigs)
print("got", <-sigs)
"#;
    let mut p = start("chan", src, false);
    p.expect_line("ready");
    p.send(libc::SIGUSR1);
    p.expect_line("got SIGUSR1");
    p.send(libc::SIGINT);
    let e = p.finish();
    assert_eq!(e.code, Some(0), "stderr {}", e.stderr);
    assert!(has(&e.stdout, "got SIGINT"), "{:?}", e.stdout);
}

#[test]
fn blocked_only_on_a_signal_channel_is_no_deadlock() {
    let src = "import \"std/os\"\nlet sigs = os.signals(\"SIGUSR2\")\nprint(\"ready\")\nprint(\"got\", <-sigs)\n";
    let mut p = start("nodeadlock", src, false);
    p.expect_line("ready");
    std::thread::sleep(Duration::from_millis(200));
    p.send(libc::SIGUSR2);
    let e = p.finish();
    assert_eq!(e.code, Some(0), "stderr {}", e.stderr);
    assert!(has(&e.stdout, "got SIGUSR2"));
    assert!(!e.stderr.contains("deadlock"));
}

#[test]
fn sigquit_lists_every_fiber_and_the_program_goes_on() {
    let src = r#"
let c = chan()
fn worker() { print("worker got", <-c) }
go worker()
print("ready")
sleep(300)
c <- 1
sleep(10)
print("finished")
"#;
    let mut p = start("quit", src, false);
    p.expect_line("ready");
    p.send(libc::SIGQUIT);
    let e = p.finish();
    assert_eq!(e.code, Some(0), "stderr {}", e.stderr);
    assert!(has(&e.stdout, "worker got 1") && has(&e.stdout, "finished"), "{:?}", e.stdout);
    for part in [
        "SIGQUIT",
        "main fiber blocked on sleep at",
        "fiber 1 blocked on receive from channel",
        "at worker (",
        "started at",
    ] {
        assert!(e.stderr.contains(part), "no {part:?} in:\n{}", e.stderr);
    }
}

#[test]
fn sigquit_lists_the_fibers_of_every_isolate() {
    let src = r#"
import "std/isolate"
fn spin() {
    let s = 0
    while true { s += 1 }
}
fn napper() { sleep(600000) }
let jobs = [isolate.run(spin), isolate.run(napper)]
sleep(100)
print("ready")
wait jobs
"#;
    // Workers on threads of their own, and the one worker on the main thread.
    for isolates in ["2", "1"] {
        let mut p = start_with("quit_isolates", src, false, &["--isolates", isolates]);
        p.expect_line("ready");
        p.send(libc::SIGQUIT);
        std::thread::sleep(Duration::from_millis(300));
        p.send(libc::SIGINT);
        let e = p.finish();
        for part in [
            "SIGQUIT: every fiber\n  main fiber blocked on wait on task",
            "SIGQUIT: every fiber of worker isolate 1\n",
            "at spin (",
            "blocked on sleep at",
            "at napper (",
        ] {
            assert!(e.stderr.contains(part), "--isolates {isolates}: no {part:?} in:\n{}", e.stderr);
        }
        assert!(!e.stderr.contains("<isolate>"), "the driver shows:\n{}", e.stderr);
    }
}

#[test]
fn a_fiber_left_waiting_for_signals_does_not_keep_a_finished_program_alive() {
    let src = r#"
import "std/os"
let sigs = os.signals("SIGHUP")
go fn() { try { <-sigs } finally { print("handler cancelled") } }()
print("main done")
"#;
    let e = start("leftover", src, false).finish();
    assert_eq!(e.code, Some(0), "stderr {}", e.stderr);
    assert_eq!(e.stdout, ["main done", "handler cancelled"]);
}

/// The example that cleans up on Ctrl-C: it takes SIGINT on a channel, cancels
/// its workers (each closes its file in a `finally`), removes its scratch
/// folder and exits 130.
#[test]
fn the_cleanup_example_cleans_up_on_sigint() {
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cleanup_on_interrupt.csp")).unwrap();
    // Many rounds, so that it is still working when the signal comes.
    let src = src.replace("let rounds = len(args()) > 0 ? int(args()[0]) : 5", "let rounds = 500");
    let mut p = start("example", &src, false);
    p.expect_line("started 4 workers");
    std::thread::sleep(Duration::from_millis(100));
    p.send(libc::SIGINT);
    let e = p.finish();
    assert_eq!(e.code, Some(130), "stdout {:?} stderr {}", e.stdout, e.stderr);
    assert!(has(&e.stdout, "got SIGINT: stopping the workers"), "{:?}", e.stdout);
    assert!(has(&e.stdout, "scratch folder removed: true"), "{:?}", e.stdout);
    assert_eq!(e.stderr, "");
}

/// Ctrl-C kills the child processes the program started.
#[test]
fn sigint_kills_child_processes() {
    let src =
        "import \"std/proc\"\nlet p = proc.spawn([\"sleep\", \"30\"])\nprint(p.pid)\nprint(\"ready\")\np.wait()\n";
    let mut p = start("children", src, false);
    p.expect_line("ready");
    let pid: i32 = p.seen[p.seen.len() - 2].parse().unwrap();
    p.send(libc::SIGINT);
    let e = p.finish();
    assert_eq!(e.code, Some(130), "stdout {:?} stderr {}", e.stdout, e.stderr);
    // Gone, or (where nothing reaps orphans) a zombie: not running.
    let began = Instant::now();
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let running = state.as_deref().is_some_and(|s| !s.split(") ").nth(1).unwrap_or("").starts_with('Z'));
        if !running {
            break;
        }
        assert!(began.elapsed() < LIMIT, "child {pid} still runs: {state:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
