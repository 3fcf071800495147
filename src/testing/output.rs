//! Where `csp test`'s lines go: the terminal, or, for a file run on a
//! thread of `-j` (parallel.rs), that file's own buffers, shown whole and in
//! file order once it is done.

use std::cell::RefCell;
use std::io::Write;

/// A file's output, kept while it runs on a thread of `-j`.
#[derive(Default)]
pub(super) struct Kept {
    pub out: Vec<u8>,
    pub err: Vec<u8>,
}

thread_local! {
    static KEPT: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

/// From now on this thread's output is kept (until `take`).
pub(super) fn keep() {
    KEPT.with(|k| *k.borrow_mut() = Some(Kept::default()));
}

/// What this thread kept; it prints to the terminal again.
pub(super) fn take() -> Kept {
    KEPT.with(|k| k.borrow_mut().take()).unwrap_or_default()
}

/// Is this thread's output kept?
pub(super) fn kept() -> bool {
    KEPT.with(|k| k.borrow().is_some())
}

/// Bytes for stdout; a closed pipe is not an error worth reporting here.
pub(super) fn out(bytes: &[u8]) {
    let direct = KEPT.with(|k| k.borrow_mut().as_mut().map(|k| k.out.extend_from_slice(bytes)).is_none());
    if direct {
        let _ = std::io::stdout().write_all(bytes);
    }
}

/// Bytes for stderr.
pub(super) fn err(bytes: &[u8]) {
    let direct = KEPT.with(|k| k.borrow_mut().as_mut().map(|k| k.err.extend_from_slice(bytes)).is_none());
    if direct {
        let _ = std::io::stderr().write_all(bytes);
    }
}

/// A line on stdout.
pub(super) fn say(line: &str) {
    out(format!("{line}\n").as_bytes());
}
