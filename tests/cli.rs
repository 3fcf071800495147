//! The `csp` command line, driven as a user would: the real binary, real files,
//! exit codes, stdout and stderr.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

mod common;
use common::Script;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn csp(args: &[&str]) -> Output {
    Command::new(CSP).args(args).env("NO_COLOR", "1").output().unwrap()
}

/// Runs csp with `input` on its stdin (and a temporary home, for the REPL's history).
fn csp_with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(CSP)
        .args(args)
        .env("NO_COLOR", "1")
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "status {:?}\nstdout:\n{}\nstderr:\n{}", o.status, stdout(o), stderr(o));
    assert!(!stderr(o).contains("panicked"), "panic:\n{}", stderr(o));
}

#[test]
fn help() {
    let o = csp(&["--help"]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("run"), "{out}");
    assert!(out.contains("check") && out.contains("disasm"), "{out}");
}

#[test]
fn version() {
    let o = csp(&["--version"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "csp 0.1.0\n");
}

/// No arguments start the REPL; without a terminal it reads entries from stdin.
#[test]
fn no_args_reads_entries_from_piped_stdin() {
    let o = csp_with_stdin(&[], b"let x = 20\nfn f(a) {\n  return a * 2\n}\nf(x) + 2\n\"s\"\n");
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert_eq!(out, "42\n\"s\"\n");
}

/// `csp test`: a line per test, a summary, exit 1 on any failure, a timeout for a
/// test that hangs, and no wait for fibers a test left behind.
#[test]
fn test_command_reports_each_test() {
    let dir = std::env::temp_dir().join(format!("csp_test_cmd_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("sample_test.csp"),
        "import \"std/test\"\n\
         fn test_passes() { test.eq(1 + 1, 2) }\n\
         fn test_fails() { test.eq(1 + 1, 3) }\n\
         fn test_hangs() { while true { sleep(10) } }\n\
         fn test_deadlocks() { let c = chan()\n <-c }\n\
         fn test_leaves_a_fiber() { go { chan() <- 1 } }\n\
         fn helper() { throw error(\"not a test\") }\n",
    )
    .unwrap();
    std::fs::write(dir.join("other.csp"), "fn test_not_in_a_test_file() { throw error(\"no\") }\n").unwrap();
    let began = std::time::Instant::now();
    let o = csp(&["test", "--timeout", "300", dir.to_str().unwrap()]);
    let took = began.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    assert_exit(&o, 1);
    let out = stdout(&o);
    assert!(out.contains("PASS ") && out.contains("sample_test.csp::test_passes\n"), "{out}");
    assert!(out.contains("sample_test.csp::test_fails: expected 3, got 2"), "{out}");
    assert!(out.contains("sample_test.csp::test_hangs: timed out after 300 ms"), "{out}");
    // A test that can never finish is reported at once, where it is blocked.
    assert!(out.contains("sample_test.csp::test_deadlocks: deadlock: no fiber can make progress\n"), "{out}");
    assert!(out.contains("blocked on receive from channel <chan 0/0> at "), "{out}");
    assert!(!out.contains("<csp test>"), "{out}");
    assert!(out.contains("sample_test.csp::test_leaves_a_fiber\n"), "{out}");
    assert!(out.ends_with("2 passed, 3 failed\n"), "{out}");
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}

/// `--run` selects tests by name; nothing to run is not a failure; a file that
/// does not compile is reported as itself, never through the generated driver.
#[test]
fn test_command_selects_and_reports_files() {
    let dir = std::env::temp_dir().join(format!("csp_test_sel_{}", std::process::id()));
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    std::fs::write(dir.join("a_test.csp"), "fn test_one() { }\nfn test_two() { throw error(\"two\") }\n").unwrap();
    let o = csp(&["test", "--run", "one", dir.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("a_test.csp::test_one\n") && !stdout(&o).contains("test_two"), "{}", stdout(&o));
    assert!(stdout(&o).ends_with("1 passed, 0 failed\n"), "{}", stdout(&o));
    for args in [vec!["--run", "nothing_matches", dir.to_str().unwrap()], vec![dir.join("empty").to_str().unwrap()]] {
        let o = csp(&[&["test"], &args[..]].concat());
        assert_exit(&o, 0);
        assert!(stdout(&o).starts_with("no tests under "), "{}", stdout(&o));
    }
    std::fs::write(dir.join("bad_test.csp"), "fn test_a() {\n  let x =\n}\n").unwrap();
    let o = csp(&["test", dir.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_exit(&o, 1);
    assert!(stdout(&o).contains("bad_test.csp: the file does not compile\n"), "{}", stdout(&o));
    assert!(stderr(&o).contains("bad_test.csp:3:1"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("<csp test>") && !stderr(&o).contains("__t"), "{}", stderr(&o));
}

/// Piped into the REPL (`csp < script`), entries run in turn and the exit code
/// says whether one failed.
#[test]
fn piped_repl_input_exits_non_zero_after_a_failed_entry() {
    let o = csp_with_stdin(&[], b"print(1)\nprint(2)\n");
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "1\n2\n");
    for bad in [&b"print(1)\nundefined_name\nprint(2)\n"[..], b"print(1 / 0)\nprint(2)\n", b":nonsense\nprint(2)\n"] {
        let o = csp_with_stdin(&[], bad);
        assert_exit(&o, 1);
        assert!(stdout(&o).ends_with("2\n"), "later entries still run: {}", stdout(&o));
    }
}

#[test]
fn test_command_with_a_missing_path() {
    let o = csp(&["test", "no/such/folder"]);
    assert_exit(&o, 64);
    assert!(stderr(&o).contains("no such file or folder: no/such/folder"), "{}", stderr(&o));
}

/// The standard library's own tests, written in csp, pass.
#[test]
fn std_library_tests_pass() {
    let root = env!("CARGO_MANIFEST_DIR");
    let o = csp(&["test", &format!("{root}/tests/std")]);
    let out = stdout(&o);
    assert_exit(&o, 0);
    assert!(out.contains(" passed, 0 failed\n"), "{out}");
}

#[test]
fn repl_takes_no_arguments() {
    let o = csp(&["repl", "x.csp"]);
    assert_exit(&o, 64);
    assert!(stderr(&o).contains("`csp repl` takes no arguments"), "{}", stderr(&o));
}

#[test]
fn unknown_command() {
    let o = csp(&["frobnicate"]);
    assert_exit(&o, 64);
    assert!(stderr(&o).contains("unknown command"), "{}", stderr(&o));
}

#[test]
fn unknown_option() {
    let o = csp(&["--frobnicate", "run", "x.csp"]);
    assert_exit(&o, 64);
    assert!(stderr(&o).contains("unknown option"), "{}", stderr(&o));
    // A near miss gets the name it was probably meant as, and one line of
    // usage rather than the whole help.
    let o = csp(&["run", "--timout", "5s", "x.csp"]);
    assert_exit(&o, 64);
    assert_eq!(
        stderr(&o),
        "csp: unknown option '--timout'; did you mean `--timeout`?\n\
         usage: csp [OPTIONS] [COMMAND] [FILE] [ARGS...]  (`csp --help` lists them)\n"
    );
    let o = csp(&["chekc", "x.csp"]);
    assert!(stderr(&o).contains("unknown command 'chekc'; did you mean `check`?"), "{}", stderr(&o));
}

#[test]
fn run_without_file() {
    for cmd in ["run", "check", "disasm"] {
        let o = csp(&[cmd]);
        assert_exit(&o, 64);
        assert!(stderr(&o).contains("needs a FILE"), "{}", stderr(&o));
    }
}

#[test]
fn missing_file() {
    let path = std::env::temp_dir().join(format!("csp_cli_missing_{}.csp", std::process::id()));
    for cmd in ["run", "check", "disasm"] {
        let o = csp(&[cmd, path.to_str().unwrap()]);
        assert_exit(&o, 64);
        let want = format!("csp: cannot read {}: No such file or directory\n", path.display());
        // Just the reason: a missing file is not a usage mistake, so no help text.
        assert_eq!(stderr(&o), want);
    }
    let o = csp(&[path.to_str().unwrap()]);
    assert_exit(&o, 64);
    assert!(!stderr(&o).contains("Usage"), "{}", stderr(&o));
}

/// `csp FILE ARGS...` runs the file like `csp run`, so an executable script
/// starting `#!/usr/bin/env csp` runs from the shell.
#[test]
fn file_as_the_command_and_shebang_scripts() {
    let s = Script::new("cli.csp", "#!/usr/bin/env csp\nprint(\"args:\", args())\n");
    let o = csp(&[s.path(), "a", "b"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "args: [\"a\", \"b\"]\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin_dir = std::path::Path::new(CSP).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new(s.path()).arg("x").env("PATH", path).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "args: [\"x\"]\n", "{}", String::from_utf8_lossy(&o.stderr));
    // A mistyped command is still a usage error.
    let o = csp(&["rnu"]);
    assert_exit(&o, 64);
    assert!(stderr(&o).contains("unknown command 'rnu'"), "{}", stderr(&o));
}

#[test]
fn check_good_file() {
    let s = Script::new("cli.csp", "fn f(x) { return x * 2 }\nprint(f(21))\n");
    let o = csp(&["check", s.path()]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "", "check must not run the program");
    assert_eq!(stderr(&o), "");
}

/// Both syntax errors are reported in one pass, each with its line.
#[test]
fn check_two_syntax_errors() {
    let s = Script::new("cli.csp", "let x = 1\nlet = 2\nprint(x)\nlet y = )\n");
    let o = csp(&["check", s.path()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.matches("csp::syntax").count(), 2, "{err}");
    assert!(err.contains(":2:5]"), "first error at line 2:\n{err}");
    assert!(err.contains(":4:9]"), "second error at line 4:\n{err}");
    assert!(err.contains("let = 2") && err.contains("let y = )"), "{err}");
}

#[test]
fn check_undefined_name() {
    let s = Script::new("cli.csp", "let x = 1\nprint(y)\n");
    let o = csp(&["check", s.path()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("undefined name 'y'"), "{err}");
    assert!(err.contains(":2:7]"), "{err}");
    // `run` reports the same before running anything.
    let s = Script::new("cli.csp", "print(\"ran\")\nprint(y)\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 2);
    assert_eq!(stdout(&o), "");
}

/// `check` reports calls of known top-level functions with the wrong number
/// of arguments; `run` keeps them catchable runtime errors.
#[test]
fn check_arity_of_known_functions() {
    let src = "fn add(a, b) { return a + b }\nfn greet(n, g = \"hi\") { return g }\nfn sum(x, ...xs) { return x }\n\
               fn one(x) { return x }\nfn shadow(one) { return one(1, 2, 3) }\nlet later = 0\nfn r() { return later }\nlater = 1\n\
               print(add(1, 2), greet(\"a\"), sum(1, 2, 3), r())\n\
               try { add(1) } catch e { print(e.message) }\ngo greet(1, 2, 3)\nprint(sum())\n";
    let s = Script::new("cli.csp", src);
    let o = csp(&["check", s.path()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.matches("csp::check").count(), 3, "{err}");
    assert!(err.contains("add expects 2 arguments, got 1") && err.contains(":10:7]"), "{err}");
    assert!(err.contains("help: `add` is declared as add(a, b)"), "{err}");
    assert!(err.contains("greet expects 1 to 2 arguments, got 3"), "{err}");
    assert!(err.contains("sum expects at least 1 argument, got 0"), "{err}");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), "3 hi 1 1\nadd expects 2 arguments, got 1\n");
}

#[test]
fn disasm() {
    let s = Script::new("cli.csp", "fn f(x) { return x + 1 }\nprint(f(1))\n");
    let o = csp(&["disasm", s.path()]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("Return"), "{out}");
    assert!(out.contains("<main>") && out.contains("f"), "{out}");
    // A loop that only tests its item says it may make each over the last.
    let s = Script::new("cli.csp", "for l in [\"a\"] { if l == \"b\" { print(1) } }\nfor l in [\"a\"] { print(l) }\n");
    let out = stdout(&csp(&["disasm", s.path()]));
    assert_eq!(out.matches("IterNext").count(), 2, "{out}");
    assert_eq!(out.matches("(each item made over the last)").count(), 1, "{out}");
    // Compile errors are reported as by `check`.
    let s = Script::new("cli.csp", "let = 1\n");
    let o = csp(&["disasm", s.path()]);
    assert_exit(&o, 2);
}

/// Arithmetic and orderings with a float literal, and compound assignments
/// with a number literal, carry it in the instruction itself
/// (tests/lang/arith/float_literal_operand.csp and compound_literal.csp check
/// that they agree with the general forms).
#[test]
fn disasm_float_literal_operands() {
    let src = "fn f(x, y) { if x * x > 4.0 { return 2.0 * y - 1.5 } return y / 2.0 }\n\
               fn g(o) { o.n += 1\n o.x *= 0.5 }\n";
    let s = Script::new("cli.csp", src);
    let out = stdout(&csp(&["disasm", s.path()]));
    for op in
        ["MulK { dst: 2, a: 1, k: 2, rev: true }", "SubK", "DivK", "JmpUnlessK { cmp: Gt", "AddI", "MulK { dst: 1"]
    {
        assert!(out.contains(op), "{op} in {out}");
    }
    assert!(!out.contains("LoadK") && !out.contains("LoadInt"), "{out}");
}

#[test]
fn run_with_args() {
    let s = Script::new("cli.csp", "print(args())\nprint(len(args()))\n");
    let o = csp(&["run", s.path(), "a", "b c", "--seed", "-x"]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "[\"a\", \"b c\", \"--seed\", \"-x\"]\n4\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "[]\n0\n");
}

/// An uncaught error: exit 1, the message, the source line with a marker, and a
/// stack trace naming every function from the innermost out.
#[test]
fn runtime_error_report() {
    let s = Script::new(
        "cli.csp",
        "print(\"before\")\nfn a() { b() }\nfn b() { c() }\nfn c() { throw error(\"boom\") }\na()\n",
    );
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), "before\n", "output before the error is flushed");
    let err = stderr(&o);
    assert!(err.contains("boom"), "{err}");
    assert!(err.contains("fn c() { throw error(\"boom\") }"), "source line:\n{err}");
    assert!(err.contains("───"), "span marker:\n{err}");
    let at = |name: &str| err.find(&format!("at {name} (")).unwrap_or_else(|| panic!("no frame {name}:\n{err}"));
    assert!(at("c") < at("b") && at("b") < at("a") && at("a") < at("<main>"), "trace order:\n{err}");
    assert!(err.contains(":4:"), "c's frame names its line:\n{err}");
}

/// A builtin runtime error (not `throw`) is reported the same way.
#[test]
fn runtime_error_from_the_vm() {
    let s = Script::new("cli.csp", "let xs = [1, 2]\nfn get(i) { return xs[i] }\nprint(get(5))\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("csp::runtime"), "{err}");
    assert!(err.contains("return xs[i]"), "{err}");
    assert!(err.contains("at get ("), "{err}");
}

#[test]
fn uncaught_throw_of_a_value() {
    let s = Script::new("cli.csp", "throw {code: 7}\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("uncaught throw: {\"code\": 7}"), "{}", stderr(&o));
    let s = Script::new("cli.csp", "fn f() { throw \"plain\" }\nf()\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("uncaught throw: \"plain\""), "{}", stderr(&o));
    assert!(stderr(&o).contains("at f ("), "{}", stderr(&o));
}

/// `csp run x.csp | head -1`: the reader goes away; the binary sees EPIPE and
/// exits 0 without a panic message.
#[test]
fn closed_stdout_pipe_exits_quietly() {
    let s = Script::new("cli.csp", "for i in 0..100000 { print(\"line ${i}\") }\n");
    let mut child =
        Command::new(CSP).args(["run", s.path()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    {
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    } // drops the read end of the pipe
    let o = child.wait_with_output().unwrap();
    assert_eq!(first, "line 0\n");
    assert_exit(&o, 0);
    assert_eq!(stderr(&o), "");
}

/// A program that never stops printing stops when its reader goes away (the
/// runtime ends it; the library never exits the process itself).
#[test]
fn closed_stdout_pipe_stops_an_endless_printer() {
    let s = Script::new("cli.csp", "go { while true { sleep(1) } }\nwhile true { print(\"y\") }\n");
    let mut child =
        Command::new(CSP).args(["run", s.path()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    {
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        reader.read_line(&mut first).unwrap();
        assert_eq!(first, "y\n");
    }
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    assert_eq!(stderr(&o), "");
}

/// The same for `disasm` of a big file, which writes its listing in one go.
#[test]
fn closed_stdout_pipe_disasm() {
    let s = Script::new("cli.csp", &format!("let x = 0\n{}", "x = x + 1\n".repeat(100_000)));
    let mut child =
        Command::new(CSP).args(["disasm", s.path()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    {
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(first.contains("<main>"), "{first}");
    assert_exit(&o, 0);
    assert_eq!(stderr(&o), "");
}

#[test]
fn seed() {
    let s = Script::new("cli.csp", "print(random(), random())\n");
    let run = |args: &[&str]| {
        let o = csp(args);
        assert_exit(&o, 0);
        stdout(&o)
    };
    let a5 = run(&["--seed", "5", "run", s.path()]);
    let b5 = run(&["--seed", "5", "run", s.path()]);
    let c6 = run(&["--seed", "6", "run", s.path()]);
    let d = run(&["run", s.path()]);
    let e = run(&["run", s.path()]);
    assert_eq!(a5, b5, "same seed, same numbers");
    assert_ne!(a5, c6, "different seeds, different numbers");
    assert_ne!(d, e, "without --seed, random() differs from run to run");
    // seed(n) in the program repeats as --seed n does.
    let p = Script::new("cli.csp", "seed(5)\nprint(random(), random())\n");
    assert_eq!(run(&["run", p.path()]), a5);
    // The option may also follow the command.
    assert_eq!(run(&["run", "--seed", "5", s.path()]), a5);
    for bad in [&["--seed", "x", "run", s.path()][..], &["--seed"][..], &["run", "--seed", s.path()][..]] {
        let o = csp(bad);
        assert_exit(&o, 64);
    }
}

/// `select`'s choices keep a fixed default seed (golden output stays stable);
/// `--seed` changes them; exploring repeats `random()` so a replay is the same run.
#[test]
fn select_choices_repeat_without_a_seed() {
    let src = "let a = chan(100)\nlet b = chan(100)\nfor i in 0..40 { a <- 1; b <- 2 }\nlet picks = []\n\
               for i in 0..40 { select { case v = <-a { picks.push(v) } case v = <-b { picks.push(v) } } }\nprint(picks)\n";
    let s = Script::new("cli.csp", src);
    let run = |args: &[&str]| {
        let o = csp(args);
        assert_exit(&o, 0);
        stdout(&o)
    };
    let plain = run(&["run", s.path()]);
    assert_eq!(plain, run(&["run", s.path()]));
    assert_ne!(plain, run(&["--seed", "7", "run", s.path()]));
    let r = Script::new("cli.csp", "print(random())\n");
    assert_eq!(run(&["run", "--explore-seed", "3", r.path()]), run(&["run", "--explore-seed", "3", r.path()]));
}

/// Invalid UTF-8 in a script is a clean exit 2.
#[test]
fn invalid_utf8_file() {
    let path = std::env::temp_dir().join(format!("csp_cli_utf8_{}.csp", std::process::id()));
    std::fs::write(&path, b"print(1)\n\xff\n").unwrap();
    let o = csp(&["run", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("UTF-8"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
}

/// Stack overflow in a script: exit 1 with the message, never a crash.
#[test]
fn deep_recursion_via_cli() {
    let s = Script::new("cli.csp", "fn f(n) { return f(n + 1) }\nf(0)\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("stack overflow"), "{}", stderr(&o));
}

/// `read_line` reads stdin through the I/O pool while other fibers keep running;
/// the prompt printed before it appears first; end of input gives nil.
#[test]
fn read_line_from_stdin() {
    let s = Script::new(
        "cli.csp",
        "let ticks = go { for i in 0..3 { sleep(1) }; return \"ticked\" }\n\
         print(\"name?\")\n\
         let a = read_line()\n\
         let b = read_line()\n\
         print(\"hello\", a, b, wait ticks)\n",
    );
    let o = csp_with_stdin(&["run", s.path()], b"ada\n");
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "name?\nhello ada nil ticked\n");
}

/// `--slice-us` is accepted; 0 is a bad command line.
#[test]
fn slice_flag() {
    let s = Script::new("cli.csp", "print(1)\n");
    assert_exit(&csp(&["run", "--slice-us", "200", s.path()]), 0);
    assert_exit(&csp(&["run", "--slice-us", "0", s.path()]), 64);
}

/// A due timer ends a CPU-bound fiber's slice at its next preemption point:
/// with 300 ms slices, a 20 ms sleep still wakes about on time (without this,
/// it would wait out the spinning fiber's slice).
#[test]
fn a_due_timer_ends_a_long_slice() {
    let src = "fn spin() {\n    let t0 = now()\n    while now() - t0 < 500 {}\n}\nlet t = go spin()\nlet t0 = now()\nsleep(20)\nlet lag = now() - t0 - 20\nwait t\nprint(lag < 150, lag)\n";
    let s = Script::new("cli.csp", src);
    let o = csp(&["run", "--slice-us", "300000", s.path()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).starts_with("true "), "{}", stdout(&o));
}

/// A deadlock exits 3 with a report naming the blocked fiber and where it waits.
#[test]
fn deadlock_report() {
    let s = Script::new("cli.csp", "let ch = chan()\nfn f() { ch <- 1; ch <- 2 }\ngo f()\n<-ch\n<-ch\n<-ch\n");
    let o = csp(&["run", s.path()]);
    assert_exit(&o, 3);
    let err = stderr(&o);
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("main fiber blocked on receive from channel"), "{err}");
    assert!(err.contains(":6:"), "{err}");
}

/// Guards (issue 16): output that cannot be written is an error, never a
/// silent exit 0 or a panic — stdout on a full disk (`/dev/full`) or closed,
/// an error report on a full stderr — and piped REPL input that is not UTF-8
/// fails that entry and goes on.
#[test]
fn output_and_input_failures_are_reported() {
    let dir = std::env::temp_dir().join(format!("csp-outfail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("p.csp");
    std::fs::write(&script, "print(\"hi\")\n").unwrap();
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = Command::new(CSP).args(["run", script.to_str().unwrap()]).stdout(full()).output().unwrap();
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("cannot write to stdout: No space left on device"), "{}", stderr(&o));
    // stdout closed: `>&-` in a shell.
    let o = Command::new("/bin/sh").arg("-c").arg(format!("{CSP} run {} >&-", script.display())).output().unwrap();
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("cannot write to stdout: Bad file descriptor"), "{}", stderr(&o));
    // An uncaught error with stderr full: exit 1, no panic (exit 101/70).
    std::fs::write(&script, "throw \"boom\"\n").unwrap();
    let o = Command::new(CSP).args(["run", script.to_str().unwrap()]).stderr(full()).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
    // Piped REPL input with a line that is not UTF-8.
    let o = csp_with_stdin(&[], b"print(1)\nprint(\"\xff\")\nprint(2)\n");
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), "1\n2\n");
    assert!(stderr(&o).contains("input line is not valid UTF-8"), "{}", stderr(&o));
}
