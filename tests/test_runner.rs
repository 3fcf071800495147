//! `csp test`'s runner (docs/testing.md): `-j N` files at once on threads of
//! one process, with output in file order, `--bench` in `go test -bench`'s columns, `--json` events, and how a
//! `test.eq` diff reads in the report.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A fresh folder under the temp dir holding `files`, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str, files: &[(&str, &str)]) -> Dir {
        let d = std::env::temp_dir().join(format!("csp_runner_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for (name, src) in files {
            std::fs::write(d.join(name), src).unwrap();
        }
        Dir(d)
    }

    fn test(&self, args: &[&str]) -> (i32, String) {
        let o: Output = Command::new(CSP)
            .arg("test")
            .args(args)
            .arg(".")
            .current_dir(&self.0)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.is_empty() || o.status.code() == Some(1), "stderr: {err}");
        (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SLOW_A: &str = "fn test_a() { sleep(1000)\n print(\"from a\") }\n";
const SLOW_B: &str = "fn test_b() { sleep(1000)\n throw error(\"b failed\") }\n";

/// Two files sleeping a second each finish in well under two seconds with
/// `-j 2`; their output comes whole and in file order, and a failure exits 1.
#[test]
fn jobs_run_files_at_once_and_show_them_in_order() {
    let d = Dir::new("jobs", &[("a_test.csp", SLOW_A), ("b_test.csp", SLOW_B), ("c_test.csp", "fn test_c() { }\n")]);
    let began = Instant::now();
    let (code, out) = d.test(&["-j", "3"]);
    let took = began.elapsed();
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "from a\nPASS a_test.csp::test_a\nFAIL b_test.csp::test_b: b failed\n    at test_b (b_test.csp:2:8)\n\
         PASS c_test.csp::test_c\n2 passed, 1 failed\n"
    );
    assert!(took < Duration::from_millis(1800), "took {took:?}: the files did not run at once");
    // The same report as one process gives.
    let (code1, out1) = d.test(&[]);
    assert_eq!((code1, out1), (code, out));
    let (code, out) = d.test(&["-j", "2", "--run", "test_c"]);
    assert_eq!((code, out.as_str()), (0, "PASS c_test.csp::test_c\n1 passed, 0 failed\n"));
}

/// `-j` runs the files in one process, each in a VM of its own: a global of
/// one file is not another's, a file using `std/isolate` works, and a file's
/// `exit(3)` fails that file, not the run.
#[test]
fn jobs_run_files_as_isolates_of_one_process() {
    let file = |n: u32| {
        format!(
            "import \"std/os\"\nimport \"std/isolate\"\nlet seen = []\n\
             fn sq(x) {{ return x * x }}\n\
             fn test_{n}() {{\n    seen.push({n})\n    print(\"{n}:\", os.pid(), seen, wait isolate.run(sq, {n}))\n}}\n"
        )
    };
    let (a, b) = (file(2), file(3));
    let d =
        Dir::new("isolates", &[("a_test.csp", &a), ("b_test.csp", &b), ("c_test.csp", "exit(3)\nfn test_x() { }\n")]);
    let (code, out) = d.test(&["-j", "2"]);
    assert_eq!(code, 1, "{out}");
    let pid = |n: &str| out.lines().find_map(|l| l.strip_prefix(n)).map(|l| l.split(' ').nth(1).unwrap().to_string());
    let (pa, pb) = (pid("2:").expect(&out), pid("3:").expect(&out));
    assert_eq!(pa, pb, "one process: {out}");
    assert!(out.contains(&format!("2: {pa} [2] 4\n")) && out.contains(&format!("3: {pa} [3] 9\n")), "{out}");
    assert!(out.contains("FAIL c_test.csp: the file failed to load or run (exit code 3)"), "{out}");
    assert!(out.ends_with("2 passed, 1 failed\n"), "{out}");
}

/// `--bench` runs only `bench_*`, each with `b.n` grown until a run takes
/// `--benchtime`; a line per benchmark: name, iterations, ns/op.
#[test]
fn bench_prints_iterations_and_time_per_op() {
    let src = "fn test_not_run() { throw error(\"no\") }\n\
               fn bench_sum(b) {\n    let s = 0\n    for i in 0..b.n { s += i }\n}\n\
               fn bench_sleep(b) { for _ in 0..b.n { sleep(1) } }\n\
               fn bench_broken(b) { throw error(\"broken\") }\n";
    let d = Dir::new("bench", &[("x_test.csp", src)]);
    let (code, out) = d.test(&["--bench", "--benchtime", "100ms"]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    let sum: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(sum[0], "bench_sum   ", "names padded to the longest: {out}");
    let n: u64 = sum[1].trim().parse().unwrap();
    assert!(n >= 1000 && sum[1].len() >= 8, "{out}");
    let ns: f64 = sum[2].trim().strip_suffix(" ns/op").unwrap().trim().parse().unwrap();
    assert!(ns > 0.0 && ns * (n as f64) >= 1e8 * 0.5, "about 100 ms in all: {out}");
    // About a millisecond an op: no fraction shown, as Go past 1000 ns.
    let sleep: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(sleep[0], "bench_sleep ");
    let per_op: f64 = sleep[2].trim().strip_suffix(" ns/op").unwrap().parse().unwrap();
    assert!((1e6..3e6).contains(&per_op), "{out}");
    assert!(sleep[2].starts_with(' ') && !sleep[2].contains('.'), "{out}");
    assert!(lines[2].starts_with("FAIL x_test.csp::bench_broken: broken"), "{out}");
    assert!(lines[3].starts_with("    at bench_broken"), "{out}");
    assert_eq!(lines[4], "2 passed, 1 failed");
    assert!(!out.contains("test_not_run"));
    let (code, only) = d.test(&["--bench=sum", "--benchtime", "10ms"]);
    assert_eq!(code, 0, "{only}");
    assert!(only.starts_with("bench_sum\t") && only.ends_with("\n1 passed, 0 failed\n"), "{only}");
    let (_, plain) = d.test(&[]);
    assert!(plain.contains("FAIL x_test.csp::test_not_run") && !plain.contains("bench_"), "{plain}");
}

/// `--json`: every line one JSON object; a test's output belongs to it.
#[test]
fn json_prints_an_event_per_line() {
    let d =
        Dir::new("json", &[("a_test.csp", "fn test_ok() { print(\"hi\") }\nfn test_bad() { throw error(\"no\") }\n")]);
    let (code, out) = d.test(&["--json", "-j", "2"]);
    assert_eq!(code, 1);
    let events: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let brief: Vec<String> = events
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            format!("{} {} {} {}", s("Action"), s("File"), s("Test"), s("Output").trim_end())
        })
        .collect();
    assert_eq!(
        brief,
        [
            "run a_test.csp test_ok ",
            "output a_test.csp test_ok hi",
            "pass a_test.csp test_ok ",
            "run a_test.csp test_bad ",
            "output a_test.csp test_bad no",
            "output a_test.csp test_bad     at test_bad (a_test.csp:2:23)",
            "fail a_test.csp test_bad ",
            "fail a_test.csp  ",
            "fail   ",
        ]
    );
    assert!(events[2]["Elapsed"].is_f64() && events[7]["Elapsed"].is_f64(), "{out}");
    assert_eq!((events[8]["Passed"].as_i64(), events[8]["Failed"].as_i64()), (Some(1), Some(1)));
    // A file that does not compile is a failed file event (its errors on stderr).
    let d = Dir::new("json_bad", &[("bad_test.csp", "fn test_a() {\n  let x =\n}\n")]);
    let (code, out) = d.test(&["--json"]);
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["Action"], "fail");
    assert_eq!(lines[0]["File"], "bad_test.csp");
    assert_eq!(lines[0]["Output"], "FAIL bad_test.csp: the file does not compile\n");
}

/// A failed `test.eq` of lists shows the paths that differ, indented under the test.
#[test]
fn eq_diffs_read_in_the_report() {
    let src = "import \"std/test\"\nfn test_x() { test.eq([{k: 1}, \"a\\nb\"], [{k: 2}, \"a\\nc\"]) }\n";
    let d = Dir::new("diff", &[("d_test.csp", src)]);
    let (_, out) = d.test(&[]);
    assert_eq!(
        out,
        "FAIL d_test.csp::test_x: expected [{\"k\": 2}, \"a\\nc\"], got [{\"k\": 1}, \"a\\nb\"]; \
         differing (actual != expected):\n    [0].k: 1 != 2\n    [1]: \"a\\nb\" != \"a\\nc\"\n    \
         at test_x (d_test.csp:2:15)\n0 passed, 1 failed\n"
    );
}

/// The runner's options where they make no sense are usage mistakes (exit 64).
#[test]
fn misplaced_runner_options_are_usage_errors() {
    let d = Dir::new("usage", &[("a_test.csp", "fn test_a() { }\n"), ("p.csp", "print(1)\n")]);
    let cases: [&[&str]; 8] = [
        &["run", "--json", "p.csp"],
        &["check", "--bench", "p.csp"],
        &["test", "-j", "0", "."],
        &["test", "-j", "2", "--trace", "t.json", "."],
        &["test", "-j", "2", "--profile", "p.pb.gz", "."],
        &["test", "--bench", "--explore", "2", "."],
        &["run", "--explore", "2", "--coverage", "c.lcov", "p.csp"],
        &["test", "--benchtime", "soon", "."],
    ];
    for args in cases {
        let o = Command::new(CSP).args(args).current_dir(&d.0).output().unwrap();
        assert_eq!(o.status.code(), Some(64), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    // One schedule is one run: counted.
    let o = Command::new(CSP)
        .args(["run", "--explore-seed", "2", "--coverage", "c.lcov", "p.csp"])
        .current_dir(&d.0)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(std::fs::read_to_string(d.0.join("c.lcov")).unwrap().contains("DA:1,1\n"));
}
