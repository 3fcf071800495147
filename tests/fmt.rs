//! `csp fmt` over every `.csp` file of the repository (examples, std, tests):
//! formatting is idempotent and never changes what a file compiles to; and
//! the command line (in place, `--check`, stdin, syntax errors, skipped files).

mod common;
use csp::runner;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::rc::Rc;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// The bytecode listing of `src` compiled as `name`, without line numbers;
/// or its compile errors' messages.
fn compiled(name: &str, src: &str) -> String {
    let mut vm =
        csp::embed::Runtime::new(csp::embed::Options { caps: csp::embed::Caps::all(), ..Default::default() }).into_vm();
    let file = Rc::new(csp::source::SourceFile::new(name, src));
    match runner::compile(&mut vm, &file) {
        Ok(proto) => csp::bytecode::disasm::disasm(&proto, &vm.heap)
            .lines()
            .map(|l| match l.find(" line ") {
                Some(i) => {
                    format!("{}{}", &l[..i], l[i + 6..].trim_start_matches(|c: char| c.is_ascii_digit() || c == ' '))
                }
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(diags) => diags.iter().map(|d| format!("error: {}\n", d.message)).collect(),
    }
}

#[test]
fn formatting_the_repository_is_idempotent_and_keeps_the_bytecode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "std", "tests"] {
        common::csp_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 300, "found only {} files", files.len());
    // The comparison sees a changed operator but not moved lines.
    let a = "let a = 2\nprint(1 + a)\n";
    assert!(compiled("x.csp", a).contains("Add"), "{}", compiled("x.csp", a));
    assert_ne!(compiled("x.csp", a), compiled("x.csp", &a.replace('+', "-")));
    assert_eq!(compiled("x.csp", a), compiled("x.csp", "\n\nlet a = 2\nprint(1 +\n    a)\n"));
    // The compiler recurses; give it the binary's stack.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let (mut formatted, mut unparsable) = (0, 0);
            for path in &files {
                let src = std::fs::read_to_string(path).unwrap();
                let name = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                if csp::fmt::ignored(&src) {
                    continue;
                }
                let out = match csp::fmt::format_source(&src) {
                    Ok(out) => out,
                    Err(errs) => {
                        assert_eq!(errs[0].code, "csp::syntax", "{name}: {}", errs[0].message);
                        unparsable += 1;
                        continue;
                    }
                };
                formatted += 1;
                assert_eq!(csp::fmt::format_source(&out).unwrap(), out, "{name}: formatting twice changes it");
                // The repository is formatted already: check a respaced copy
                // (other indentation, spaces and blank lines) formats back.
                let scrambled = csp::fmt::scramble(&src);
                assert_eq!(compiled(&name, &scrambled), compiled(&name, &src), "{name}: respacing changed it");
                let back = csp::fmt::format_source(&scrambled).unwrap();
                assert_eq!(back, out, "{name}: a respaced copy formats differently");
                if out != src {
                    assert_eq!(compiled(&name, &out), compiled(&name, &src), "{name}: the bytecode changed");
                }
            }
            assert!(formatted > 300, "formatted only {formatted} files");
            assert_eq!(unparsable, 0, "files that do not parse need `// fmt: ignore-file`");
        })
        .unwrap()
        .join()
        .unwrap();
}

fn csp_fmt(args: &[&str], dir: &Path, stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(CSP)
        .arg("fmt")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// A fresh temp directory holding `files`, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str, files: &[(&str, &str)]) -> Dir {
        let dir = std::env::temp_dir().join(format!("csp_fmt_{}_{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, src) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, src).unwrap();
        }
        Dir(dir)
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

const UGLY: &str = "let x=1\n";
const NICE: &str = "let x = 1\n";
const BROKEN: &str = "let x = (1\n";

#[test]
fn fmt_rewrites_files_under_the_current_directory_and_names_them() {
    let d = Dir::new("inplace", &[("a.csp", UGLY), ("sub/b.csp", NICE), ("sub/c.txt", UGLY), (".hidden/d.csp", UGLY)]);
    let o = csp_fmt(&[], &d.0, "");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "./a.csp\n");
    assert_eq!(d.read("a.csp"), NICE);
    assert_eq!(d.read("sub/c.txt"), UGLY);
    assert_eq!(d.read(".hidden/d.csp"), UGLY);
    // A file named on the command line is formatted whatever its name.
    let o = csp_fmt(&["sub/c.txt"], &d.0, "");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(d.read("sub/c.txt"), NICE);
}

#[test]
fn check_writes_nothing_and_fails_when_a_file_would_change() {
    let d = Dir::new("check", &[("a.csp", UGLY), ("b.csp", NICE)]);
    let o = csp_fmt(&["--check", "."], &d.0, "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "./a.csp: not formatted (first difference on line 1)\n");
    assert_eq!(d.read("a.csp"), UGLY);
    let o = csp_fmt(&["--check", "b.csp"], &d.0, "");
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}

#[test]
fn a_syntax_error_is_reported_as_check_does_and_the_file_left_alone() {
    let d = Dir::new("broken", &[("bad.csp", BROKEN), ("ok.csp", UGLY)]);
    let o = csp_fmt(&["."], &d.0, "");
    let check = Command::new(CSP).args(["check", "bad.csp"]).current_dir(&d.0).env("NO_COLOR", "1").output().unwrap();
    assert_eq!(o.status.code(), check.status.code());
    assert_eq!(o.status.code(), Some(2));
    let (fmt_err, check_err) = (String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&check.stderr));
    assert_eq!(fmt_err.replace("./bad.csp", "bad.csp"), check_err);
    assert_eq!(d.read("bad.csp"), BROKEN);
    // The other files are still formatted.
    assert_eq!(d.read("ok.csp"), NICE);
}

#[test]
fn a_file_marked_ignore_file_is_skipped_even_if_it_does_not_parse() {
    let marked = format!("// fmt: ignore-file\n{BROKEN}");
    let d = Dir::new("ignored", &[("bad.csp", &marked)]);
    let o = csp_fmt(&["--check", "."], &d.0, "");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(d.read("bad.csp"), marked);
}

#[test]
fn a_dash_formats_stdin_to_stdout() {
    let d = Dir::new("stdin", &[]);
    std::fs::create_dir_all(&d.0).unwrap();
    let o = csp_fmt(&["-"], &d.0, UGLY);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), NICE);
    let o = csp_fmt(&["--check", "-"], &d.0, UGLY);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let o = csp_fmt(&["-"], &d.0, BROKEN);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("<stdin>"));
}

#[test]
fn bad_command_lines_exit_64() {
    let d = Dir::new("usage", &[]);
    std::fs::create_dir_all(&d.0).unwrap();
    assert_eq!(csp_fmt(&["--nope"], &d.0, "").status.code(), Some(64));
    assert_eq!(csp_fmt(&["missing.csp"], &d.0, "").status.code(), Some(64));
    assert_eq!(csp_fmt(&["-", "x.csp"], &d.0, "").status.code(), Some(64));
}
