//! Isolates (docs/isolates.md) through the real binary: worker threads, each
//! with its own VM; values copied across, functions re-linked, errors with
//! both stacks, cancellation reaching the worker's `finally`, deadlocks and
//! the program's end seen across isolates, and the command line's settings.

mod common;

use common::{ok, run, run_sh};
use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

#[test]
fn results_come_back_in_order_with_the_main_scripts_globals_copied() {
    let out = ok(
        "iso_map",
        r#"
import "std/isolate"
let scale = 3
fn f(x) { return x * scale }
print(isolate.map(f, 0..20))
scale = 10
print(wait isolate.run(f, 4))
print(isolate.map(f, [], {workers: 1}), isolate.count() >= 1)
"#,
    );
    let want: Vec<String> = (0..20).map(|x| (x * 3).to_string()).collect();
    assert_eq!(out, format!("[{}]\n40\n[] true\n", want.join(", ")));
}

#[test]
fn copies_keep_shared_parts_and_cycles_and_never_alias() {
    let out = ok(
        "iso_copy",
        r#"
import "std/isolate"
let inner = [1]
let outer = [inner, inner, {"k": inner}]
outer.push(outer)
fn touch(v) {
    v[0].push(2)
    return [v[0] is v[1], v[0] is v[2].k, v[3] is v, v[1]]
}
print(wait isolate.run(touch, outer))
print(inner, len(outer))
fn counter() {
    let n = 0
    return [fn() { n += 1; return n }, fn() => n]
}
let fs = counter()
print(wait isolate.run(fn(inc, get) { inc(); inc(); return get() }, fs[0], fs[1]), fs[1]())
"#,
    );
    assert_eq!(out, "[true, true, true, [1, 2]]\n[1] 4\n2 0\n");
}

#[test]
fn a_module_loads_once_per_isolate_and_the_main_script_never_reruns() {
    let dir = std::env::temp_dir().join(format!("csp_iso_mod_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("counter.csp"), "print(\"loaded\")\nlet hits = 0\nfn hit() { hits += 1; return hits }\n")
        .unwrap();
    let main = dir.join("main.csp");
    std::fs::write(
        &main,
        r#"
import "std/isolate"
import "./counter.csp" as counter
print("main")
print(wait isolate.run(counter.hit), wait isolate.run(counter.hit), counter.hit())
"#,
    )
    .unwrap();
    let out = Command::new(CSP).args(["--isolates", "1", "run"]).arg(&main).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Loaded in the main isolate and once in the worker; the worker's
    // counter is its own.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "loaded\nmain\nloaded\n1 2 1\n");
}

#[test]
fn an_error_is_rethrown_with_both_stacks() {
    let (code, out, err) = run(
        "iso_error",
        r#"
import "std/isolate"
fn inner(x) { throw error("bad ${x}") }
fn outer(x) { return inner(x) }
try { wait isolate.run(outer, 1) } catch e { print(e.kind, e.message) }
try { isolate.map(fn(x) { if x == 5 { throw error("five") }; return x }, 0..40) } catch e { print(e.message) }
wait isolate.run(outer, 2)
"#,
    );
    assert_eq!(out, "user bad 1\nfive\n");
    assert_eq!(code, 1, "{err}");
    for want in ["bad 2", "at inner (", "at outer (", "worker isolate", "iso_error.csp:7"] {
        assert!(err.contains(want), "no {want:?} in:\n{err}");
    }
}

#[test]
fn what_cannot_cross_fails_at_the_call_with_its_place() {
    let (code, out, err) = run(
        "iso_cross",
        r#"
import "std/isolate"
try { isolate.run(print, [1, {"m": mutex()}]) } catch e { print(e.kind, e.message) }
try { wait isolate.run(fn() => mutex()) } catch e { print(e.kind, e.message) }
let mu = mutex()
fn uses() { return mu }
isolate.run(uses)
"#,
    );
    assert_eq!(
        out,
        "type isolate.run(): a mutex cannot cross to another isolate (at argument 1[1].m)\n\
         type the result of isolate.run's function: a mutex cannot cross to another isolate (at the result)\n"
    );
    assert_eq!(code, 1);
    assert!(err.contains("a mutex cannot cross to another isolate (at the global mu)"), "{err}");
    assert!(err.contains("iso_cross.csp:7"), "{err}");
}

#[test]
fn cancelling_the_task_runs_the_workers_finally_blocks() {
    let out = ok(
        "iso_cancel",
        r#"
import "std/isolate"
fn slow() {
    try { sleep(20000); print("not reached") } finally { print("cleanup ran") }
}
let t = isolate.run(slow)
sleep(50)
let began = now()
t.cancel()
try { wait t } catch e { print(e.kind, now() - began < 5000) }
"#,
    );
    assert_eq!(out, "cleanup ran\ncancelled true\n");
}

#[test]
fn a_job_blocked_forever_is_a_deadlock_when_waited_for_and_cancelled_at_the_end() {
    let (code, _, err) = run_sh(
        "iso_deadlock",
        "",
        "import \"std/isolate\"\nfn stuck() { let c = chan(); <-c }\nwait isolate.run(stuck)\n",
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("blocked on a job on worker isolate"), "{err}");
    assert!(err.contains("blocked on receive from channel <chan 0/0> at"), "{err}");
    let out = ok(
        "iso_end",
        r#"
import "std/isolate"
fn stuck() { let c = chan(); try { <-c } finally { print("worker cleanup") } }
isolate.run(stuck)
print("main done")
"#,
    );
    assert_eq!(out, "main done\nworker cleanup\n");
}

#[test]
fn timeout_cancels_work_on_other_isolates() {
    let script = common::Script::new(
        "iso_timeout.csp",
        "import \"std/isolate\"\nfn spin(x) { while true {} }\nisolate.map(spin, [1, 2, 3])\n",
    );
    let began = std::time::Instant::now();
    let out = Command::new(CSP).args(["--timeout", "300", "run", script.path()]).output().unwrap();
    assert_eq!(out.status.code(), Some(124), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(began.elapsed() < std::time::Duration::from_secs(5), "{:?}", began.elapsed());
}

#[test]
fn the_pool_size_comes_from_the_flag_or_the_environment() {
    let script = common::Script::new("iso_count.csp", "import \"std/isolate\"\nprint(isolate.count())\n");
    let count = |args: &[&str], env: Option<&str>| {
        let mut c = Command::new(CSP);
        c.args(args).arg("run").arg(script.path()).env_remove("CSP_ISOLATES");
        if let Some(e) = env {
            c.env("CSP_ISOLATES", e);
        }
        let out = c.output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).to_string();
    assert_eq!(count(&[], None), (Some(0), cores));
    assert_eq!(count(&["--isolates", "3"], None), (Some(0), "3".into()));
    assert_eq!(count(&[], Some("5")), (Some(0), "5".into()));
    assert_eq!(count(&["--isolates", "2"], Some("5")), (Some(0), "2".into()));
    for bad in [&["--isolates", "0"][..], &["--isolates", "x"]] {
        assert_eq!(count(bad, None).0, Some(64));
    }
    assert_eq!(count(&[], Some("0")).0, Some(64));
}

/// Many small jobs from many fibers at once, repeated: a race between the
/// sender, the worker and the wake-ups would lose or hang one.
#[test]
fn many_jobs_from_many_fibers_all_come_back() {
    for _ in 0..5 {
        let out = ok(
            "iso_stress",
            r#"
import "std/isolate"
fn f(x) { if x % 7 == 0 { sleep(1) }; return x * 2 }
let results = [nil] * 200
wait {
    for i in 0..200 {
        go { results[i] = wait isolate.run(f, i) }
    }
}
let want = [i * 2 for i in 0..200]
print(results == want)
let t = isolate.run(fn() { sleep(10000) })
t.cancel()
try { wait t } catch e { print(e.kind) }
"#,
        );
        assert_eq!(out, "true\ncancelled\n");
    }
}

#[test]
fn a_dropped_run_propagates_its_failure_at_once() {
    let began = std::time::Instant::now();
    let (code, out, err) = run(
        "iso_dropped",
        "import \"std/isolate\"\nfn boom() { throw error(\"remote failure\") }\nisolate.run(boom)\nsleep(20000)\nprint(\"not reached\")\n",
    );
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("remote failure") && err.contains("iso_dropped.csp:3:1"), "{err}");
    assert!(began.elapsed() < std::time::Duration::from_secs(10), "{:?}", began.elapsed());
}

#[test]
fn sigterm_runs_the_cleanup_of_work_on_other_isolates() {
    let script = common::Script::new(
        "iso_sigterm.csp",
        "import \"std/isolate\"\nfn slow() { try { sleep(20000) } finally { print(\"worker cleanup\") } }\n\
         let t = isolate.run(slow)\nsleep(100)\nprint(\"ready\")\ntry { wait t } finally { print(\"main cleanup\") }\n",
    );
    let mut child =
        Command::new(CSP).args(["run", script.path()]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 6];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    assert_eq!(&first, b"ready\n");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let mut lines: Vec<&str> = rest.lines().collect();
    lines.sort();
    assert_eq!(lines, ["main cleanup", "worker cleanup"]);
}
