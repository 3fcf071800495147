//! `--max-fibers` and `--max-memory` count every isolate of a program
//! (docs/isolates.md, "Limits"): an `isolate.run` counts as one fiber, and
//! before a `memory` error the other isolates are asked to collect.

mod common;

use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn run(args: &[&str], src: &str) -> (i32, String, String) {
    let script = common::Script::new("iso_limits.csp", src);
    let out = Command::new(CSP).args(args).arg("run").arg(script.path()).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn max_fibers_counts_the_fibers_of_every_isolate() {
    let src = r#"
import "std/isolate"
// Its fibers have ended when it returns: the next job has the room.
fn spawn(n) {
    let c = chan()
    let made = []
    let result = nil
    try {
        for i in 0..n { made.push(go { <-c }) }
        result = "all ${len(made)}"
    } catch e {
        result = "${e.kind} after ${len(made)}: ${e.message}"
    }
    close(c)
    wait made
    return result
}
let c = chan()
for i in 0..20 { go { <-c } }
print(wait isolate.run(spawn, 10))
print(wait isolate.run(spawn, 30))
close(c)
"#;
    // The main fiber, its 20 and the job's stand-in leave 18 of 40 to the job.
    let (code, out, err) = run(&["--max-fibers", "40", "--isolates", "2"], src);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "all 10\nfibers after 18: too many fibers: 40 are running or waiting (see --max-fibers)\n");
    let (code, out, err) = run(&["--isolates", "2"], src);
    assert_eq!((code, out.as_str()), (0, "all 10\nall 30\n"), "{err}");
}

const BUILD: &str = r#"
import "std/isolate"
fn build(n) {
    let xs = []
    for i in 0..n { xs.push([i, i + 1]) }
    return xs
}
"#;

/// A million two-item lists take about 30 MB: two of them at once do not
/// fit in 60 MB, whichever isolates hold them.
#[test]
fn max_memory_counts_what_every_isolate_holds() {
    let src = format!(
        "{BUILD}
fn hold(n, go_on, held) {{
    let xs = build(n)
    held <- true
    <-go_on
    return len(xs)
}}
let go_on = chan()
let held = chan()
let t = isolate.run(hold, 1000000, go_on, held)
<-held
try {{ print(len(build(1000000))) }} catch e {{ print(e.kind) }}
close(go_on)
print(wait t)
"
    );
    let (code, out, err) = run(&["--max-memory", "60M", "--isolates", "1"], &src);
    assert_eq!((code, out.as_str()), (0, "memory\n1000000\n"), "{err}");
}

/// A job builds 30 MB and ends, then the main isolate builds 30 MB and
/// runs `job`, then makes 20 MB at once under `--max-memory 60M`: each fits
/// only if the garbage left on the worker is collected first.
fn builds_after_a_job(isolates: &str, job: &str) -> (i32, String, String) {
    let src = format!(
        "{BUILD}
fn size(n) {{ return len(build(n)) }}
print(wait isolate.run(size, 1000000))
print(len(build(1000000)))
print(wait isolate.run({job}))
print(len([0] * 2500000))
"
    );
    run(&["--max-memory", "60M", "--isolates", isolates], &src)
}

/// What a finished job left on a worker is garbage: the isolate about to
/// fail asks the others to collect first, and then it fits (built a piece
/// at a time, or made at once: 40 MB of ints).
#[test]
fn before_a_memory_error_the_other_isolates_collect() {
    // Two workers: the jobs go to the first, which runs on a thread of its own.
    let (code, out, err) = builds_after_a_job("2", "size, 1000000");
    assert_eq!((code, out.as_str()), (0, "1000000\n1000000\n1000000\n2500000\n"), "{err}");
}

/// With `--isolates 1` the worker runs on the main isolate's thread and
/// cannot answer while the main isolate waits: the main isolate collects it
/// itself before it decides.
#[test]
fn the_worker_on_the_main_thread_collects_before_the_main_isolate_fails() {
    let (code, out, err) = builds_after_a_job("1", "fn() { return 1 }");
    assert_eq!((code, out.as_str()), (0, "1000000\n1000000\n1\n2500000\n"), "{err}");
}
