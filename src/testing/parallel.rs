//! `csp test -j N`: N test files at once, each in a VM of its own on a
//! thread of its own (an isolate: nothing of one file's heap is seen by
//! another's); their output is kept and shown whole, in file order, and
//! their counts (and coverage) added up.

use super::{output, TestOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one file printed, its counts and its coverage (lcov).
struct Done {
    kept: output::Kept,
    counts: (i64, i64),
    lcov: Option<String>,
}

/// The stack of a thread that runs a file: the main thread's, as the
/// compiler's recursion on deeply nested code needs.
const STACK: usize = 64 << 20;

/// Runs `files` on `jobs` threads at once; returns (passed, failed).
pub fn run(files: &[PathBuf], jobs: usize, opts: &TestOptions) -> (i64, i64) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel();
    let (cli, filter, flags, runtime) = (opts.cli, opts.filter, &opts.flags, &opts.runtime);
    let (timeout_ms, color, explore) = (opts.timeout_ms, opts.color, opts.explore);
    let (mut passed, mut failed) = (0, 0);
    std::thread::scope(|s| {
        for t in 0..jobs.min(files.len()) {
            let (tx, next) = (tx.clone(), &next);
            let runtime = runtime.clone();
            let work = move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(k) else { return };
                let opts = TestOptions {
                    timeout_ms,
                    filter,
                    color,
                    explore,
                    flags: flags.clone(),
                    cli,
                    runtime: runtime.clone(),
                    report: Default::default(),
                };
                if tx.send((k, run_file(file, &opts))).is_err() {
                    return;
                }
            };
            let name = format!("csp-test-{}", t + 1);
            if let Err(e) = std::thread::Builder::new().name(name).stack_size(STACK).spawn_scoped(s, work) {
                output::err(format!("csp test: cannot start a thread: {e}\n").as_bytes());
            }
        }
        drop(tx);
        // Shown in file order: a file waits for those before it.
        let mut waiting = std::collections::BTreeMap::new();
        let mut shown = 0;
        for (k, done) in rx {
            waiting.insert(k, done);
            while let Some(d) = waiting.remove(&shown) {
                output::err(&d.kept.err);
                output::out(&d.kept.out);
                passed += d.counts.0;
                failed += d.counts.1;
                if let Some(text) = d.lcov {
                    opts.report.borrow_mut().merge_lcov(&text);
                }
                shown += 1;
            }
        }
    });
    (passed, failed)
}

/// Runs one file with its output kept; a crash of csp itself (a panic) is
/// that file's failure, not the whole run's.
fn run_file(file: &std::path::Path, opts: &TestOptions) -> Done {
    output::keep();
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| super::run_file(file, opts, &|_| {})));
    let mut kept = output::take();
    let counts = ran.unwrap_or_else(|_| {
        let line = format!("FAIL {}: csp crashed running it (a bug in csp: please report it)\n", file.display());
        kept.out.extend_from_slice(line.as_bytes());
        (0, 1)
    });
    let lcov = opts.cli.coverage.is_some().then(|| opts.report.borrow().to_lcov());
    Done { kept, counts, lcov }
}
