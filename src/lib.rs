//! csp: a scripting language with Go-style concurrency built in.

/// `eprint!` that cannot panic: with stderr full or closed the text is lost, as
/// there is nowhere left to report it (`eprint!` would abort the program).
#[macro_export]
macro_rules! err_print {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($t)*);
    }};
}

/// `eprintln!` that cannot panic (see `err_print!`).
#[macro_export]
macro_rules! err_println {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

pub mod alloc;
pub mod bundle;
pub mod bundle_build;
pub mod bytecode;
pub mod check;
pub mod compile;
pub mod completions;
pub mod coverage;
pub mod dap;
pub mod diag;
pub mod display;
pub mod embed;
pub mod explore_runs;
pub mod fmt;
pub mod isolate;
pub mod limits;
pub mod lint;
pub mod lsp;
pub mod natives;
pub mod os;
pub mod pkg;
pub mod pprof;
pub mod recording;
pub mod repl;
pub mod runner;
pub mod sandbox;
pub mod sched;
pub mod source;
pub mod sqlite;
pub mod suggest;
pub mod syntax;
pub mod testing;
pub mod vm;
