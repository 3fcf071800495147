//! Limits users set on the command line (`--max-memory`, `--max-fibers`,
//! `--timeout`), driven through the real binary: past each, the documented
//! error or exit, never an abort, the OOM killer or a hang (docs/limits.md).

use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;
use common::Script;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// Runs `src` as a script with `flags` before it.
fn run(flags: &[&str], src: &str) -> Output {
    let script = Script::new("limits.csp", src);
    Command::new(CSP).arg("run").args(flags).arg(script.path()).env("NO_COLOR", "1").output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn expect(o: &Output, code: i32, stdout: &str, stderr_has: &str) {
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(code), "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(out, stdout, "stderr:\n{err}");
    assert!(err.contains(stderr_has), "stderr lacks {stderr_has:?}:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_growing_list_past_max_memory_is_a_catchable_memory_error() {
    let src = r#"
let xs = []
try {
    for i in 0..100_000_000 { xs.push([i, i]) }
} catch e {
    print(e.kind, len(xs) > 100_000, len(xs) < 5_000_000)
}
xs = nil
// The memory is back once the list is dropped.
let ys = []
for i in 0..100_000 { ys.push([i]) }
print(len(ys))
"#;
    expect(&run(&["--max-memory", "64M"], src), 0, "memory true true\n100000\n", "");
}

#[test]
fn big_allocations_check_the_limit_before_they_are_made() {
    let src = r#"
for f in [fn() { return [0] * 20_000_000 }, fn() { return "abcd" * 50_000_000 },
          fn() { return "x".repeat(200_000_000) }, fn() { return range(0, 20_000_000) },
          fn() { return [1] + [0] * 10_000_000 }] {
    try { f(); print("made") } catch e { print(e.kind) }
}
"#;
    let began = Instant::now();
    let o = run(&["--max-memory", "32M"], src);
    expect(&o, 0, &"memory\n".repeat(5), "");
    assert!(began.elapsed() < Duration::from_secs(5));
}

#[test]
fn an_uncaught_memory_error_reports_its_kind() {
    let o = run(&["--max-memory", "16M"], "let s = []\nwhile true { s.push(\"${len(s)}\" * 8) }\n");
    expect(&o, 1, "", "csp::runtime::memory");
    assert!(text(&o.stderr).contains("--max-memory"), "{}", text(&o.stderr));
}

/// A compound assignment whose result needs a collection first runs again
/// from its read: the update the other fiber made meanwhile is kept.
#[test]
fn a_compound_assignment_retried_after_a_collection_rereads_its_target() {
    let src = r#"
let s = "a"
let big = "x" * 30000000
wait {
    go {
        let junk = "y" * 50000000
        junk = nil
        s += big
    }
    go { s += "B" }
}
print(s.slice(0, 3), len(s))
"#;
    expect(&run(&["--max-memory", "95M"], src), 0, "aBx 30000002\n", "");
}

#[test]
fn parked_fibers_count_towards_max_memory() {
    // Each blocked fiber holds a stack, frames and a task outside any list.
    let src = r#"
let c = chan()
let n = 0
try {
    while true { go fn() { <-c }(); n += 1 }
} catch e {
    print(e.kind, n > 1000)
}
close(c)
"#;
    expect(&run(&["--max-memory", "48M"], src), 0, "memory true\n", "");
}

#[test]
fn go_past_max_fibers_is_a_catchable_fibers_error() {
    let src = r#"
let c = chan()
let started = 0
try {
    for i in 0..1000 { go fn() { <-c }(); started += 1 }
} catch e {
    print(e.kind, started)
    print(e.message)
}
close(c)
sleep(1)
// The fibers have ended: there is room again.
let t = go fn() { return 7 }()
print(wait t)
"#;
    let o = run(&["--max-fibers", "10"], src);
    // The main fiber is one of the 10.
    expect(&o, 0, "fibers 9\ntoo many fibers: 10 are running or waiting (see --max-fibers)\n7\n", "");
}

#[test]
fn timeout_cancels_the_program_and_runs_its_finally_blocks() {
    let src = "try { print(\"start\"); sleep(60000) } finally { print(\"cleanup\") }\n";
    let began = Instant::now();
    let o = run(&["--timeout", "300ms"], src);
    expect(&o, 124, "start\ncleanup\n", "csp: timed out after 300ms (--timeout)");
    assert!(began.elapsed() < Duration::from_secs(10));
    // A busy loop is preempted and cancelled the same way.
    expect(&run(&["--timeout", "1s"], "while true { }\n"), 124, "", "timed out after 1s");
}

#[test]
fn timeout_ends_cleanup_that_does_not_finish() {
    // Cancellation waits for the end of a `lock` block: this cleanup never ends.
    let src = "let m = mutex()\ntry { sleep(60000) } finally { lock m { while true { } } }\n";
    let began = Instant::now();
    let o = run(&["--timeout", "200", "--grace", "300ms"], src);
    expect(&o, 124, "", "cleanup did not finish within the grace time (300ms");
    assert!(began.elapsed() < Duration::from_secs(3), "{:?}", began.elapsed());
}

/// A cancelled fiber's `finally` may block, but only for the grace time: then
/// the blocking operation throws `Cancelled`, and so does every later one.
#[test]
fn a_finally_block_blocks_only_within_the_grace_time() {
    let src = r#"
let t = go {
    try { sleep(100000) } finally {
        let t0 = now()
        try { sleep(100000) } catch e { print("stuck cleanup:", e.kind, now() - t0 < 2000) }
        try { sleep(1) } catch e { print("then at once:", e.kind) }
    }
}
sleep(5)
t.cancel()
try { wait t } catch e { print("wait:", e.kind) }
"#;
    let began = Instant::now();
    let o = run(&["--grace", "300ms"], src);
    expect(&o, 0, "stuck cleanup: cancelled true\nthen at once: cancelled\nwait: cancelled\n", "");
    assert!(began.elapsed() >= Duration::from_millis(300), "{:?}", began.elapsed());
}

/// Fibers left parked at the program's end are cancelled; cleanup that never
/// ends stops at the grace time, with a note, and the exit code stays 0.
#[test]
fn leftover_cleanup_ends_at_the_grace_time() {
    let src = "go { let c = chan(); try { <-c } finally { print(\"cleanup\"); while true { } } }\nprint(\"done\")\n";
    let began = Instant::now();
    let o = run(&["--grace", "300ms"], src);
    expect(&o, 0, "done\ncleanup\n", "csp: cleanup did not finish within the grace time (300ms; see --grace)");
    assert!(began.elapsed() < Duration::from_secs(3), "{:?}", began.elapsed());
}

#[test]
fn a_program_that_ends_in_time_is_not_affected() {
    expect(&run(&["--timeout", "10s"], "sleep(5)\nprint(\"done\")\n"), 0, "done\n", "");
}

#[test]
fn bad_limit_values_are_usage_errors() {
    for flags in [
        ["--max-memory", "lots"],
        ["--max-memory", "0"],
        ["--max-memory", "-5M"],
        ["--max-fibers", "0"],
        ["--max-fibers", "x"],
        ["--timeout", "0"],
        ["--timeout", "5 parsecs"],
    ] {
        let o = run(&flags, "print(1)\n");
        assert_eq!(o.status.code(), Some(64), "{flags:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(flags[0]), "{flags:?}: {}", text(&o.stderr));
    }
}

#[test]
fn what_was_dropped_does_not_count_against_a_big_allocation() {
    // Straight-line code has no preemption point between the lines: the big
    // allocations wait for a collection instead of failing on dropped strings.
    let src = r#"
let a = "x" * 20_000_000
let b = a + a
a = nil
b = nil
let c = "y" * 30_000_000
let d = c + "z"
print(len(d))
let parts = []
try { for i in 0..100 { parts.push("p" * 10_000_000) } } catch e { print(e.kind, len(parts) < 7) }
"#;
    expect(&run(&["--max-memory", "64M"], src), 0, "30000001\nmemory true\n", "");
}

#[test]
fn under_an_address_space_limit_the_default_limit_leaves_room() {
    // `ulimit -v`: allocation failure would abort; the default --max-memory is
    // an eighth of the limit, so the program gets its error first.
    let src = "let xs = []\ntry { while true { xs.push(\"item ${len(xs)}\") } } catch e { print(e.kind) }\n";
    let script = Script::new("limits_as.csp", src);
    let o = Command::new("prlimit").arg("--as=600000000").arg(CSP).arg("run").arg(script.path()).output().unwrap();
    expect(&o, 0, "memory\n", "");
}

/// A fiber bomb queues fibers faster than any run: each `go` counts the record
/// it queues, and once a collection finds the heap over the limit the next `go`
/// throws (the fibers it starts end before any preemption point).
#[test]
fn a_fiber_bomb_gets_a_memory_error_at_a_go() {
    let src = "fn g() { go g(); go g() }\ng()\nsleep(100000)\n";
    let o = run(&["--max-memory", "32M", "--timeout", "60s"], src);
    expect(&o, 1, "", "out of memory");
    assert!(text(&o.stderr).contains("csp::runtime::memory"), "{}", text(&o.stderr));
}

/// Cancelling a million queued fibers is linear: `--timeout` ends a fiber bomb
/// within the grace time (a fiber whose `go` ran in a cancelled fiber never runs).
#[test]
fn timeout_ends_a_fiber_bomb() {
    let src = "fn g() { go g(); go g() }\ng()\nsleep(100000)\n";
    let began = Instant::now();
    let o = run(&["--timeout", "500ms", "--grace", "2s"], src);
    assert_eq!(o.status.code(), Some(124), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("timed out after 500ms"), "{}", text(&o.stderr));
    assert!(began.elapsed() < Duration::from_secs(4), "{:?}", began.elapsed());
}

/// Builtins whose result grows with their input ask the heap before building
/// it: past the limit they throw before the memory is touched, so the peak
/// stays near the limit (it was 2.6 GB at a 128 MB limit, issue 37).
#[test]
fn bulk_builtins_ask_before_building() {
    let src = r#"
let s = "a".repeat(40_000_000)
try { s.chars() } catch e { print(e.kind) }
try { s.split("") } catch e { print(e.kind) }
let t = "a,".repeat(20_000_000)
try { t.split(",") } catch e { print(e.kind) }
import "std/re"
try { re.find_all("[a-z]+", "ab ".repeat(1_000_000)) } catch e { print(e.kind) }
import "std/csv"
try { csv.parse("a,b\n".repeat(3_000_000)) } catch e { print(e.kind) }
print(len("a b c".split()), len("héllo".chars()), len("x,y".split(",")), len(re.find_all("b", "ab ".repeat(2000))))
print(len(csv.parse("a,b\n".repeat(20_000))), len(csv.parse("x,y\n1,2\n", {header: true})))
"#;
    let script = Script::new("bulk.csp", src);
    let (code, out, peak) = common::peak_kb(&["run", "--max-memory", "128M", script.path()]);
    assert_eq!((code, out.as_str()), (0, "memory\nmemory\nmemory\nmemory\nmemory\n3 5 2 2000\n20000 1\n"));
    assert!(peak < 2 * 128 * 1024 + 32 * 1024, "peaked at {peak} KB under a 128 MB limit");
}

/// A zero padding with grouping as wide as the memory left is made in place:
/// the format fuzzer's `{:066666263_}` peaked at 266 MB under a 64 MB limit
/// (the zeros, grouped, joined and padded were each a copy).
#[test]
fn a_wide_grouped_zero_padding_is_made_once() {
    let script = Script::new("pad.csp", "let s = format(\"{:066666263_}\", 5)\nprint(len(s), s.slice(-7))\n");
    let (code, out, peak) = common::peak_kb(&["run", "--max-memory", "64M", script.path()]);
    assert_eq!((code, out.as_str()), (0, "66666263 000_005\n"));
    assert!(peak < 2 * 64 * 1024 + 16 * 1024, "peaked at {peak} KB under a 64 MB limit");
}

/// Big objects made by a loop with too few calls to reach a preemption
/// point still start the collector's cycle: the builtin that made one past
/// the trigger ends the slice. Two 66 MB strings an iteration peaked at
/// 1.6 GB (the whole loop ran in one slice), with at most 132 MB live.
#[test]
fn big_objects_made_within_one_slice_are_collected() {
    let src = "for i in 0..12 {\n    let s = \"ab\".repeat(33000000)\n    let t = \"cd\".repeat(33000000)\n    print(len(s) + len(t))\n}\n";
    let script = Script::new("big.csp", src);
    let (code, out, peak) = common::peak_kb(&["run", script.path()]);
    assert_eq!((code, out), (0, "132000000\n".repeat(12)));
    assert!(peak < 700 * 1024, "peaked at {peak} KB with at most 132 MB live");
}

/// Reads whose size the input decides (a whole stream, a line, a child's
/// output, a file) stop at what the limits allow as the data arrives: past
/// it they throw the `memory` error before buffering the rest, so the peak
/// stays near the limit (reading 1 GB from a child peaked at 2.9 GB under a
/// 64 MB limit, issue 37). Each in its own process: the allocator returns a
/// freed buffer to the system some milliseconds later, so one process
/// failing reads back to back may hold a second buffer meanwhile.
#[test]
fn reads_stop_at_the_limit_as_the_data_arrives() {
    let big = Script::new("big.bin", "");
    // Sparse: 300 MB of zeros that take no disk.
    std::fs::OpenOptions::new().write(true).open(big.path()).unwrap().set_len(300 << 20).unwrap();
    let many = Script::new("many.txt", &"\n".repeat(4_000_000));
    let (big, many) = (big.path(), many.path());
    for read in [
        r#"proc.run(["head", "-c", "1000000000", "/dev/zero"]).stdout"#.to_string(),
        r#"proc.spawn(["head", "-c", "1000000000", "/dev/zero"], {stdout: "pipe"}).stdout.read()"#.to_string(),
        format!("fs.open({big:?}).read()"),
        format!("fs.open({big:?}).read_text()"),
        format!("fs.open({big:?}).read_line()"),
        format!("fs.open({big:?}).read_exact(200_000_000)"),
        format!("fs.read_bytes({big:?})"),
        format!("lines({many:?})"),
    ] {
        let src = format!(
            "import \"std/fs\"\nimport \"std/proc\"\ntry {{ {read}; print(\"read\") }} catch e {{ print(e.kind) }}\n\
             print(len(fs.open({big:?}).read(1_000_000)), len(fs.open({many:?}).read_text()))\n"
        );
        let script = Script::new("reads.csp", &src);
        let (code, out, peak) = common::peak_kb(&["run", "--max-memory", "64M", script.path()]);
        assert_eq!((code, out.as_str()), (0, "memory\n1000000 4000000\n"), "{read}");
        assert!(peak < 2 * 64 * 1024 + 16 * 1024, "{read} peaked at {peak} KB under a 64 MB limit");
    }
}

/// Without `--max-memory` a value's own limit (256 MiB) bounds a read.
#[test]
fn a_read_past_a_values_limit_is_a_limit_error() {
    let src = r#"
import "std/proc"
try { proc.run(["head", "-c", "300000000", "/dev/zero"]) } catch e { print(e.kind, e.message) }
"#;
    let msg = "limit cannot read stdout of head -c 300000000 /dev/zero: longer than the 256 MiB a value may hold (read it in parts)\n";
    expect(&run(&[], src), 0, msg, "");
}

/// `read_line()` from stdin is bounded as it reads, too.
#[test]
fn a_line_of_stdin_past_the_limit_is_a_memory_error() {
    let zeros = Script::new("zeros", "");
    // 100 MB: the line's rest after the error (36 MB) is read next.
    std::fs::OpenOptions::new().write(true).open(zeros.path()).unwrap().set_len(100 << 20).unwrap();
    let script = Script::new("stdin.csp", "try { read_line() } catch e { print(e.kind) }\nprint(read_line() != nil)\n");
    let o = Command::new(CSP)
        .args(["run", "--max-memory", "64M", script.path()])
        .stdin(std::fs::File::open(zeros.path()).unwrap())
        .output()
        .unwrap();
    expect(&o, 0, "memory\ntrue\n", "");
}
