//! Schedule exploration (`--explore N`, `--explore-seed S`, docs/testing.md),
//! through the real binary: the races of `examples/races/` pass under the
//! default schedule, are found within 1,000 schedules, replay exactly from the
//! printed seed, and their fixed versions pass all 1,000.

use std::process::{Command, Output};

mod common;
use common::Script;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn csp(args: &[&str]) -> Output {
    Command::new(CSP).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).env("NO_COLOR", "1").output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The words of the `replay: csp ...` command in `out` (none is quoted here).
fn replay_args(out: &str) -> Vec<String> {
    let line = out.lines().find_map(|l| l.split_once("replay: csp ").map(|(_, r)| r)).expect("a replay command");
    line.split(' ').map(str::to_string).collect()
}

/// The schedule number of a `schedule S failed` line.
fn failed_seed(out: &str) -> u64 {
    let at = out.find("schedule ").expect("a failing schedule") + "schedule ".len();
    out[at..].split(' ').next().unwrap().parse().unwrap()
}

/// A racy test: passes alone under the default schedule; `--explore 1000`
/// finds a failing schedule; its replay fails the same way every time.
fn race_is_found_and_replays(file: &str, test: &str, failure: &str) {
    let label = format!("{file}::{test}");
    let plain = csp(&["test", "--run", &label, file]);
    assert!(plain.status.success(), "{label} fails under the default schedule:\n{}", text(&plain.stdout));

    let explored = csp(&["test", "--explore", "1000", "--run", &label, file]);
    let out = text(&explored.stdout);
    assert_eq!(explored.status.code(), Some(1), "{label}: no failing schedule found:\n{out}");
    assert!(out.contains(&format!("FAIL {label}: {failure}")), "{out}");
    let seed = failed_seed(&out);
    assert!(seed <= 1000);
    let args = replay_args(&out);
    assert_eq!(args, ["test", "--explore-seed", &seed.to_string(), "--run", &label, file]);
    // The failing run's report is the exploration's, every time.
    let report: Vec<&str> = out.lines().take_while(|l| !l.contains("replay:")).collect();
    for _ in 0..3 {
        let again = csp(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(again.status.code(), Some(1));
        let again = text(&again.stdout);
        let lines: Vec<&str> = again.lines().collect();
        assert_eq!(lines[..report.len()], report[..], "replay differs:\n{again}");
        assert_eq!(lines.last(), Some(&"0 passed, 1 failed"));
    }
}

/// A fixed test passes all 1,000 schedules.
fn fix_passes_every_schedule(file: &str, test: &str) {
    let label = format!("{file}::{test}");
    let out = csp(&["test", "--explore", "1000", "--run", &label, file]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(&format!("PASS {label} (1000 schedules, seeds 1-1000)")), "{stdout}");
}

#[test]
fn check_then_act_withdrawal_is_found() {
    let f = "examples/races/bank_test.csp";
    race_is_found_and_replays(f, "test_withdrawals_never_overdraw", "overdrawn: balance -60");
    fix_passes_every_schedule(f, "test_locked_withdrawals_never_overdraw");
}

#[test]
fn lost_update_is_found() {
    let f = "examples/races/lost_update_test.csp";
    race_is_found_and_replays(f, "test_counts_are_exact", "expected {\"the\": 16");
    fix_passes_every_schedule(f, "test_locked_counts_are_exact");
}

#[test]
fn deadlock_in_one_interleaving_is_found() {
    let f = "examples/races/forks_test.csp";
    race_is_found_and_replays(f, "test_diners_finish", "deadlock: no fiber can make progress");
    fix_passes_every_schedule(f, "test_ordered_diners_finish");
}

/// Isolates explored interleaved on one thread: a check-then-act through a
/// shared channel, between the main isolate and a worker, is found and
/// replays; holding the count (the channel as the lock) passes.
#[test]
fn race_between_isolates_is_found() {
    let f = "examples/races/last_seat_test.csp";
    let failure = r#"overbooked: ["main: booked", "worker: booked"], seats left -1"#;
    race_is_found_and_replays(f, "test_one_seat_is_booked_once", failure);
    fix_passes_every_schedule(f, "test_held_count_books_once");
}

/// Exploring, every isolate runs on one virtual clock: a worker's sleep
/// takes no real time and is seen whole by the main isolate's `now()`.
#[test]
fn isolates_share_the_virtual_clock() {
    let s = Script::new(
        "nap.csp",
        r#"
import "std/isolate"
fn nap(ms) {
    sleep(ms)
    return ms
}
let t0 = now()
print(wait isolate.run(nap, 60000))
print(now() - t0 >= 60000, now() - t0 < 61000)
"#,
    );
    for seed in ["1", "2", "3"] {
        let out = csp(&["run", "--explore-seed", seed, s.path()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "60000\ntrue true\n");
    }
}

/// `csp run --explore N`: the program form, stopping at the first failure
/// with the program's exit code and a replay command that reproduces it.
#[test]
fn run_explore_stops_at_the_first_failure_and_replays() {
    for (file, code, report) in [
        ("examples/races/bank.csp", 1, "overdrawn: balance -60"),
        ("examples/races/lost_update.csp", 1, "expected {\"the\": 16"),
        ("examples/races/forks.csp", 3, "deadlock: no fiber can make progress"),
        ("examples/races/last_seat.csp", 1, "overbooked"),
    ] {
        let plain = csp(&["run", file]);
        assert!(plain.status.success(), "{file}: {}", text(&plain.stderr));
        let out = csp(&["run", "--explore", "1000", file]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{file}: {err}");
        assert!(err.contains(report), "{err}");
        let seed = failed_seed(&err);
        let args = replay_args(&err);
        assert_eq!(args, ["run", "--explore-seed", &seed.to_string(), file]);
        let first = csp(&args.iter().map(String::as_str).collect::<Vec<_>>());
        for _ in 0..2 {
            let again = csp(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(again.status.code(), Some(code));
            assert_eq!(again.stdout, first.stdout);
            assert_eq!(again.stderr, first.stderr);
        }
        assert!(text(&first.stderr).contains(report));
    }
}

#[test]
fn run_explore_reports_schedules_passed() {
    let out = csp(&["run", "--explore", "20", "--explore-seed", "100", "examples/races/forks.csp"]);
    // Seeds 100-119 may or may not deadlock; either way the count is right.
    let err = text(&out.stderr);
    assert!(err.contains("20 schedules passed (seeds 100-119)") || err.contains("of 20 schedules"), "{err}");
}

/// Timers, `select`, `now()` and file I/O together: the same seed gives the
/// same output, byte for byte; other seeds give other interleavings.
#[test]
fn a_schedule_is_a_function_of_its_seed() {
    let data = Script::new("data.txt", "some text\n");
    let src = format!(
        r#"
import "std/fs"
let log = []
let c = chan(10)
let tk = ticker(1)
wait {{
    for i in 1..=4 {{
        go {{
            let s = fs.read({path:?})
            log.push("read ${{i}} at ${{now()}}")
            sleep(i % 2)
            c <- i
        }}
    }}
    go {{
        for k in 0..6 {{
            select {{
                case v = <-c {{ log.push("got ${{v}}") }}
                case <-tk {{ log.push("tick ${{now()}}") }}
            }}
        }}
    }}
    go {{
        let n = 0
        for j in 0..3000 {{ n += j }}
        log.push("sum at ${{now()}}")
    }}
}}
print(log)
"#,
        path = data.path()
    );
    let prog = Script::new("det.csp", &src);
    let mut outputs = std::collections::HashSet::new();
    for seed in 1..=8 {
        let s = seed.to_string();
        let first = csp(&["run", "--explore-seed", &s, prog.path()]);
        assert!(first.status.success(), "{}", text(&first.stderr));
        for _ in 0..2 {
            let again = csp(&["run", "--explore-seed", &s, prog.path()]);
            assert_eq!(text(&again.stdout), text(&first.stdout), "seed {seed} did not replay");
        }
        outputs.insert(first.stdout);
    }
    assert!(outputs.len() >= 4, "8 seeds gave only {} schedules", outputs.len());
}

/// Exploring, time is virtual: a long sleep costs nothing, and a loop that
/// never blocks still lets timers fire (the clock advances with instructions).
#[test]
fn time_is_virtual_when_exploring() {
    let prog = Script::new(
        "sleep.csp",
        "let t = now()\nsleep(60000)\nprint(now() - t >= 60000)\n\
         let stop = after(5)\nlet n = 0\nlet going = true\n\
         while going { n += 1\n select { case <-stop { going = false } default {} } }\nprint(n > 0)\n",
    );
    let began = std::time::Instant::now();
    let out = csp(&["run", "--explore-seed", "3", prog.path()]);
    assert_eq!(text(&out.stdout), "true\ntrue\n", "{}", text(&out.stderr));
    assert!(began.elapsed().as_secs() < 20);
    let test = Script::new("spin_test.csp", "fn test_spins() { while true {} }\nfn test_sleeps() { sleep(3600000) }\n");
    let out = csp(&["test", "--explore", "2", "--timeout", "50", test.path()]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("test_spins: timed out after 50 ms"), "{stdout}");
    assert!(stdout.contains("test_sleeps: timed out after 50 ms"), "{stdout}");
    assert!(stdout.contains("replay: csp test --timeout 50 --explore-seed 1 --run"), "{stdout}");
}

#[test]
fn explore_flags_are_checked() {
    let out = csp(&["run", "--explore", "0", "examples/races/bank.csp"]);
    assert_eq!(out.status.code(), Some(64));
    assert!(text(&out.stderr).contains("--explore needs a positive number of schedules"));
    let out = csp(&["run", "--explore-seed", "x", "examples/races/bank.csp"]);
    assert_eq!(out.status.code(), Some(64));
    let out = csp(&["--explore", "3"]);
    assert_eq!(out.status.code(), Some(64));
    assert!(text(&out.stderr).contains("are for `csp run` and `csp test`"));
}

/// `--seed` (the program's `random()`) is kept in the replay command.
#[test]
fn the_replay_keeps_the_random_seed() {
    let out = csp(&["run", "--seed", "7", "--explore", "1000", "examples/races/bank.csp"]);
    let err = text(&out.stderr);
    let args = replay_args(&err);
    assert_eq!(args[..3], ["run", "--seed", "7"]);
}

#[test]
fn rwlock_cleanup_of_a_cancelled_waiter_survives_every_schedule() {
    // It took `lock m` in the cancelled fiber, which throws again when m is
    // held: the request stayed queued and the next reader waited for ever.
    let o = csp(&[
        "test",
        "--explore",
        "300",
        "--run",
        "test_rwlock_cancelled_waiter_leaves_queue",
        "tests/std/sync_test.csp",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
}
