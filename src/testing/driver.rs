//! The csp code `csp test` runs each file with: the generated driver's
//! functions, which run a test in a fiber with a timeout or a benchmark with a
//! growing `b.n`, and report each result.

use crate::vm::{Value, Vm};

/// Marks a driver line meant for `events.rs` (under `--json` and `--bench`)
/// rather than for the reader.
pub const MARK: char = '\u{1}';

/// The driver's code after its `import` and its `let __json = ...`;
/// `__run` reports one test, `__bench` one benchmark.
pub const DRIVER: &str = r#"
let __passed = 0
let __failed = 0
// One result: a line for the reader, or under --json the failure's text as
// output and then a marked line `events.rs` makes an event of.
fn __result(label, text, began) {
    if text == nil { __passed += 1 } else { __failed += 1 }
    if __json {
        if text != nil { print(text) }
        print("${chr(1)}${text == nil && "pass" || "fail"} ${now() - began} ${label}")
    } else if text == nil {
        print("PASS ${label}")
    } else {
        print("FAIL ${label}: ${text}")
    }
}
fn __describe(e) {
    if type(e) != "error" { return "uncaught throw: ${e}" }
    let text = e.message
    for at in e.trace {
        // The test's own frames, not the library's or this driver's.
        if !at.contains("(std/") && !at.contains("<csp test>") && at != "main fiber" {
            text += "\n    at ${at}"
        }
    }
    return text
}
fn __run(label, f, ms) {
    if __json { print("${chr(1)}run 0 ${label}") }
    let t = go f()
    let timed_out = false
    let deadlock = nil
    let began = now()
    // Look every few milliseconds whether the test can still make progress.
    while true {
        select {
            case <-t.done() { break }
            case <-after(5) {}
        }
        deadlock = __deadlocked()
        if deadlock != nil || now() - began >= ms {
            timed_out = deadlock == nil
            t.cancel()
            break
        }
    }
    if deadlock != nil || timed_out {
        // Give its `finally` blocks a moment, then move on.
        select {
            case <-t.done() {}
            case <-after(1000) {}
        }
    }
    if deadlock != nil {
        // Lines about this driver's own code are no business of the test's.
        let lines = [l for l in deadlock.trim().split("\n") if !l.contains("<csp test>")]
        __result(label, lines.join("\n"), began)
        return
    }
    if timed_out {
        __result(label, "timed out after ${ms} ms", began)
        return
    }
    try {
        wait t
        __result(label, nil, began)
    } catch e {
        __result(label, __describe(e), began)
    }
    // Fibers the test left behind would outlive it.
    t.cancel()
}
// Runs f(b) with b.n growing until one run takes `goal` ms (as Go's
// testing.B does); prints `name  N  ns/op`.
fn __bench(label, shown, f, goal) {
    if __json { print("${chr(1)}run 0 ${label}") }
    let b = {n: 1}
    let began = now()
    try {
        while true {
            let start = now()
            f(b)
            let ms = now() - start
            if ms >= goal || b.n >= 1000000000 {
                let line = __bench_line(shown, b.n, ms * 1000000 / b.n)
                __passed += 1
                if __json { print("${chr(1)}bench ${ms} ${label}\t${line}") } else { print(line) }
                return
            }
            // Aim 20% past the goal, growing at most 100-fold and at least by one.
            let want = ms > 0 && int(goal * 1.2 * b.n / ms) || b.n * 100
            b.n = max(b.n + 1, min(want, b.n * 100, 1000000000))
        }
    } catch e {
        __result(label, __describe(e), began)
    }
}
"#;

/// The columns of a benchmark's line as `go test -bench` prints them: the
/// name (already padded), the iterations, the time per iteration with four
/// significant digits or none past the point (Go's `prettyPrint`).
pub fn bench_line(vm: &mut Vm, args: &[Value]) -> crate::vm::Res<Value> {
    let name = args.first().and_then(|&v| vm.heap.as_str(v)).map(|s| s.s.to_string()).unwrap_or_default();
    let n = match args.get(1) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    };
    let ns = match args.get(2) {
        Some(Value::Float(x)) => *x,
        Some(Value::Int(i)) => *i as f64,
        _ => 0.0,
    };
    let per_op = match ns.abs() {
        y if y == 0.0 || y >= 999.95 => format!("{ns:10.0}"),
        y if y >= 99.995 => format!("{ns:12.1}"),
        y if y >= 9.9995 => format!("{ns:13.2}"),
        y if y >= 0.99995 => format!("{ns:14.3}"),
        _ => format!("{ns:15.4}"),
    };
    Ok(vm.heap.string(format!("{name}\t{n:8}\t{per_op} ns/op")))
}
