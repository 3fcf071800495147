//! csp: a scripting language with Go-style concurrency built in.

pub mod bytecode;
pub mod check;
pub mod compile;
pub mod diag;
pub mod format;
pub mod limits;
pub mod natives;
pub mod os;
pub mod repl;
pub mod runner;
pub mod sched;
pub mod source;
pub mod suggest;
pub mod syntax;
pub mod testing;
pub mod vm;
