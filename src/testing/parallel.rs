//! `csp test -j N`: each test file in a `csp test` process of its own, N at a
//! time; their output is shown whole, in file order, and their counts (and
//! coverage) added up.

use super::TestOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one file's process printed and its counts.
struct Done {
    stdout: String,
    stderr: Vec<u8>,
    counts: (i64, i64),
}

/// Runs `files` in `jobs` processes at once; returns (passed, failed).
pub fn run(files: &[PathBuf], jobs: usize, opts: &TestOptions) -> (i64, i64) {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("csp"));
    let args = opts.cli.for_child();
    let covering = opts.cli.coverage.is_some();
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel();
    let lcov = |k: usize| std::env::temp_dir().join(format!("csp-test-{}-{k}.lcov", std::process::id()));
    let (mut passed, mut failed) = (0, 0);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(files.len()) {
            let tx = tx.clone();
            let (exe, args, next) = (&exe, &args, &next);
            s.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(k) else { return };
                let mut cmd = std::process::Command::new(exe);
                cmd.arg("test").args(args);
                if covering {
                    cmd.arg("--coverage").arg(lcov(k));
                }
                let done = match cmd.arg("--").arg(file).output() {
                    Ok(out) => {
                        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                        let counts = take_summary(&mut text);
                        let counts = counts.unwrap_or_else(|| {
                            text.push_str(&format!(
                                "FAIL {}: the test process ended ({})\n",
                                file.display(),
                                out.status
                            ));
                            (0, 1)
                        });
                        Done { stdout: text, stderr: out.stderr, counts }
                    }
                    Err(e) => Done {
                        stdout: format!("FAIL {}: cannot start csp test: {e}\n", file.display()),
                        stderr: Vec::new(),
                        counts: (0, 1),
                    },
                };
                if tx.send((k, done)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        // Shown in file order: a file waits for those before it.
        let mut waiting = std::collections::BTreeMap::new();
        let mut shown = 0;
        for (k, done) in rx {
            waiting.insert(k, done);
            while let Some(d) = waiting.remove(&shown) {
                let _ = std::io::stderr().write_all(&d.stderr);
                let _ = std::io::stdout().write_all(d.stdout.as_bytes());
                let _ = std::io::stdout().flush();
                passed += d.counts.0;
                failed += d.counts.1;
                if opts.cli.coverage.is_some() {
                    if let Ok(text) = std::fs::read_to_string(lcov(shown)) {
                        opts.report.borrow_mut().merge_lcov(&text);
                    }
                    let _ = std::fs::remove_file(lcov(shown));
                }
                shown += 1;
            }
        }
    });
    (passed, failed)
}

/// Removes a child's summary line (`P passed, F failed`, `no tests under X`,
/// or `--json`'s summary event) from the end of its output; its counts.
fn take_summary(text: &mut String) -> Option<(i64, i64)> {
    let body = text.trim_end_matches('\n');
    let (rest, last) = body.rsplit_once('\n').unwrap_or(("", body));
    let counts = if last.starts_with("no tests under ") {
        Some((0, 0))
    } else if let Some((p, f)) = last.strip_suffix(" failed").and_then(|l| l.split_once(" passed, ")) {
        p.parse().ok().zip(f.parse().ok())
    } else {
        let v: serde_json::Value = serde_json::from_str(last).ok()?;
        v["Passed"].as_i64().zip(v["Failed"].as_i64())
    }?;
    *text = if rest.is_empty() { String::new() } else { format!("{rest}\n") };
    Some(counts)
}
