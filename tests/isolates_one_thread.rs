//! `--isolates 1` (docs/isolates.md): the one worker runs on the main
//! isolate's thread, stepped between its slices, and the program behaves as
//! with a worker thread: the same output, timers on both sides, the
//! program's end, deadlocks and `--max-memory`.

mod common;

use common::Script;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// Runs `src` with `csp ARGS run`: its exit code, stdout and stderr.
fn csp(args: &[&str], src: &str) -> (i32, String, String) {
    let script = Script::new("one.csp", src);
    // Killed after a minute (exit 124), so that a hang fails the test.
    let mut c = Command::new("timeout");
    c.args(["60", CSP]).args(args).arg("run").arg(script.path()).env("NO_COLOR", "1");
    let out = c.output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

/// The names of the process's threads while its job runs.
fn threads_while_a_job_runs(isolates: &str) -> Vec<String> {
    let script = Script::new(
        "threads.csp",
        r#"
import "std/isolate"
fn nap() { print("job running"); sleep(400); return "job done" }
print(wait isolate.run(nap))
"#,
    );
    let mut child = Command::new(CSP)
        .args(["--isolates", isolates, "run"])
        .arg(script.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "job running");
    let dir = format!("/proc/{}/task", child.id());
    let names = std::fs::read_dir(dir)
        .unwrap()
        .map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).unwrap().trim().to_string())
        .collect();
    assert_eq!(lines.next().unwrap().unwrap(), "job done");
    assert!(child.wait().unwrap().success());
    names
}

#[test]
fn one_isolate_runs_its_worker_on_the_main_thread() {
    let worker = |names: &[String]| names.iter().filter(|n| n.starts_with("csp-isolate")).count();
    assert_eq!(worker(&threads_while_a_job_runs("1")), 0);
    // (The second worker's thread may not have named itself yet.)
    assert!(worker(&threads_while_a_job_runs("2")) >= 1);
}

#[test]
fn the_examples_print_the_same_on_one_thread() {
    let root = env!("CARGO_MANIFEST_DIR");
    for name in ["parallel_primes", "parallel_runner", "pipeline_across_cores"] {
        let out = Command::new(CSP)
            .args(["--isolates", "1", "run", &format!("examples/{name}.csp")])
            .current_dir(root)
            .output()
            .unwrap();
        let want = std::fs::read_to_string(format!("{root}/examples/{name}.out")).unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{name}");
        assert!(out.status.success(), "{name}");
    }
}

#[test]
fn the_main_isolates_timers_run_while_the_worker_computes() {
    let (code, out, err) = csp(
        &["--isolates", "1"],
        r#"
import "std/isolate"
fn fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }
let t = isolate.run(fib, 32)
go { for i in 0..3 { sleep(5); print("tick ${i}") } }
print(wait t)
"#,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "tick 0\ntick 1\ntick 2\n2178309\n");
}

#[test]
fn a_fiber_a_job_left_behind_can_still_wake_the_main_fiber() {
    // Not a deadlock: the worker's fiber sends after its sleep.
    let src = r#"
import "std/isolate"
fn later(c) {
    go { sleep(50); c <- 42 }
    return 1
}
let c = chan()
isolate.run(later, c)
print(<-c)
"#;
    for n in ["1", "2"] {
        let (code, out, err) = csp(&["--isolates", n], src);
        assert_eq!((code, out.as_str()), (0, "42\n"), "--isolates {n}: {err}");
    }
}

#[test]
fn a_deadlock_through_the_worker_on_one_thread_is_reported() {
    let (code, _, err) = csp(
        &["--isolates", "1"],
        r#"
import "std/isolate"
fn stuck(c) { return <-c }
let c = chan()
print(wait isolate.run(stuck, c))
"#,
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("a job on worker isolate 1") && err.contains("receive from channel"), "{err}");
}

#[test]
fn sigterm_ends_the_worker_on_one_thread_with_its_cleanup() {
    let script = Script::new(
        "one_term.csp",
        r#"
import "std/isolate"
fn spin() {
    try { let i = 0; print("spinning"); while true { i += 1 } } finally { print("worker cleanup") }
}
let t = isolate.run(spin)
try { wait t } finally { print("main cleanup") }
"#,
    );
    let mut child = Command::new(CSP)
        .args(["--isolates", "1", "run"])
        .arg(script.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "spinning");
    std::thread::sleep(Duration::from_millis(100));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(rest.contains(&"worker cleanup".to_string()) && rest.contains(&"main cleanup".to_string()), "{rest:?}");
}

#[test]
fn a_main_fiber_blocked_on_a_local_channel_is_deadlocked_whatever_workers_do() {
    // The fiber the job left keeps its worker busy for ever; the main
    // fiber's channel never crossed, so no worker can wake it.
    let src = r#"
import "std/isolate"
fn start() {
    go { while true { sleep(10) } }
    return 1
}
print(wait isolate.run(start))
let c = chan()
<-c
"#;
    for n in ["1", "2"] {
        let (code, out, err) = csp(&["--isolates", n], src);
        assert_eq!((code, out.as_str()), (3, "1\n"), "--isolates {n}: {err}");
        assert!(err.contains("main fiber blocked on receive"), "{err}");
    }
}
