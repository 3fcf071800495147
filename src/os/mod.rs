//! The operating system's resources as csp values: streams (open files, pipe
//! ends, sockets, TLS sessions) and child processes. Their builtins are in `natives/`.

pub mod fdlimit;
pub mod net;
pub mod process;
pub mod stream;
pub mod tls;
mod tls_config;
pub mod watched;
