//! The operating system's resources as csp values: streams (open files, pipe
//! ends) and child processes. Their builtins are in `natives/`.

pub mod fdlimit;
pub mod net;
pub mod process;
pub mod stream;
