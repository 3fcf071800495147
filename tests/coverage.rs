//! `--coverage` (docs/coverage.md): exact lcov counts of lines, functions and
//! `if` branches for `csp run` and `csp test`; std left out unless asked;
//! `-j`'s processes merged; `genhtml` (Debian's `lcov`) renders the file.
//! Without `genhtml` that test prints what it skipped and passes, unless the
//! environment variable `CI` is set: then it fails.

mod common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A fresh folder under the temp dir, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str, files: &[(&str, &str)]) -> Dir {
        let d = std::env::temp_dir().join(format!("csp_cov_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for (name, src) in files {
            std::fs::write(d.join(name), src).unwrap();
        }
        Dir(std::fs::canonicalize(&d).unwrap())
    }

    /// `csp ARGS` run in this folder.
    fn csp(&self, args: &[&str]) -> Output {
        Command::new(CSP).args(args).current_dir(&self.0).env("NO_COLOR", "1").output().unwrap()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ok(o: &Output) {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(o.status.success(), "{:?}\nstdout:\n{}\nstderr:\n{}", o.status, text(&o.stdout), text(&o.stderr));
}

/// The record of the file whose path ends with `/name`, without its `SF:` line.
fn record(lcov: &str, name: &str) -> String {
    let start = lcov.find(&format!("/{name}\n")).unwrap_or_else(|| panic!("no record of {name} in\n{lcov}"));
    let rest = &lcov[start..];
    let body = &rest[rest.find('\n').unwrap() + 1..];
    body[..body.find("end_of_record").unwrap()].to_string()
}

const PROGRAM: &str = "\
fn classify(n) {
    if n % 2 == 0 {
        return \"even\"
    }
    return \"odd\"
}

fn never() {
    return 1
}

let total = 0
for i in 0..4 {
    total += i
    if i > 10 {
        print(\"big\")
    } else {
        print(classify(i))
    }
}
print(total)
";

/// Lines count the statements that start on them (a function's first line its
/// calls); each `if` has two branches, taken and not taken, and each loop two,
/// its iterations and its ends.
const PROGRAM_COUNTS: &str = "\
FN:1,classify
FN:8,never
FNDA:4,classify
FNDA:0,never
FNF:2
FNH:1
BRDA:2,0,0,2
BRDA:2,0,1,2
BRDA:13,0,0,4
BRDA:13,0,1,1
BRDA:15,0,0,0
BRDA:15,0,1,4
BRF:6
BRH:5
DA:1,4
DA:2,4
DA:3,2
DA:5,2
DA:8,0
DA:9,0
DA:12,1
DA:13,1
DA:14,4
DA:15,4
DA:16,0
DA:18,4
DA:21,1
LF:13
LH:10
";

#[test]
fn run_counts_lines_functions_and_branches() {
    let d = Dir::new("run", &[("prog.csp", PROGRAM)]);
    let o = d.csp(&["run", "--coverage", "out.lcov", "prog.csp"]);
    ok(&o);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "even\nodd\neven\nodd\n6\n");
    let lcov = d.read("out.lcov");
    assert!(lcov.starts_with(&format!("TN:\nSF:{}\n", d.0.join("prog.csp").display())), "{lcov}");
    assert_eq!(record(&lcov, "prog.csp"), PROGRAM_COUNTS);
    assert!(lcov.ends_with("end_of_record\n"), "{lcov}");
    // An `if` that never ran has no branch taken or not: `-`.
    let src = "fn f(x) {\n    if x { print(1) }\n}\nprint(2)\nlet g = [fn() => 1, fn() => 2]\nprint(g[1]())\nlet k = 0\nwhile k < 3 { k += 1 }\nwhile true { break }\n";
    let d = Dir::new("unreached", &[("p.csp", src)]);
    ok(&d.csp(&["run", "--coverage", "c.lcov", "p.csp"]));
    let r = record(&d.read("c.lcov"), "p.csp");
    assert!(r.contains("BRDA:2,0,0,-\nBRDA:2,0,1,-\nBRDA:8,0,0,3\nBRDA:8,0,1,1\nBRDA:9,0,0,1\nBRDA:9,0,1,1\n"), "{r}");
    assert!(r.contains("BRF:6\nBRH:4\n"), "{r}");
    assert!(r.contains("FNDA:0,f\n") && r.contains("DA:2,0\nDA:4,1\n"), "{r}");
    // Anonymous functions are named by their place.
    assert!(r.contains("FN:5,<fn>@5:10\nFN:5,<fn>@5:21\n"), "{r}");
    assert!(r.contains("FNDA:0,<fn>@5:10\nFNDA:1,<fn>@5:21\n"), "{r}");
}

const LIB: &str = "fn double(x) {\n    return x * 2\n}\n";
const A_TEST: &str = "import \"std/test\"\nimport \"./lib.csp\" as lib\nfn test_a() { test.eq(lib.double(2), 4) }\n";
const B_TEST: &str = "import \"std/test\"\nimport \"./lib.csp\" as lib\nfn test_b() { test.eq(lib.double(3), 6) }\n";

#[test]
fn test_counts_user_code_and_std_only_when_asked() {
    let d = Dir::new("test", &[("lib.csp", LIB), ("a_test.csp", A_TEST), ("b_test.csp", B_TEST)]);
    for jobs in ["1", "2"] {
        ok(&d.csp(&["test", "-j", jobs, "--coverage", "t.lcov", "."]));
        let lcov = d.read("t.lcov");
        // Both files' runs (one process or two) add up.
        assert_eq!(
            record(&lcov, "lib.csp"),
            "FN:1,double\nFNDA:2,double\nFNF:1\nFNH:1\nBRF:0\nBRH:0\nDA:1,2\nDA:2,2\nLF:2\nLH:2\n"
        );
        assert!(record(&lcov, "a_test.csp").contains("FNDA:1,test_a\n"), "{lcov}");
        assert_eq!(lcov.matches("SF:").count(), 3, "std and the generated driver are left out: {lcov}");
    }
    ok(&d.csp(&["test", "-j", "2", "--coverage", "s.lcov", "--coverage-std", "."]));
    let lcov = d.read("s.lcov");
    let std_test = record(&lcov, "std/test.csp");
    assert!(std_test.contains("FNDA:2,eq\n"), "{std_test}");
    assert!(lcov.contains(&format!("SF:{}/std/test.csp\n", env!("CARGO_MANIFEST_DIR"))), "{lcov}");
    let o = d.csp(&["test", "--coverage-std", "."]);
    assert_eq!(o.status.code(), Some(64), "--coverage-std alone is a usage mistake");
}

/// genhtml reads the file without complaint and writes a page for the source.
#[test]
fn genhtml_renders_the_report() {
    if !common::have("genhtml", "rendering coverage with genhtml", "install Debian's `lcov` package") {
        return;
    }
    let d = Dir::new("html", &[("prog.csp", PROGRAM)]);
    ok(&d.csp(&["run", "--coverage", "out.lcov", "prog.csp"]));
    let o = Command::new("genhtml")
        .args(["--branch-coverage", "--function-coverage", "out.lcov", "-o", "html"])
        .current_dir(&d.0)
        .output()
        .unwrap();
    ok(&o);
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("10 of 13 lines") && summary.contains("5 of 6 branches"), "{summary}");
    let mut pages = Vec::new();
    find(&d.0.join("html"), &mut pages);
    let index = pages.iter().find(|p| p.ends_with("index.html") && p.parent() != Some(&d.0.join("html")));
    let index = std::fs::read_to_string(index.expect("a folder page")).unwrap();
    assert!(index.contains("prog.csp"), "{index}");
    assert!(pages.iter().any(|p| p.file_name().is_some_and(|n| n == "prog.csp.gcov.html")), "{pages:?}");
}

fn find(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            find(&e.path(), out);
        } else {
            out.push(e.path());
        }
    }
}
