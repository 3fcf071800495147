//! Program output (`print`): one buffer and one sink. stdout is flushed at exit,
//! when it grows large, and by the scheduler every few milliseconds and before a
//! fiber waits on I/O. A closed stdout (`csp run x.csp | head`) marks the output
//! broken; the scheduler then stops the program and `main.rs` exits quietly.
//! Any other write error (a full disk, a closed descriptor) stops it too, and
//! the program exits 1 saying why.
//! `eprint` text goes to stderr at once, after what is buffered for stdout, so
//! the two interleave on a terminal as they were written.

use std::io::Write;

/// A function that takes flushed output.
pub type Writer = Box<dyn FnMut(&[u8])>;

/// Where flushed output goes.
pub enum Sink {
    Stdout,
    /// Kept in the buffer until `take` (tests).
    Capture,
    /// Handed to a function (the REPL prints above its prompt).
    Func(Writer),
    /// Kept, like `Capture`, in a buffer every isolate of an embedded
    /// runtime writes to, until `take` (on any of them).
    Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>),
}

pub struct Output {
    buf: Vec<u8>,
    sink: Sink,
    /// stdout was closed by its reader, or failed (see `failure`).
    broken: bool,
    /// Why writing to stdout failed, other than a closed pipe (a full disk, a
    /// closed descriptor): the program stops and exits 1 with this message.
    failure: Option<String>,
    /// Captured stderr text (tests).
    err: Vec<u8>,
    /// Where `eprint` text goes instead of stderr (the REPL's console).
    err_sink: Option<Writer>,
}

impl Default for Output {
    fn default() -> Self {
        Output { buf: Vec::new(), sink: Sink::Stdout, broken: false, failure: None, err: Vec::new(), err_sink: None }
    }
}

impl Output {
    pub fn set_sink(&mut self, sink: Sink) {
        self.flush();
        self.sink = sink;
    }

    /// Keeps output for `take` instead of writing it (tests).
    pub fn capture(&mut self) {
        self.set_sink(Sink::Capture);
    }

    pub fn write(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() > 1 << 16 && !matches!(self.sink, Sink::Capture) {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        match &mut self.sink {
            Sink::Capture => {}
            Sink::Func(f) => {
                f(&self.buf);
                self.buf.clear();
            }
            Sink::Shared(kept) => {
                kept.lock().unwrap_or_else(|e| e.into_inner()).append(&mut self.buf);
            }
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                let res = stdout_open().and_then(|_| out.write_all(&self.buf)).and_then(|_| out.flush());
                self.buf.clear();
                if let Err(e) = res {
                    self.broken = true;
                    if e.kind() != std::io::ErrorKind::BrokenPipe {
                        self.failure = Some(format!("cannot write to stdout: {}", crate::os::io_reason(&e)));
                    }
                }
            }
        }
    }

    /// Writes to stderr now (captured apart in tests), after flushing stdout.
    pub fn write_err(&mut self, bytes: &[u8]) {
        if matches!(self.sink, Sink::Capture | Sink::Shared(_)) {
            self.err.extend_from_slice(bytes);
            return;
        }
        self.flush();
        if let Some(f) = self.err_sink.as_mut() {
            return f(bytes);
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(bytes).and_then(|_| err.flush());
    }

    /// Sends `eprint` text to a function instead of stderr.
    pub fn set_err_sink(&mut self, f: Writer) {
        self.err_sink = Some(f);
    }

    /// Takes what `write_err` captured so far (tests).
    pub fn take_err(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.err)
    }

    /// Has stdout been closed by its reader, or failed?
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Why stdout failed, when it was not its reader closing it.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Takes what was captured so far.
    pub fn take(&mut self) -> Vec<u8> {
        if let Sink::Shared(kept) = &self.sink {
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.append(&mut self.buf);
            return std::mem::take(&mut *kept);
        }
        std::mem::take(&mut self.buf)
    }
}

/// stdout was closed when the program started (see `mark_stdout_closed`);
/// process-wide, as stdout is.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records that the process started with descriptor 1 closed. Rust's runtime
/// opens `/dev/null` there before `main` (so no file takes the number), which
/// makes output vanish without an error; `main.rs` checks before that runs.
pub fn mark_stdout_closed() {
    STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A program run with stdout closed must learn that its output goes nowhere.
fn stdout_open() -> std::io::Result<()> {
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(std::io::Error::from_raw_os_error(libc::EBADF));
    }
    Ok(())
}
