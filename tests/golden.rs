//! Golden tests: every `examples/NAME.csp` must print exactly `examples/NAME.out`;
//! every `tests/lang/**/*.csp` must meet its `// expect` comments:
//!   `// expect: LINE`                 the next line of stdout
//!   `// expect error: TEXT`           compile error (exit 2) whose report contains TEXT
//!   `// expect runtime error: TEXT`   uncaught runtime error (exit 1) containing TEXT
//!   `// expect exit: N`               the exit code (examples too; default 0)
//!   `// expect stderr: TEXT`          stderr (`eprint`, then the report) contains TEXT

use csp::runner;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_file(path: &str) -> Run {
    let root = env!("CARGO_MANIFEST_DIR");
    let src = std::fs::read_to_string(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"));
    let path = path.to_string();
    // The same generous stack the `csp` binary runs on.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let mut vm =
                csp::embed::Runtime::new(csp::embed::Options { caps: csp::embed::Caps::all(), ..Default::default() })
                    .into_vm();
            vm.out.capture();
            let out = runner::run_source(&mut vm, &path, &src, false);
            Run {
                code: out.exit_code,
                stdout: String::from_utf8_lossy(&vm.out.take()).into_owned(),
                // `eprint` output, then the report.
                stderr: String::from_utf8_lossy(&vm.out.take_err()).into_owned() + &out.stderr,
            }
        })
        .unwrap()
        .join()
        .expect("interpreter panicked")
}

fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i).copied(), a.get(i).copied());
        if x != y {
            out.push_str(&format!("line {}:\n  expected: {:?}\n  actual:   {:?}\n", i + 1, x, y));
        }
    }
    out
}

/// The `// expect exit: N` and `// expect stderr: TEXT` directives of a file.
fn exit_directives(src: &str) -> (Option<i32>, Vec<String>) {
    let mut code = None;
    let mut stderr = Vec::new();
    for l in src.lines() {
        if let Some(i) = l.find("// expect exit: ") {
            code = l[i + "// expect exit: ".len()..].trim().parse().ok();
        }
        if let Some(i) = l.find("// expect stderr: ") {
            stderr.push(l[i + "// expect stderr: ".len()..].trim().to_string());
        }
    }
    (code, stderr)
}

fn check_example(path: &str) {
    let run = run_file(path);
    let root = env!("CARGO_MANIFEST_DIR");
    let src = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
    let (code, stderr) = exit_directives(&src);
    let out_path = format!("{root}/{}", path.replace(".csp", ".out"));
    let expected = std::fs::read_to_string(&out_path).unwrap_or_else(|e| panic!("{out_path}: {e}"));
    assert_eq!(run.code, code.unwrap_or(0), "{path} exited {}:\n{}", run.code, run.stderr);
    for s in stderr {
        assert!(run.stderr.contains(&s), "{path}: stderr lacks {s:?}:\n{}", run.stderr);
    }
    if run.stdout != expected {
        panic!("{path}: output differs from its .out\n{}", diff(&expected, &run.stdout));
    }
}

fn check_lang(path: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let src = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
    let mut lines = Vec::new();
    let mut compile_err = None;
    let mut runtime_err = None;
    for l in src.lines() {
        if let Some(i) = l.find("// expect") {
            let rest = &l[i + "// expect".len()..];
            if let Some(t) = rest.strip_prefix(": ") {
                lines.push(t.to_string());
            } else if let Some(t) = rest.strip_prefix(" error: ") {
                compile_err = Some(t.trim().to_string());
            } else if let Some(t) = rest.strip_prefix(" runtime error: ") {
                runtime_err = Some(t.trim().to_string());
            } else if rest.trim() == ":" {
                lines.push(String::new());
            }
        }
    }
    let (code, stderr) = exit_directives(&src);
    assert!(
        !lines.is_empty() || compile_err.is_some() || runtime_err.is_some() || code.is_some(),
        "{path} has no expectations"
    );
    let run = run_file(path);
    let expected_code = if let Some(c) = code {
        c
    } else if compile_err.is_some() {
        2
    } else if runtime_err.is_some() {
        1
    } else {
        0
    };
    assert_eq!(run.code, expected_code, "{path}: exit code {} (want {expected_code})\n{}", run.code, run.stderr);
    for msg in compile_err.into_iter().chain(runtime_err).chain(stderr) {
        assert!(run.stderr.contains(&msg), "{path}: report lacks {msg:?}:\n{}", run.stderr);
    }
    let mut expected = lines.join("\n");
    if !lines.is_empty() {
        expected.push('\n');
    }
    if run.stdout != expected {
        panic!("{path}: output differs\n{}\nstderr:\n{}", diff(&expected, &run.stdout), run.stderr);
    }
}

include!(concat!(env!("OUT_DIR"), "/golden_tests.rs"));
