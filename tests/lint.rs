//! Lint warnings (docs/lint.md). Each `tests/lint/*.csp` marks the lines
//! where `csp check` must warn with `// warn: CODE[, CODE]` (the part after
//! `csp::lint::`); a warning on an unmarked line fails, so each file tests
//! what stays quiet too. The project's own examples, std and std tests must
//! have no warnings at all. The command line: exit codes, `--deny-warnings`,
//! and `csp run` printing none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// `csp check`'s diagnostics for a file: (line, code) of each warning, and the errors' messages.
fn check(path: &Path) -> (Vec<(usize, String)>, Vec<String>) {
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let src = std::fs::read_to_string(&path).unwrap();
            let file = std::rc::Rc::new(csp::source::SourceFile::new(path.to_string_lossy(), src.clone()));
            let diags = csp::runner::check(
                csp::embed::Runtime::new(csp::embed::Options { caps: csp::embed::Caps::all(), ..Default::default() })
                    .vm(),
                &file,
            );
            let line = |at: u32| src[..at as usize].matches('\n').count() + 1;
            let (warnings, errors): (Vec<_>, Vec<_>) = diags.into_iter().partition(|d| d.is_warning());
            let warnings = warnings
                .into_iter()
                .map(|d| (line(d.span.start), d.code.trim_start_matches("csp::lint::").to_string()))
                .collect();
            (warnings, errors.into_iter().map(|d| d.message).collect())
        })
        .unwrap()
        .join()
        .expect("check panicked")
}

/// The `// warn:` marks of a file: line → codes.
fn marks(src: &str) -> BTreeMap<usize, Vec<String>> {
    let mut out = BTreeMap::new();
    for (i, l) in src.lines().enumerate() {
        if let Some(at) = l.find("// warn: ") {
            let codes = l[at + "// warn: ".len()..].split(',').map(|c| c.trim().to_string()).collect();
            out.insert(i + 1, codes);
        }
    }
    out
}

fn csp_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            csp_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "csp") {
            out.push(p);
        }
    }
}

#[test]
fn each_rule_warns_where_marked_and_nowhere_else() {
    let mut files = Vec::new();
    csp_files(&Path::new(ROOT).join("tests/lint"), &mut files);
    assert!(files.len() >= 7, "{files:?}");
    let mut failures = String::new();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let (warnings, errors) = check(&f);
        assert!(errors.is_empty(), "{}: errors {errors:?}", f.display());
        let mut got: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (line, code) in warnings {
            got.entry(line).or_default().push(code);
        }
        got.values_mut().for_each(|v| v.sort());
        let mut want = marks(&src);
        want.values_mut().for_each(|v| v.sort());
        for line in got.keys().chain(want.keys()).collect::<std::collections::BTreeSet<_>>() {
            if got.get(line) != want.get(line) {
                let text = src.lines().nth(line - 1).unwrap_or("");
                failures += &format!(
                    "{}:{line}: expected {:?}, got {:?}\n    {text}\n",
                    f.display(),
                    want.get(line),
                    got.get(line)
                );
            }
        }
    }
    assert!(failures.is_empty(), "\n{failures}");
}

#[test]
fn the_projects_own_code_has_no_warnings() {
    let mut files = Vec::new();
    for dir in ["examples", "std", "tests/std"] {
        csp_files(&Path::new(ROOT).join(dir), &mut files);
    }
    assert!(files.len() > 50, "{}", files.len());
    let mut found = String::new();
    for f in files {
        for (line, code) in check(&f).0 {
            found += &format!("{}:{line}: {code}\n", f.display());
        }
    }
    assert!(found.is_empty(), "warnings on the project's own code:\n{found}");
}

fn csp(args: &[&str], dir: &Path) -> (i32, String, String) {
    let o = Command::new(CSP).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code().unwrap_or(-1), text(&o.stdout), text(&o.stderr))
}

#[test]
fn check_exits_0_on_warnings_unless_denied_and_run_prints_none() {
    let dir = std::env::temp_dir().join(format!("csp-lint-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("warn.csp"), "fn f() {\n    let unused = 1\n    return 2\n}\nprint(f())\n").unwrap();
    std::fs::write(dir.join("both.csp"), "fn f() {\n    let unused = 1\n    return nope\n}\n").unwrap();
    std::fs::write(dir.join("clean.csp"), "print(1)\n").unwrap();

    let (code, out, err) = csp(&["check", "warn.csp"], &dir);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("csp::lint::unused_variable"), "{err}");
    assert!(err.contains("⚠ variable 'unused' is never used"), "{err}");
    assert!(err.contains("warn.csp:2:9"), "{err}");
    assert!(err.contains("help: remove it, or start its name with `_`"), "{err}");

    let (code, _, err) = csp(&["check", "--deny-warnings", "warn.csp"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unused_variable"), "{err}");
    let (code, _, _) = csp(&["--deny-warnings", "check", "clean.csp"], &dir);
    assert_eq!(code, 0);

    // Errors still exit 2, with the warnings beside them.
    let (code, _, err) = csp(&["check", "both.csp"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("undefined name 'nope'") && err.contains("unused_variable"), "{err}");

    // `csp run` never prints warnings.
    let (code, out, err) = csp(&["run", "warn.csp"], &dir);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "2\n", ""));
    let (code, _, err) = csp(&["run", "--deny-warnings", "warn.csp"], &dir);
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("--deny-warnings is for `csp check`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
