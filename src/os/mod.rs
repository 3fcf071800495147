//! The operating system's resources as csp values: streams (open files, pipe
//! ends, sockets, TLS sessions) and child processes. Their builtins are in `natives/`.

pub mod access;
pub mod fdlimit;
mod front;
pub mod net;
pub mod process;
mod read;
pub mod stream;
pub mod tls;
mod tls_config;
pub mod watched;
