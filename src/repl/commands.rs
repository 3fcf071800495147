//! The REPL's `:commands`.

use super::Session;

const HELP: &str = "\
:help          this list
:quit          leave (also Ctrl-D)
:load FILE     run FILE in this session; its definitions stay
:fibers        every fiber: id, state, what it waits on, where it is
:disasm EXPR   the bytecode of an expression or statement
Ctrl-C cancels the running entry, or clears the line being typed.
";

pub fn run(s: &mut Session, line: &str) {
    let (cmd, arg) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, a)| (c, a.trim()));
    match cmd {
        ":help" | ":h" => s.console.out(HELP),
        ":load" if !arg.is_empty() => match std::fs::read_to_string(arg) {
            Ok(src) => s.eval(arg, &src),
            Err(e) => s.fail(&format!("cannot read {arg}: {e}\n")),
        },
        ":fibers" => {
            let lines = crate::sched::session::describe_fibers(&s.vm);
            if lines.is_empty() {
                s.console.out("no fibers\n");
            }
            for l in lines {
                s.console.out(&format!("{l}\n"));
            }
        }
        ":disasm" if !arg.is_empty() => disasm(s, arg),
        _ => s.fail(&format!("unknown command {line:?}; :help lists them\n")),
    }
}

/// Compiles `src` as an entry, without running it, and prints its code.
fn disasm(s: &mut Session, src: &str) {
    if let Some(proto) = s.compile_entry("<repl>", src) {
        s.console.out(&crate::bytecode::disasm::disasm(&proto, &s.vm.heap));
    }
}
