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
fn spawn(n) {
    let c = chan()
    let made = 0
    try {
        for i in 0..n { go { <-c }; made += 1 }
    } catch e {
        close(c)
        return "${e.kind} after ${made}: ${e.message}"
    }
    close(c)
    return "all ${made}"
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
