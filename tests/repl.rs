//! The REPL driven through a real pseudo-terminal, as a user types into it.

use rexpect::session::PtySession;
use std::path::PathBuf;
use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A REPL session with its own home folder (for the history file).
struct Repl {
    p: PtySession,
    home: PathBuf,
}

impl Repl {
    fn start(name: &str) -> Repl {
        let home = std::env::temp_dir().join(format!("csp_repl_{name}_{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = Command::new(CSP);
        cmd.env("HOME", &home).env("NO_COLOR", "1").env("TERM", "xterm");
        let mut p = rexpect::session::spawn_command(cmd, Some(10_000)).unwrap();
        p.exp_string("csp> ").unwrap();
        Repl { p, home }
    }

    /// Types a line and waits for `want` in the output that follows it, then for
    /// the next prompt. (The editor redraws the line as it is typed, so output
    /// starts at the first newline. Waiting for each prompt keeps the output in
    /// step; the tests below type ahead without waiting.)
    fn line(&mut self, text: &str, want: &str) {
        self.p.send_line(text).unwrap();
        self.p.exp_string("\r\n").unwrap();
        self.p.exp_string(want).unwrap_or_else(|e| panic!("after {text:?}, no {want:?}: {e}"));
        if !want.ends_with("> ") {
            self.p.exp_regex(r"(csp|\.\.\.)> ").unwrap();
        }
    }

    /// Types a line and waits for the next prompt.
    fn entry(&mut self, text: &str) {
        self.line(text, "csp> ");
    }

    /// Sends `text` at once (one write unless the pty is full), not waiting for
    /// any prompt: as fast as a paste or a quick typist.
    fn send_now(&mut self, text: &str) {
        let mut rest = text;
        while !rest.is_empty() {
            let n = self.p.send(rest).unwrap();
            rest = &rest[n..];
        }
        self.p.flush().unwrap();
    }

    /// Waits until the editor has taken `line` (its Enter moves to a new line).
    fn accepted(&mut self, line: &str) {
        self.p.exp_string(line).unwrap();
        self.p.exp_string("\r\n").unwrap();
    }

    /// Waits for a line of output reading `want`; a name left undefined (a line
    /// lost) fails at once rather than at the timeout.
    fn output(&mut self, want: &str) {
        let (_, got) = self.p.exp_regex(&format!(r"\n{want}\r\n|undefined name '\w+'")).unwrap();
        assert_eq!(got.trim(), want, "input was lost");
    }

    /// `:quit`: the session ends with exit code 0. (A line, not Ctrl-D: a
    /// Ctrl-D sent before the next prompt is up reaches the terminal in its
    /// cooked mode, where it only ends a read that nobody is doing; Ctrl-D at
    /// the prompt is tested on its own.)
    fn quit(mut self) {
        self.p.send_line(":quit").unwrap();
        self.p.exp_eof().unwrap();
        // nix's WaitStatus is not re-exported; its Debug form names the code.
        let status = format!("{:?}", self.p.process().wait().unwrap());
        assert!(status.starts_with("Exited(") && status.ends_with(", 0)"), "REPL ended with {status}");
    }
}

impl Drop for Repl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

#[test]
fn echoes_values_and_keeps_definitions() {
    let mut r = Repl::start("echo");
    r.line("40 + 2", "42");
    r.entry("let base = 100");
    r.line("base + _", "142");
    r.line("\"a\" + \"b\"", "\"ab\"");
    r.line("[1, \"x\", nil]", "[1, \"x\", nil]");
    r.quit();
}

#[test]
fn multi_line_function_definition() {
    let mut r = Repl::start("multiline");
    r.line("fn add(a, b) {", "...> ");
    r.line("  return a +", "...> ");
    r.line("    b", "...> ");
    r.entry("}");
    r.line("add(19, 23)", "42");
    r.quit();
}

#[test]
fn errors_leave_the_session_working() {
    let mut r = Repl::start("errors");
    r.line("nope + 1", "undefined name 'nope'");
    r.line("throw error(\"broken\")", "broken");
    r.line("let x = (", "...> ");
    r.line(")", "expected an expression");
    r.line("6 * 7", "42");
    // An entry that fails to compile defines nothing.
    r.line("fn f() { return g() }", "undefined name 'g'");
    r.line("f", "undefined name 'f'");
    r.line("let y = 1; let z = nope", "undefined name 'nope'");
    r.line("y", "undefined name 'y'");
    r.quit();
}

#[test]
fn background_fiber_output_appears_while_idle() {
    let mut r = Repl::start("background");
    r.entry("let ch = chan(1)");
    r.entry("go { sleep(200); print(\"tick from fiber\"); ch <- 5 }");
    // Nothing is typed: the scheduler runs while the prompt waits.
    r.p.exp_string("tick from fiber").unwrap();
    r.line("<-ch", "5");
    r.line("go { throw error(\"fiber failed\") }", "fiber failed");
    r.line("1 + 1", "2");
    r.quit();
}

#[test]
fn ctrl_c_cancels_a_long_sleep() {
    let mut r = Repl::start("ctrlc");
    let began = std::time::Instant::now();
    r.p.send_line("try { sleep(30000) } finally { print(\"cleaned up\") }").unwrap();
    r.p.exp_string("\r\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    r.p.send_control('c').unwrap();
    r.p.exp_string("cleaned up").unwrap();
    r.p.exp_string("cancelled").unwrap();
    r.p.exp_string("csp> ").unwrap();
    assert!(began.elapsed() < std::time::Duration::from_secs(10));
    r.line("\"still here\"", "\"still here\"");
    r.quit();
}

#[test]
fn isolates_run_entries_functions_in_the_background_and_ctrl_c_cancels_one() {
    let mut r = Repl::start("isolates");
    r.entry("import \"std/isolate\"");
    r.entry("let scale = 3");
    r.entry("fn f(x) { return x * scale }");
    // A function of one entry, a lambda of another, the first entry's import.
    r.line("isolate.map(f, [1, 2, 3])", "[3, 6, 9]");
    r.line("wait isolate.run(fn(x) => f(x) + 1, 2)", "7");
    // A job left running in the background reports while the prompt waits.
    r.entry("let t = isolate.run(fn() { sleep(300); print(\"job done\"); return 5 })");
    r.p.exp_string("job done").unwrap();
    r.line("wait t", "5");
    // Ctrl-C cancels the entry waiting on a job, and the job with it: its
    // finally runs there, to its end, before the next prompt.
    let job = "wait isolate.run(fn() { try { sleep(30000) } finally { sleep(200); print(\"job cleaned up\") } })";
    r.p.send_line(job).unwrap();
    r.p.exp_string("\r\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    r.p.send_control('c').unwrap();
    r.p.exp_string("job cleaned up").unwrap();
    r.p.exp_string("cancelled").unwrap();
    r.p.exp_string("csp> ").unwrap();
    r.line("1 + 1", "2");
    r.quit();
}

#[test]
fn commands_and_history() {
    let mut r = Repl::start("commands");
    r.line(":help", ":fibers");
    r.entry("let c = chan()");
    r.entry("go { <-c }");
    r.line(":fibers", "blocked on receive");
    r.line(":disasm 1 + 2", "LoadInt");
    let file = r.home.join("defs.csp");
    std::fs::write(&file, "fn triple(x) {\n    return x * 3\n}\n").unwrap();
    r.entry(&format!(":load {}", file.display()));
    r.line("triple(14)", "42");
    let history = r.home.join(".csp_history");
    r.p.send_line(":quit").unwrap();
    r.p.exp_eof().unwrap();
    let saved = std::fs::read_to_string(history).unwrap();
    assert!(saved.contains("triple(14)"), "{saved}");
}

#[test]
fn imports_persist_and_can_be_replaced() {
    let mut r = Repl::start("imports");
    r.entry("import \"std/async\"");
    r.line("async.pmap([1, 2, 3], 2, fn(x) { return x * 10 })", "[10, 20, 30]");
    r.entry("let async = \"now a string\"");
    r.line("async.upper()", "\"NOW A STRING\"");
    r.quit();
}

#[test]
fn fiber_output_keeps_the_half_typed_line() {
    let mut r = Repl::start("halfline");
    r.entry("go { sleep(300); print(\"interrupting\") }");
    r.p.send("40 +").unwrap();
    r.p.exp_string("interrupting").unwrap();
    // The typed text survives the output and the entry completes normally.
    r.line(" 2", "42");
    r.quit();
}

#[test]
fn tab_completes_globals_and_methods() {
    let mut r = Repl::start("completion");
    r.entry("let favourite_number = 41");
    r.p.send("favourite_n\t").unwrap();
    r.line(" + 1", "42");
    r.p.send("\"abc\".upp\t").unwrap();
    r.line("()", "\"ABC\"");
    // Members by the receiver's type: a string literal, a list literal, a map
    // global's keys, a module's exports (`:commands` are unit-tested in reader.rs).
    r.p.send("\"ab\".rep\t").unwrap();
    r.line("(2)", "\"abab\"");
    r.p.send("[3, 1].sli\t").unwrap();
    r.line("(1)", "[1]");
    r.entry("let settings = {alpha_value: 7}");
    r.p.send("settings.alp\t").unwrap();
    r.line("", "7");
    r.entry("import \"std/async\"");
    r.p.send("async.pm\t").unwrap();
    r.line("([1, 2], 2, fn(x) => x * 10)", "[10, 20]");
    r.quit();
}

/// A fiber outliving its entry keeps the entry's task (its owner) alive through
/// collections, so its failure can still be reported.
#[test]
fn background_failure_after_garbage_collection() {
    let mut r = Repl::start("gc");
    r.entry("go { sleep(100); let junk = []; for i in 0..400000 { junk.push([i]) }; throw error(\"late failure\") }");
    r.p.exp_string("late failure").unwrap();
    r.p.exp_string("csp> ").unwrap();
    r.line("1 + 1", "2");
    r.quit();
}

/// Lines typed while an entry runs all run afterwards, in order.
#[test]
fn type_ahead_during_a_running_entry() {
    let mut r = Repl::start("typeahead");
    r.send_now("sleep(1500)\n");
    r.send_now("let a = 1\nlet b = 2\nlet c = 3\nlet d = 4\n");
    r.send_now("print(a + b + c + d)\n");
    r.output("10");
    // Again once the entry is surely running (the editor took its line).
    r.p.exp_string("csp> ").unwrap();
    r.send_now("sleep(1000)\n");
    r.accepted("sleep(1000)");
    r.send_now("let e = 5\n");
    r.send_now("let f = 6\nprint(a + f + e)\n");
    r.output("12");
    r.quit();
}

/// A paste without bracketed paste mode is just fast typing: every line runs,
/// including a definition spread over several lines.
#[test]
fn paste_without_bracketed_paste() {
    let mut r = Repl::start("paste");
    let mut text: String = (1..=50).map(|i| format!("let x{i} = {i}\n")).collect();
    // Tabs included: without bracketed paste they arrive as Tab keys.
    text += "fn add3(a, b, c) {\n\tlet ab = a + b\n\treturn ab +\t\n\t\tc\n}\n";
    let sum: Vec<String> = (1..=50).map(|i| format!("x{i}")).collect();
    text += &format!("print(add3({}, 0, 0))\n", sum.join(" + "));
    r.send_now(&text);
    r.output("1275");
    r.quit();
}

/// Keys that arrive after an Enter, before the next prompt is drawn.
#[test]
fn keys_between_enter_and_the_next_prompt() {
    let mut r = Repl::start("afterenter");
    for i in 0..20 {
        r.send_now(&format!("print(\"got\" + str({i}))\n"));
    }
    for i in 0..20 {
        r.output(&format!("got{i}"));
    }
    for i in 0..5 {
        r.p.exp_string("csp> ").unwrap();
        r.send_now("sleep(100)\n");
        r.accepted("sleep(100)");
        r.send_now(&format!("print({i} * 1000 + 7)\n"));
        r.output(&format!("{}", i * 1000 + 7));
    }
    r.quit();
}

/// Ctrl-C cancels the running entry without discarding what was typed after
/// it, even when pressed right after the entry's Enter.
#[test]
fn ctrl_c_keeps_type_ahead() {
    let mut r = Repl::start("ctrlcahead");
    let began = std::time::Instant::now();
    r.send_now("try { sleep(30000) } finally { print(\"cleaned up\") }\nlet k = 40\n");
    r.accepted("print(\"cleaned up\") }");
    r.send_now("let m = 2\n");
    r.p.send_control('c').unwrap();
    r.p.exp_string("cleaned up").unwrap();
    r.p.exp_string("cancelled").unwrap();
    r.send_now("k + m\n");
    r.output("42");
    assert!(began.elapsed() < std::time::Duration::from_secs(10));
    r.quit();
}

/// Ctrl-C at the prompt, or Ctrl-D on an empty continuation line, drops the
/// half-typed entry but not the keys that follow in the same burst.
#[test]
fn keys_after_ctrl_c_and_ctrl_d_at_the_prompt() {
    let mut r = Repl::start("ctrlcprompt");
    r.send_now("let junk = (\n");
    r.p.exp_string("...> ").unwrap();
    r.send_now("oops\x03let z = 3\nz * 14\n");
    r.output("42");
    // At the prompt: while an entry runs the terminal takes Ctrl-D as its own
    // end of file, which a `read_line()` in the entry may be waiting for.
    r.p.exp_string("csp> ").unwrap();
    r.send_now("let more = [\n\x04let q = 6\nq * 7 + z\n");
    r.output("45");
    r.quit();
}

/// `exit(code)` from a fiber ends the session with that status while a prompt
/// is up, and `eprint` text written just before it still shows.
#[test]
fn exit_from_a_fiber_while_prompting() {
    let mut r = Repl::start("exit");
    r.line("go { sleep(300)\n eprint(\"bye from fiber\")\n exit(7) }", "csp> ");
    r.p.exp_string("bye from fiber").unwrap();
    r.p.exp_eof().unwrap();
    let status = format!("{:?}", r.p.process().wait().unwrap());
    assert!(status.starts_with("Exited(") && status.ends_with(", 7)"), "REPL ended with {status}");
}

/// Ctrl-D at an empty prompt ends the session with exit code 0.
#[test]
fn ctrl_d_at_the_prompt_quits() {
    let mut r = Repl::start("ctrld");
    r.line("1 + 1", "2");
    r.p.send_control('d').unwrap();
    r.p.exp_eof().unwrap();
    let status = format!("{:?}", r.p.process().wait().unwrap());
    assert!(status.starts_with("Exited(") && status.ends_with(", 0)"), "REPL ended with {status}");
}
