//! Source text to running program: parse, compile, run, and report failures with
//! the exit codes of the CLI (1 runtime error, 2 compile error).

use crate::bytecode::ProtoRef;
use crate::diag::{self, Diag};
use crate::source::SourceFile;
use crate::vm::{Obj, Uncaught, Value, Vm};
use std::rc::Rc;

pub const PRELUDE: &str = include_str!("../std/prelude.csp");
/// The prelude's file name (its frames are left out of stack traces).
pub use crate::source::PRELUDE_NAME;

/// Parses and compiles a file; all syntax errors, or all compile errors, on failure.
pub fn compile(vm: &mut Vm, file: &Rc<SourceFile>) -> Result<ProtoRef, Vec<Diag>> {
    compile_program(vm, file).map(|(proto, _)| proto)
}

/// `csp check`: compiles, then reports calls that must fail when they run,
/// then the lint's warnings (`Diag::is_warning`); errors come first.
pub fn check(vm: &mut Vm, file: &Rc<SourceFile>) -> Vec<Diag> {
    let program = match crate::syntax::parse(&file.src) {
        Ok(p) => p,
        Err(errs) => return errs.into_iter().map(syntax_diag).collect(),
    };
    let mut diags: Vec<Diag> = match crate::compile::compile(vm, file.clone(), &program) {
        Ok(_) => crate::check::arity(&program).into_iter().map(compile_diag).collect(),
        Err(errs) => errs.into_iter().map(compile_diag).collect(),
    };
    // Warnings too, even beside errors: the file parsed, so the lint can read it.
    diags.extend(crate::lint::lint(&program, &file.src));
    diags
}

fn compile_program(vm: &mut Vm, file: &Rc<SourceFile>) -> Result<(ProtoRef, crate::syntax::ast::Program), Vec<Diag>> {
    let program =
        crate::syntax::parse(&file.src).map_err(|errs| errs.into_iter().map(syntax_diag).collect::<Vec<_>>())?;
    let proto = crate::compile::compile(vm, file.clone(), &program)
        .map_err(|errs| errs.into_iter().map(compile_diag).collect::<Vec<_>>())?;
    Ok((proto, program))
}

/// Compiles an entry of a session that keeps its globals (a REPL line, an
/// embedding host's source): a final expression is the entry's value, its
/// top-level names become globals later entries see, and an entry that fails
/// to compile declares nothing. The error says "syntax" or "compile".
pub fn compile_entry(vm: &mut Vm, file: &Rc<SourceFile>) -> Result<ProtoRef, (&'static str, Vec<Diag>)> {
    use crate::syntax::ast::{ExprKind, StmtKind};
    let mut program = crate::syntax::parse(&file.src)
        .map_err(|errs| ("syntax", errs.into_iter().map(syntax_diag).collect::<Vec<_>>()))?;
    // A `go` stays a statement, so its failure still propagates at once.
    if let Some(last) = program.stmts.last_mut() {
        if let StmtKind::Expr(e) = &last.kind {
            if !matches!(e.kind, ExprKind::Go(_) | ExprKind::GoBlock(_)) {
                last.kind = StmtKind::Return(Some(e.clone()));
            }
        }
    }
    let unit = crate::compile::Unit { repl: true, ..Default::default() };
    let (globals, imports) = (vm.globals.len(), vm.loader.repl_imports.clone());
    crate::compile::compile_unit(vm, file.clone(), &program, unit).map_err(|errs| {
        vm.globals.truncate(globals);
        vm.global_names.retain(|_, &mut i| (i as usize) < globals);
        vm.loader.repl_imports = imports;
        ("compile", errs.into_iter().map(compile_diag).collect())
    })
}

/// The report for a syntax error.
pub fn syntax_diag(e: crate::syntax::SyntaxError) -> Diag {
    Diag { code: "csp::syntax", message: e.message, span: e.span, label: "here".into(), help: e.help, file: None }
}

/// The report for a compile error.
pub fn compile_diag(e: crate::compile::CompileError) -> Diag {
    Diag { code: e.code, message: e.message, span: e.span, label: "here".into(), help: e.help, file: e.file }
}

/// The report for an error that reached the top of a fiber.
pub fn runtime_diag(vm: &Vm, u: &Uncaught) -> Diag {
    // An error value's code names its kind (`csp::runtime::index`); a thrown
    // non-error value has the plain `csp::runtime`.
    let (message, label, code) = match u.value {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Error(e) => (e.message.to_string(), "error raised here", e.kind.code()),
            _ => {
                (format!("uncaught throw: {}", crate::display::repr(&vm.heap, u.value)), "thrown here", "csp::runtime")
            }
        },
        v => (format!("uncaught throw: {}", crate::display::repr(&vm.heap, v)), "thrown here", "csp::runtime"),
    };
    let mut help = String::from("stack trace:");
    for t in &u.trace {
        // Frames and fiber starts read "at ...", the cause of a cancellation as is.
        help.push_str(if t.starts_with("cancelled") { "\n  " } else { "\n  at " });
        help.push_str(t);
    }
    Diag { code, message, span: u.span, label: label.into(), help: Some(help), file: None }
}

/// The exit code of a program stopped for time (`--timeout`) or by its budget
/// (`Sched::set_budget`), as GNU `timeout`'s.
pub const TIMED_OUT: i32 = 124;

/// What running a file produced, for the CLI and the tests.
pub struct Outcome {
    pub exit_code: i32,
    /// Rendered diagnostics (empty on success).
    pub stderr: String,
}

/// Compiles and runs `src` named `name` to completion (the program is
/// `name`'s, see `Vm::program`, unless the embedder named it).
pub fn run_source(vm: &mut Vm, name: &str, src: &str, color: bool) -> Outcome {
    if vm.program.is_empty() {
        vm.set_program(name);
    }
    let file = Rc::new(SourceFile::new(name, src));
    let proto = match compile(vm, &file) {
        Ok(p) => p,
        Err(diags) => {
            let stderr = diag::render_all(&diags, &file, color);
            return Outcome { exit_code: 2, stderr };
        }
    };
    let outcome = crate::sched::run_main(vm, proto);
    report(vm, outcome, color)
}

/// The exit code and report of how a program ended.
pub fn report(vm: &Vm, outcome: crate::sched::Outcome, color: bool) -> Outcome {
    match outcome {
        crate::sched::Outcome::Ok => Outcome { exit_code: 0, stderr: String::new() },
        // Cancelled by SIGINT/SIGTERM: that signal's code, and quietly, as a
        // shell's command ends; only another error that cleanup raised shows.
        crate::sched::Outcome::Signalled(code, how) => {
            Outcome { exit_code: code, stderr: after_cancel(vm, *how, color) }
        }
        // `--timeout`: GNU timeout's status, and a line saying why.
        crate::sched::Outcome::TimedOut(limit, how) => {
            let stderr = format!("csp: timed out after {limit} (--timeout)\n{}", after_cancel(vm, *how, color));
            Outcome { exit_code: TIMED_OUT, stderr }
        }
        // The reader of stdout has gone: end quietly, as `head` users expect.
        crate::sched::Outcome::BrokenPipe => match vm.out.failure() {
            Some(why) => Outcome { exit_code: 1, stderr: format!("csp: {why}\n") },
            None => Outcome { exit_code: 0, stderr: String::new() },
        },
        crate::sched::Outcome::Deadlock(report) => Outcome { exit_code: 3, stderr: report },
        crate::sched::Outcome::Exit(code) => Outcome { exit_code: code, stderr: String::new() },
        // Cancelled at its end (fibers left parked): the exit code stays 0.
        crate::sched::Outcome::GraceOver(grace) => Outcome {
            exit_code: 0,
            stderr: format!("csp: cleanup did not finish within the grace time ({grace}; see --grace)\n"),
        },
        // Only fuzzing and its replay set a budget (docs/fuzzing.md).
        crate::sched::Outcome::OutOfBudget => {
            Outcome { exit_code: TIMED_OUT, stderr: "csp: the program used up its budget\n".into() }
        }
        crate::sched::Outcome::Error(u) => {
            let d = runtime_diag(vm, &u);
            let f = u.file.clone();
            Outcome { exit_code: 1, stderr: diag::render(&d, &f, color) }
        }
    }
}

/// What to say about how a program cancelled by a signal or `--timeout` ended:
/// nothing when it ended by that cancellation, as a shell's command ends; only
/// another error that cleanup raised shows.
fn after_cancel(vm: &Vm, how: crate::sched::Outcome, color: bool) -> String {
    if let crate::sched::Outcome::Error(u) = &how {
        if crate::vm::error::is_kind(vm, u.value, crate::vm::ErrorKind::Cancelled) {
            return String::new();
        }
    }
    report(vm, how, color).stderr
}
