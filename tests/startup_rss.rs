//! Start-up memory (benches/README.md, "Startup memory"): `csp run` of a
//! one-line script peaks at about 4.3 MB resident, 6.8 MB before the code that
//! start-up runs was laid out together (link/startup.ld). The bound is loose,
//! so only a large regression fails: the order lost (start-up touching code
//! all over the binary again), or much more work at start-up.

mod common;

use common::Script;

const BOUND_KB: i64 = 6 * 1024;

#[test]
fn print_one_peaks_under_6_mb() {
    if cfg!(debug_assertions) {
        return; // the unoptimized binary is several times bigger
    }
    // A child's peak counts its parent's until it execs (the kernel keeps the
    // larger): it says nothing if this process is bigger than the bound.
    let own = own_peak_kb();
    assert!(own < BOUND_KB, "this test process peaked at {own} KB: too big to measure csp's");
    let script = Script::new("one.csp", "print(1)\n");
    // The least of three runs: page cache state varies a little.
    let peak = (0..3).map(|_| peak_kb(script.path())).min().unwrap();
    assert!(peak <= BOUND_KB, "`csp run` of print(1) peaked at {peak} KB resident (bound {BOUND_KB} KB)");
}

/// The peak resident size in KB of `csp run PATH`.
fn peak_kb(path: &str) -> i64 {
    let (code, out, peak) = common::peak_kb(&["run", path]);
    assert_eq!(code, 0, "csp run failed");
    assert_eq!(out, "1\n");
    peak
}

/// This process's peak resident size in KB (`VmHWM`).
fn own_peak_kb() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
