//! `--trace FILE` (docs/trace.md): the file is a Chrome trace document however
//! the program ends; tracks are named after fibers' `go`s, blocked slices say
//! on what, flows join a waker to the fiber it woke; `csp test` traces too.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::Script;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A temp dir removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("csp_trace_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn csp(args: &[&str]) -> Output {
    Command::new(CSP).args(args).env("NO_COLOR", "1").output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The trace's events, after checking the file is one JSON document.
fn events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    doc["traceEvents"].as_array().expect("traceEvents").clone()
}

/// `csp run --trace` of `src`; (exit code, stderr, events).
fn traced(tag: &str, src: &str) -> (i32, String, Vec<Value>) {
    let dir = Dir::new(tag);
    let script = dir.join("main.csp");
    std::fs::write(&script, src).unwrap();
    let out = dir.join("trace.json");
    let o = csp(&["run", "--trace", out.to_str().unwrap(), script.to_str().unwrap()]);
    (code(&o), stderr(&o), events(&out))
}

/// The tid of the track named `name`.
fn track(events: &[Value], name: &str) -> Option<i64> {
    events.iter().find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == name)?["tid"].as_i64()
}

const PING: &str = "\
let ch = chan()
fn worker(c) {
    c <- 1
}
go worker(ch)
print(<-ch)
";

/// Tracks are named: `main`, and `fiber N (go F at FILE:LINE:COL)`.
#[test]
fn tracks_are_named_after_fibers_and_their_go() {
    let (code, err, ev) = traced("names", PING);
    assert_eq!(code, 0, "{err}");
    assert_eq!(track(&ev, "main"), Some(0), "{ev:#?}");
    let named: Vec<&str> =
        ev.iter().filter(|e| e["name"] == "thread_name").filter_map(|e| e["args"]["name"].as_str()).collect();
    let fiber = named.iter().find(|n| n.starts_with("fiber 1 (go worker at ")).unwrap_or_else(|| panic!("{named:?}"));
    assert!(fiber.ends_with("main.csp:5:4)"), "{fiber}");
    let process = ev.iter().find(|e| e["name"] == "process_name").expect("process_name");
    assert!(process["args"]["name"].as_str().unwrap().starts_with("csp run "), "{process}");
}

/// A slice that ended blocked is named for the operation and its args name
/// the channel (its id and capacity) and where it blocked.
#[test]
fn blocked_slices_say_on_what() {
    let (_, _, ev) = traced("blocked", PING);
    let recv = ev
        .iter()
        .find(|e| e["ph"] == "X" && e["cat"] == "block" && e["tid"] == 0)
        .unwrap_or_else(|| panic!("no blocked slice of main: {ev:#?}"));
    assert_eq!(recv["name"], "recv", "{recv}");
    assert!(recv["args"]["chan"].is_u64(), "{recv}");
    assert_eq!(recv["args"]["cap"], 0, "{recv}");
    assert!(recv["args"]["at"].as_str().unwrap().ends_with("main.csp:6:7"), "{recv}");
    assert!(recv["dur"].as_f64().unwrap() >= 0.0 && recv["ts"].as_f64().is_some(), "{recv}");
    // The other ways a slice ends.
    assert!(ev.iter().any(|e| e["ph"] == "X" && e["cat"] == "done" && e["tid"] == 1), "{ev:#?}");
    let (_, _, ev) =
        traced("blocked2", "let m = mutex()\nlock m { go { lock m {} } ; sleep(20) }\nlet s = chan()\nselect { case <-s {} case <-after(5) {} }\n");
    let names: Vec<&str> = ev.iter().filter(|e| e["cat"] == "block").filter_map(|e| e["name"].as_str()).collect();
    for want in ["lock", "sleep", "select"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let select = ev.iter().find(|e| e["name"] == "select").unwrap();
    assert_eq!(select["args"]["chans"].as_array().map(Vec::len), Some(2), "{select}");
}

/// A file the page cache holds is read on the fiber's own thread (`preadv2`
/// with `RWF_NOWAIT`): reading a just-written megabyte line by line waits on
/// the I/O pool once, to open it, where each 256 KiB read used to wait too.
#[test]
fn a_cached_file_is_read_without_waiting_on_the_pool() {
    let src = "import \"std/fs\"
let f = fs.temp_file()
write_file(f, \"a line of text\\n\" * 70000)
let n = 0
for line in fs.open(f) { n += 1 }
fs.remove(f)
print(n)
";
    let (code, err, ev) = traced("cached", src);
    assert_eq!(code, 0, "{err}");
    let waits = ev
        .iter()
        .filter(|e| e["cat"] == "block" && e["name"] == "io")
        .filter(|e| e["args"]["at"].as_str().is_some_and(|at| at.ends_with("main.csp:5:13")))
        .count();
    assert_eq!(waits, 1, "{ev:#?}");
}

/// A send that wakes a parked receiver starts a flow in the sender's slice;
/// it ends (bound to the enclosing slice) at the receiver's next slice.
#[test]
fn flows_join_a_sender_to_the_receiver_it_woke() {
    let (_, _, ev) = traced("flows", PING);
    let starts: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "s").collect();
    let pair = starts.iter().find_map(|s| {
        let f = ev.iter().find(|f| f["ph"] == "f" && f["id"] == s["id"])?;
        Some((*s, f))
    });
    let (s, f) = pair.unwrap_or_else(|| panic!("no s/f pair: {ev:#?}"));
    assert_eq!((s["tid"].as_i64(), f["tid"].as_i64()), (Some(1), Some(0)), "sender fiber 1, receiver main: {s} {f}");
    assert_eq!(f["bp"], "e");
    assert_eq!((&s["name"], &s["cat"]), (&f["name"], &f["cat"]));
    assert!(f["ts"].as_f64() >= s["ts"].as_f64(), "{s} {f}");
    // The flow starts inside a slice of the sender and ends at the start of
    // a slice of the receiver.
    let within = |e: &Value, start_only: bool| {
        let ts = e["ts"].as_f64().unwrap();
        ev.iter().any(|x| {
            let (t0, d) = (x["ts"].as_f64().unwrap_or(-1.0), x["dur"].as_f64().unwrap_or(0.0));
            x["ph"] == "X" && x["tid"] == e["tid"] && if start_only { t0 == ts } else { t0 <= ts && ts <= t0 + d }
        })
    };
    assert!(within(s, false) && within(f, true), "{ev:#?}");
}

/// The file is whole whichever way the program ends.
#[test]
fn the_file_is_json_however_the_program_ends() {
    let (code, _, ev) = traced("exit", "go { sleep(1000) }\nsleep(1)\nexit(3)\n");
    assert_eq!(code, 3);
    assert!(ev.iter().any(|e| e["ph"] == "X"));
    let (code, err, ev) = traced("error", "fn f() { throw error(\"boom\") }\nlet t = go f()\nwait t\n");
    assert_eq!(code, 1, "{err}");
    assert!(ev.iter().any(|e| e["ph"] == "X" && e["cat"] == "error"), "{ev:#?}");
    let (code, err, ev) = traced("deadlock", "let c = chan()\n<-c\n");
    assert_eq!(code, 3, "{err}");
    assert!(ev.iter().any(|e| e["name"] == "recv"), "{ev:#?}");
}

/// `--timeout` whose cleanup does not finish ends the process at once: the
/// trace is closed first.
#[test]
fn the_file_is_json_after_a_timeout_that_ends_the_process() {
    let dir = Dir::new("timeout");
    let script = dir.join("main.csp");
    // Cancellation waits for the end of a `lock` block: this cleanup never ends.
    std::fs::write(&script, "let m = mutex()\ntry { sleep(60000) } finally { lock m { while true { } } }\n").unwrap();
    let out = dir.join("trace.json");
    let o = csp(&["run", "--timeout", "50", "--trace", out.to_str().unwrap(), script.to_str().unwrap()]);
    assert_eq!(code(&o), 124, "{}", stderr(&o));
    assert!(stderr(&o).contains("cleanup did not finish"), "{}", stderr(&o));
    assert!(events(&out).iter().any(|e| e["ph"] == "X"));
}

/// Names are JSON-escaped: a file name with quotes and backslashes.
#[test]
fn names_are_escaped() {
    let dir = Dir::new("escape");
    let script = dir.join("we\"ird\\name\t.csp");
    std::fs::write(&script, PING).unwrap();
    let out = dir.join("trace.json");
    let o = csp(&["run", "--trace", out.to_str().unwrap(), script.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let ev = events(&out);
    let names: Vec<&str> = ev.iter().filter(|e| e["ph"] == "M").filter_map(|e| e["args"]["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.contains("we\"ird\\name\t.csp:5:4)")), "{names:?}");
    let at = ev.iter().find(|e| e["name"] == "recv").map(|e| e["args"]["at"].clone()).unwrap();
    assert!(at.as_str().unwrap().contains("we\"ird\\name\t.csp:6:7"), "{at}");
}

/// `csp test --trace`: one process per test file, its test fibers named.
#[test]
fn csp_test_writes_a_trace() {
    let dir = Dir::new("test");
    std::fs::write(
        dir.join("a_test.csp"),
        "import \"std/test\"\nfn test_one() { let c = chan(1)\n c <- 1\n test.eq(<-c, 1) }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b_test.csp"), "fn test_two() { sleep(1) }\n").unwrap();
    let out = dir.join("trace.json");
    let o = csp(&["test", "--trace", out.to_str().unwrap(), dir.0.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    let ev = events(&out);
    let processes: Vec<(i64, &str)> = ev
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| (e["pid"].as_i64().unwrap(), e["args"]["name"].as_str().unwrap()))
        .collect();
    assert_eq!(processes.len(), 2, "{processes:?}");
    assert!(processes[0].1.starts_with("csp test ") && processes[0].1.ends_with("a_test.csp"), "{processes:?}");
    assert_ne!(processes[0].0, processes[1].0);
    let threads: Vec<&str> =
        ev.iter().filter(|e| e["name"] == "thread_name").filter_map(|e| e["args"]["name"].as_str()).collect();
    assert!(threads.iter().any(|n| n.contains("(go test_one at ")), "{threads:?}");
    assert!(threads.iter().any(|n| n.contains("(go test_two at ")), "{threads:?}");
    // --explore's many runs are refused; one schedule is traced.
    let o = csp(&["test", "--explore", "3", "--trace", out.to_str().unwrap(), dir.0.to_str().unwrap()]);
    assert_eq!(code(&o), 64);
    assert!(stderr(&o).contains("--explore-seed"), "{}", stderr(&o));
    let o = csp(&["test", "--explore-seed", "4", "--trace", out.to_str().unwrap(), dir.0.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let ev = events(&out);
    assert!(ev
        .iter()
        .any(|e| e["name"] == "process_name" && e["args"]["name"].as_str().unwrap().contains("(schedule 4)")));
}

/// A trace file that cannot be made is a bad command line (exit 64) that
/// says why; `--trace` is refused where there is nothing to trace.
#[test]
fn bad_trace_paths_and_commands() {
    let s = Script::new("t.csp", "print(1)\n");
    let o = csp(&["run", "--trace", "/nonexistent-dir/x/trace.json", s.path()]);
    assert_eq!(code(&o), 64);
    assert!(
        stderr(&o).contains("cannot write trace /nonexistent-dir/x/trace.json: No such file or directory"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty(), "the program must not run");
    // A write that fails on the way is reported at the end; the program's
    // exit code stands.
    let o = csp(&["run", "--trace", "/dev/full", s.path()]);
    assert_eq!(code(&o), 0);
    assert!(stderr(&o).contains("cannot write trace /dev/full: No space left on device"), "{}", stderr(&o));
    let o = csp(&["check", "--trace", "/tmp/never.json", s.path()]);
    assert_eq!(code(&o), 64);
    assert!(stderr(&o).contains("--trace is for `csp run` and `csp test`"), "{}", stderr(&o));
    assert!(!Path::new("/tmp/never.json").exists());
}

/// A fiber preempted because a timer came due is not run again before the
/// timer's fiber: no slice of the spinning fiber starts between a sleep's
/// deadline and the sleeper's next slice. (Timers were delivered only every
/// few thousand ticks, so a busy fiber could take 1-3 more slices first: the
/// heartbeat lag of `benches/conc/gc_pause.csp`.)
#[test]
fn a_due_timer_runs_its_fiber_before_the_busy_one_runs_again() {
    let src = "\
fn spin() {
    let t0 = now()
    let xs = []
    while now() - t0 < 300 {
        xs = [xs, 1]
    }
}
let t = go spin()
sleep(2)
for i in 0..20 { sleep(3) }
wait t
";
    let (code, err, ev) = traced("timer_due", src);
    assert_eq!(code, 0, "{err}");
    let mut slices: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
    slices.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    let end = |e: &Value| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap();
    let (mut sleeps, mut late) = (0, Vec::<&Value>::new());
    for (i, s) in slices.iter().enumerate() {
        if s["tid"] != 0 || s["name"] != "sleep" {
            continue;
        }
        // The deadline is at most this (the sleep began before the slice ended).
        let due = end(s) + 3000.0;
        let Some(j) = slices[i + 1..].iter().position(|x| x["tid"] == 0) else { continue };
        late.extend(slices[i + 1..i + 1 + j].iter().filter(|x| x["ts"].as_f64().unwrap() >= due));
        sleeps += 1;
    }
    assert!(sleeps >= 15, "{sleeps} sleeps seen");
    // One late slice is allowed for the operating system's own preemption
    // between the slice's last clock reading and the next slice's start (the
    // tests run in parallel on two cores); without delivery at the slice's
    // end, most sleeps see one to three.
    assert!(late.len() <= 1, "{} slices after main's timer was due: {late:#?}", late.len());
}

/// A job, its answer and values on a shared channel cross between isolates.
const ISOLATES: &str = "\
import \"std/isolate\"

fn fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }

fn squares(out, n) {
    for i in 0..n { out <- i * i }
    close(out)
}

print(wait isolate.run(fib, 15))
let ch = chan()
isolate.run(squares, ch, 3)
for v in ch { print(v) }
";

/// `csp run --isolates N --trace` of `src`; (exit code, stderr, events).
fn traced_isolates(tag: &str, n: &str, src: &str) -> (i32, String, Vec<Value>) {
    let dir = Dir::new(tag);
    let script = dir.join("main.csp");
    std::fs::write(&script, src).unwrap();
    let out = dir.join("trace.json");
    let o = csp(&["run", "--isolates", n, "--trace", out.to_str().unwrap(), script.to_str().unwrap()]);
    (code(&o), stderr(&o), events(&out))
}

/// Each process's name, by pid.
fn processes(ev: &[Value]) -> Vec<(i64, String)> {
    let named = ev.iter().filter(|e| e["name"] == "process_name");
    named.map(|e| (e["pid"].as_i64().unwrap(), e["args"]["name"].as_str().unwrap().to_string())).collect()
}

/// The flows named `name` that start in process `from` and end in `to`.
fn flows_between(ev: &[Value], name: &str, from: i64, to: &[i64]) -> usize {
    let starts = ev.iter().filter(|e| e["ph"] == "s" && e["name"] == name && e["pid"] == from);
    // One end, in a process of `to`, after the start (one clock for all).
    let ends = |s: &&Value| {
        let mut f = ev.iter().filter(|f| f["ph"] == "f" && f["id"] == s["id"]);
        f.next().is_some_and(|f| {
            f["name"] == name
                && f["bp"] == "e"
                && to.contains(&f["pid"].as_i64().unwrap())
                && f["ts"].as_f64() >= s["ts"].as_f64()
        }) && f.next().is_none()
    };
    starts.filter(ends).count()
}

/// Each isolate is a process of the trace (`worker isolate N`), its job
/// fibers' slices on tracks of their own; flows join the fiber that sent a
/// job to the worker fiber that runs it, its answer back to the fiber
/// waiting for it, and a value sent on a shared channel to the fiber that
/// receives it. With a worker thread and with the worker on the main thread.
#[test]
fn isolates_are_processes_joined_by_flows() {
    for n in ["1", "2"] {
        let (code, err, ev) = traced_isolates(&format!("isolates{n}"), n, ISOLATES);
        assert_eq!(code, 0, "{err}");
        let procs = processes(&ev);
        let main = procs.iter().find(|(_, name)| name.starts_with("csp run ")).expect("main's process").0;
        let workers: Vec<i64> =
            procs.iter().filter(|(_, name)| name.starts_with("worker isolate ")).map(|(pid, _)| *pid).collect();
        assert_eq!(workers.len(), n.parse::<usize>().unwrap(), "{procs:?}");
        assert_eq!(procs.len(), workers.len() + 1, "{procs:?}");
        // Job fibers (not the driver, tid 0) ran slices on a worker.
        let job_slices = ev.iter().filter(|e| e["ph"] == "X" && workers.contains(&e["pid"].as_i64().unwrap()));
        assert!(job_slices.filter(|e| e["tid"] != 0).count() >= 2, "--isolates {n}: {ev:#?}");
        let jobs = flows_between(&ev, "job", main, &workers);
        let answers = workers.iter().map(|&w| flows_between(&ev, "answer", w, &[main])).sum::<usize>();
        let messages = workers.iter().map(|&w| flows_between(&ev, "message", w, &[main])).sum::<usize>();
        assert_eq!((jobs, answers, messages), (2, 2, 3), "--isolates {n}: {ev:#?}");
        // Each end of a crossing is in a slice of its fiber.
        let crossing = ev.iter().filter(|e| matches!(e["name"].as_str(), Some("job" | "answer" | "message")));
        for e in crossing {
            let ts = e["ts"].as_f64().unwrap();
            let within = ev.iter().any(|x| {
                let (t0, d) = (x["ts"].as_f64().unwrap_or(-1.0), x["dur"].as_f64().unwrap_or(0.0));
                x["ph"] == "X" && x["pid"] == e["pid"] && x["tid"] == e["tid"] && t0 <= ts && ts <= t0 + d + 0.001
            });
            assert!(within, "--isolates {n}: {e} in no slice: {ev:#?}");
        }
        let driver = ev.iter().find(|e| e["name"] == "thread_name" && e["pid"] == workers[0] && e["tid"] == 0);
        assert_eq!(driver.map(|e| &e["args"]["name"]), Some(&Value::from("driver (runs each job in a fiber)")));
        // Flow ids are unique across isolates.
        let mut ids: Vec<u64> = ev.iter().filter(|e| e["ph"] == "s").map(|e| e["id"].as_u64().unwrap()).collect();
        let all = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all, "--isolates {n}");
    }
}

/// The file is whole when the program ends at once with workers running:
/// the main isolate's `exit(code)` or uncaught error, a worker's `exit`.
#[test]
fn the_file_is_json_however_a_program_with_isolates_ends() {
    let spin = "import \"std/isolate\"\nfn spin() { while true { sleep(1) } }\nisolate.run(spin)\nsleep(20)\n";
    for n in ["1", "2"] {
        let (code, err, ev) = traced_isolates("iso_exit", n, &format!("{spin}exit(3)\n"));
        assert_eq!(code, 3, "{err}");
        assert!(ev.iter().any(|e| e["ph"] == "X"));
        let (code, err, ev) = traced_isolates("iso_error", n, &format!("{spin}throw error(\"boom\")\n"));
        assert_eq!(code, 1, "{err}");
        assert!(ev.iter().any(|e| e["ph"] == "X" && e["cat"] == "error"), "{ev:#?}");
        let src = "import \"std/isolate\"\nfn quit() { sleep(5)\n exit(4) }\nwait isolate.run(quit)\n";
        let (code, err, ev) = traced_isolates("iso_worker_exit", n, src);
        assert_eq!(code, 4, "{err}");
        assert!(ev.iter().any(|e| e["ph"] == "X"));
        assert!(processes(&ev).iter().any(|(_, name)| name == "worker isolate 1"), "{ev:#?}");
    }
}
