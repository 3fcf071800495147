//! Program output (`print`): one buffer and one sink. stdout is flushed at exit,
//! when it grows large, and by the scheduler every few milliseconds and before a
//! fiber waits on I/O. A closed stdout (`csp run x.csp | head`) marks the output
//! broken; the scheduler then stops the program and `main.rs` exits quietly.
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
}

pub struct Output {
    buf: Vec<u8>,
    sink: Sink,
    /// stdout was closed by its reader.
    broken: bool,
    /// Captured stderr text (tests).
    err: Vec<u8>,
    /// Where `eprint` text goes instead of stderr (the REPL's console).
    err_sink: Option<Writer>,
}

impl Default for Output {
    fn default() -> Self {
        Output { buf: Vec::new(), sink: Sink::Stdout, broken: false, err: Vec::new(), err_sink: None }
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
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                let res = out.write_all(&self.buf).and_then(|_| out.flush());
                self.buf.clear();
                if res.is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) {
                    self.broken = true;
                }
            }
        }
    }

    /// Writes to stderr now (captured apart in tests), after flushing stdout.
    pub fn write_err(&mut self, bytes: &[u8]) {
        if matches!(self.sink, Sink::Capture) {
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

    /// Has stdout been closed by its reader?
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Takes what was captured so far.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}
