//! The operating system's resources as csp values: streams (open files, pipe
//! ends, sockets, TLS sessions) and child processes. Their builtins are in `natives/`.

pub mod fdlimit;
mod front;
pub mod net;
pub mod process;
mod read;
pub mod stream;
pub mod tls;
mod tls_config;
pub mod watched;

/// An I/O error's reason without Rust's `(os error N)` suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
