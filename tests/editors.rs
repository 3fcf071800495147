//! The editor support in `editors/` (see editors/README.md):
//! - the tree-sitter grammar: its generated files match `grammar.js`, its
//!   corpus tests and queries pass, and it parses every `examples/` and `std/`
//!   file, and every `tests/` file that `csp check` accepts, without an
//!   ERROR or MISSING node;
//! - the VS Code extension's node tests (the TextMate grammar over the same
//!   files, and the extension starting `csp lsp`).
//!
//! They need the `tree-sitter` CLI (`cargo install tree-sitter-cli --locked`)
//! and `node` with `npm`. Without them a test prints what it skipped and
//! passes, unless the environment variable `CI` is set: then it fails.

mod common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// True when `tool --version` runs; otherwise says what was skipped (or, under
/// CI, fails).
fn have(tool: &str, what: &str, install: &str) -> bool {
    if matches!(Command::new(tool).arg("--version").output(), Ok(o) if o.status.success()) {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("`{tool}` is not installed but CI is set, so {what} cannot be skipped: {install}");
    }
    eprintln!("skipped {what}: `{tool}` not found; {install}");
    false
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Parses `files` with the grammar in `grammar`; panics listing the files
/// with ERROR or MISSING nodes.
fn parse_all(grammar: &Path, files: &[PathBuf], what: &str) {
    let mut cmd = Command::new("tree-sitter");
    cmd.args(["parse", "--quiet", "--grammar-path"]).arg(grammar).args(files);
    let out = run(&mut cmd);
    let report = text(&out);
    let bad: Vec<&str> = report.lines().filter(|l| l.contains("ERROR") || l.contains("MISSING")).collect();
    assert!(
        out.status.success() && bad.is_empty(),
        "tree-sitter cannot parse some of {what} ({} files):\n{}",
        files.len(),
        if bad.is_empty() { report.clone() } else { bad.join("\n") }
    );
}

#[test]
fn tree_sitter_grammar() {
    if !have("tree-sitter", "the tree-sitter grammar tests", "install it with `cargo install tree-sitter-cli --locked`")
    {
        return;
    }
    let root = root();
    let grammar = root.join("editors/tree-sitter-csp");

    // The committed generated files come from grammar.js (parser.c itself
    // also depends on the CLI's version, so it is not compared).
    let gen = std::env::temp_dir().join(format!("csp_tree_sitter_{}", std::process::id()));
    let out = run(Command::new("tree-sitter")
        .args(["generate", "--js-runtime", "native", "--output"])
        .arg(&gen)
        .current_dir(&grammar));
    assert!(out.status.success(), "tree-sitter generate failed:\n{}", text(&out));
    for f in ["grammar.json", "node-types.json"] {
        let fresh = std::fs::read_to_string(gen.join(f)).unwrap();
        let committed = std::fs::read_to_string(grammar.join("src").join(f)).unwrap();
        assert!(
            fresh == committed,
            "editors/tree-sitter-csp/src/{f} is stale: run `tree-sitter generate` in editors/tree-sitter-csp"
        );
    }
    std::fs::remove_dir_all(&gen).unwrap();

    let out = run(Command::new("tree-sitter").arg("test").current_dir(&grammar));
    assert!(out.status.success(), "tree-sitter test failed:\n{}", text(&out));

    for q in ["highlights", "locals"] {
        let out = run(Command::new("tree-sitter")
            .args(["query", "--quiet", "--grammar-path"])
            .arg(&grammar)
            .arg(grammar.join(format!("queries/{q}.scm")))
            .arg(root.join("examples/bank_account.csp")));
        assert!(out.status.success(), "queries/{q}.scm does not compile:\n{}", text(&out));
    }

    let mut files = Vec::new();
    common::csp_files(&root.join("examples"), &mut files);
    common::csp_files(&root.join("std"), &mut files);
    assert!(files.len() > 50, "only {} files in examples/ and std/", files.len());
    parse_all(&grammar, &files, "examples/ and std/");

    // The tests' programs that the real parser accepts (the rest test errors).
    let mut tests = Vec::new();
    common::csp_files(&root.join("tests"), &mut tests);
    let accepted: Vec<PathBuf> =
        tests.iter().filter(|f| run(Command::new(CSP).arg("check").arg(f)).status.success()).cloned().collect();
    assert!(accepted.len() > 200, "only {} of {} tests/ files pass `csp check`", accepted.len(), tests.len());
    parse_all(&grammar, &accepted, "the tests/ files that `csp check` accepts");
    eprintln!(
        "tree-sitter parsed {} examples/std files and {} of {} tests/ files (those `csp check` accepts)",
        files.len(),
        accepted.len(),
        tests.len()
    );
}

#[test]
fn vscode_extension() {
    let install = "install Node.js and npm (Debian: `apt-get install nodejs npm`)";
    if !have("node", "the VS Code extension tests", install) || !have("npm", "the VS Code extension tests", install) {
        return;
    }
    let dir = root().join("editors/vscode");
    if !dir.join("node_modules/vscode-textmate").exists() {
        let out = run(Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir));
        assert!(out.status.success(), "npm ci in editors/vscode failed:\n{}", text(&out));
    }
    for t in ["test/grammar.test.js", "test/extension.test.js"] {
        let out = run(Command::new("node").arg(t).current_dir(&dir));
        assert!(out.status.success(), "node {t} failed:\n{}", text(&out));
    }
}
