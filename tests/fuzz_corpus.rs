//! Replays the committed, minimised fuzz corpus (`fuzz/seeds/<target>/`)
//! through the fuzz targets' own code paths (`csp::sandbox`: parse; compile and
//! check; a sandboxed run under the budget), each input on the small stack the
//! targets use: no input may panic, overflow the stack or hang. This is how CI,
//! on the stable toolchain and without cargo-fuzz, keeps what the fuzzers found
//! (docs/fuzzing.md).

use csp::sandbox;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The committed inputs of one target.
fn seeds(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    files
}

/// Runs `each` on every input of `target` (UTF-8 ones: the program targets
/// skip the rest), spread over the machine's cores; a panic names the input.
fn replay(target: &str, each: fn(&str)) {
    replay_bytes(target, sandbox::STACK, &|data| {
        if let Ok(src) = std::str::from_utf8(data) {
            each(src)
        }
    });
}

/// `replay` of a target that takes bytes, on a `stack`-byte stack.
fn replay_bytes(target: &str, stack: usize, each: &(dyn Fn(&[u8]) + Sync)) {
    let files = seeds(target);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    let began = Instant::now();
    let slowest = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut slowest = (Duration::ZERO, PathBuf::new());
                    loop {
                        let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) else { return slowest };
                        let src = std::fs::read(path).unwrap();
                        let t = Instant::now();
                        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            sandbox::on_stack(stack, || each(&src))
                        }));
                        if res.is_err() {
                            panic!("fuzz input {} panicked ({target})", path.display());
                        }
                        if t.elapsed() > slowest.0 {
                            slowest = (t.elapsed(), path.clone());
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).max().unwrap()
    });
    // A run ends at its budget; far more than that is a hang.
    assert!(slowest.0 < sandbox::BUDGET.time * 5, "{} took {:?} ({target})", slowest.1.display(), slowest.0);
    eprintln!("{target}: {} inputs in {:?}, slowest {:?}", files.len(), began.elapsed(), slowest.0);
}

/// Guards: the lexer and parser take every input the parse fuzzer kept.
#[test]
fn parse_corpus() {
    replay("parse", sandbox::parse);
}

/// Guards: the compiler and `csp check` take every input the compile fuzzer kept.
#[test]
fn compile_corpus() {
    replay("compile", sandbox::compile);
}

/// Guards: every program the run fuzzer kept ends (error, budget or not).
#[test]
fn run_corpus() {
    replay("run", |src| {
        sandbox::run(src);
    });
}

/// Guards: the text parsers (HTTP heads, JSON, CSV, regex patterns and
/// replacement templates, format strings) take every input their fuzzers kept.
#[test]
fn text_parser_corpora() {
    for target in sandbox::TEXT_TARGETS {
        // The text targets run on libFuzzer's main thread (8 MiB): JSON nested
        // 2,000 deep needs more than the program targets' 256 KiB in a debug build.
        replay_bytes(target, 8 << 20, &|data| sandbox::text(target, data));
    }
}
