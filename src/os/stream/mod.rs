//! Streams: an open file or one end of a pipe, read by line or chunk through a
//! buffer and written through another (write.rs). A file's data the page
//! cache holds is read at once; other reads of a file run on the I/O pool
//! (`IoThenRetry`: the job fills the buffer, the builtin runs again); a pipe is
//! non-blocking and read on the VM's thread, waiting in the reactor when empty.
//! Writes to a pipe that would block are finished by the reactor (`Write`).
//! A socket may carry a TLS session (`os/tls.rs`): reads and writes then go
//! through it.

mod moving;
mod room;
mod write;

pub use moving::MovingStream;

pub use super::front::Front;
use super::read::{read_cached, read_some, read_through_scratch, CHUNK};
use super::watched::Watched;
use crate::vm::builtin::{Blocking, Ready};
use room::{release_big, room_for};
use std::cell::RefCell;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    File,
    Pipe,
}

/// Cloning gives another handle on the same stream.
#[derive(Clone)]
pub struct Stream {
    /// For messages: the path, or "stdout of ls".
    pub name: Rc<str>,
    pub kind: Kind,
    pub readable: bool,
    pub writable: bool,
    /// The longest line `read_line` returns (None: any); sockets have
    /// `SOCKET_LINE_LIMIT`, so a peer cannot grow the buffer without end.
    pub line_limit: Option<usize>,
    shared: Arc<Mutex<Shared>>,
    /// A read-only file's buffered lines, read without the lock (`Front`).
    front: Rc<RefCell<Front>>,
}

/// The default longest line read from a socket (as Python asyncio's StreamReader).
pub const SOCKET_LINE_LIMIT: usize = 64 * 1024;

/// What a pool job works on while the fiber waits (hence behind a mutex).
struct Shared {
    /// None once closed, or once a read-only stream reached its end (the
    /// descriptor is of no more use; the buffer still is).
    file: Option<Watched<std::fs::File>>,
    closed: bool,
    rbuf: Vec<u8>,
    rpos: usize,
    eof: bool,
    wbuf: Vec<u8>,
    tls: Option<Box<super::tls::Tls>>,
}

impl Shared {
    /// After `n` bytes were read from a file: at its end, a stream that is
    /// only read closes its descriptor (see docs/os.md).
    fn read_file(&mut self, n: usize, read_only: bool) {
        self.eof = n == 0;
        if self.eof && read_only {
            self.file = None;
        }
    }
}

/// The outcome of a stream operation.
pub enum Step<T> {
    Done(T),
    /// Wait for this, then run the operation again.
    Block(Blocking),
}

pub type Res<T> = Result<Step<T>, String>;

/// Why a read failed: the stream's error, or more data than the read's cap
/// (the caller knows which limit that is and names it).
pub enum Fail {
    Io(String),
    Over,
}

impl From<String> for Fail {
    fn from(msg: String) -> Fail {
        Fail::Io(msg)
    }
}

pub type ReadRes<T> = Result<Step<T>, Fail>;

impl Stream {
    pub fn new(name: &str, kind: Kind, file: std::fs::File, readable: bool, writable: bool) -> Stream {
        let shared = Shared {
            file: Some(Watched::new(file)),
            closed: false,
            rbuf: Vec::new(),
            rpos: 0,
            eof: false,
            wbuf: Vec::new(),
            tls: None,
        };
        let shared = Arc::new(Mutex::new(shared));
        let front = Rc::default();
        Stream { name: Rc::from(name), kind, readable, writable, line_limit: None, shared, front }
    }

    /// The shared state, or a wait until a pool job on it is done.
    fn lock(&self) -> Result<MutexGuard<'_, Shared>, Blocking> {
        let mut g = match self.shared.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                let shared = self.shared.clone();
                return Err(Blocking::IoThenRetry(Box::new(move || {
                    drop(shared.lock());
                    Box::new(|_: &mut crate::vm::Heap| Ok(crate::vm::Value::Nil))
                })));
            }
        };
        let shared = &mut *g;
        self.front.borrow_mut().give_back(&mut shared.rbuf, &mut shared.rpos);
        Ok(g)
    }

    /// Whether `read_line` keeps lines in `front` (see there).
    fn fronted(&self) -> bool {
        self.kind == Kind::File && !self.writable
    }

    /// A read-only file's buffered lines, to take the next one without a call
    /// of `read_line` (None: other streams).
    pub fn front(&self) -> Option<&Rc<RefCell<Front>>> {
        self.fronted().then_some(&self.front)
    }

    /// The buffer to read from: an error if the stream is not for reading or
    /// is closed, a wait while a pool job has it.
    fn reading(&self) -> Result<Result<MutexGuard<'_, Shared>, Blocking>, String> {
        self.check(true)?;
        let s = match self.lock() {
            Ok(s) => s,
            Err(b) => return Ok(Err(b)),
        };
        if s.closed {
            return Err(format!("{} is closed", self.name));
        }
        Ok(Ok(s))
    }

    fn check(&self, reading: bool) -> Result<(), String> {
        match reading {
            true if !self.readable => Err(format!("{} is not open for reading", self.name)),
            false if !self.writable => Err(format!("{} is not open for writing", self.name)),
            _ => Ok(()),
        }
    }

    /// The next line without its `\n` (or `\r\n`), handed to `take` while it
    /// is in the buffer (no copy); None at the end. A line longer than `limit`
    /// (or `line_limit`) is an error, its bytes staying in the buffer; one
    /// longer than `cap` is `Fail::Over`.
    pub fn read_line<T>(&self, limit: Option<usize>, cap: usize, take: impl FnOnce(&[u8]) -> T) -> ReadRes<Option<T>> {
        let limit = limit.or(self.line_limit).unwrap_or(usize::MAX);
        let mut take = Some(take);
        if self.fronted() {
            if let Some(t) = self.front.borrow_mut().line(limit, |l, _| take.take().map(|f| f(l))) {
                return Ok(Step::Done(Some(t)));
            }
        }
        let take = take.expect("not called");
        let too_long = || format!("a line from {} is longer than {limit} bytes", self.name);
        let mut s = match self.reading()? {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        loop {
            let start = s.rpos;
            let found = memchr::memchr(b'\n', &s.rbuf[start..]);
            // A `\r` before the `\n` (or before the `\n` still to come) does not count.
            let end = found.map_or(s.rbuf.len(), |i| start + i);
            let len = end - start - usize::from(end > start && s.rbuf[end - 1] == b'\r');
            if len > limit {
                return Err(Fail::Io(too_long()));
            }
            if len > cap {
                return Err(Fail::Over);
            }
            if let Some(i) = found {
                let mut end = start + i;
                s.rpos = end + 1;
                if end > start && s.rbuf[end - 1] == b'\r' {
                    end -= 1;
                }
                let line = take(&s.rbuf[start..end]);
                release_big(&mut s);
                if self.fronted() {
                    let s = &mut *s;
                    self.front.borrow_mut().fill_from(&mut s.rbuf, &mut s.rpos);
                }
                return Ok(Step::Done(Some(line)));
            }
            if s.eof {
                if start == s.rbuf.len() {
                    return Ok(Step::Done(None));
                }
                s.rpos = s.rbuf.len();
                let line = take(&s.rbuf[start..]);
                release_big(&mut s);
                return Ok(Step::Done(Some(line)));
            }
            room_for(&mut s, cap);
            if let Some(b) = self.fill(&mut s)? {
                return Ok(Step::Block(b));
            }
        }
    }

    /// A message head (an HTTP request or response line and its headers): the
    /// bytes up to and including the blank line that ends it, handed to `take`
    /// in the buffer. Blank lines before it are skipped (RFC 9112 2.2).
    pub fn read_head<T>(&self, max: usize, take: impl FnOnce(&[u8]) -> T) -> Res<Head<T>> {
        let mut s = match self.reading()? {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        loop {
            skip_blank_lines(&mut s);
            let start = s.rpos;
            if let Some(end) = head_end(&s.rbuf[start..]) {
                if end > max {
                    return Ok(Step::Done(Head::TooLong));
                }
                s.rpos = start + end;
                return Ok(Step::Done(Head::Got(take(&s.rbuf[start..start + end]))));
            }
            if s.rbuf.len() - start > max {
                return Ok(Step::Done(Head::TooLong));
            }
            if s.eof {
                s.rpos = s.rbuf.len();
                return Ok(Step::Done(if start == s.rbuf.len() { Head::End } else { Head::Cut }));
            }
            if let Some(b) = self.fill(&mut s)? {
                return Ok(Step::Block(b));
            }
        }
    }

    /// Waits until a byte other than the blank lines allowed before a message
    /// head is buffered (true), or the stream ends (false); consumes nothing
    /// but those blank lines. A kept-alive HTTP connection's next request has
    /// begun when this returns true (its head timeout runs from then).
    pub fn wait_data(&self) -> Res<bool> {
        let mut s = match self.reading()? {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        loop {
            skip_blank_lines(&mut s);
            if s.rpos < s.rbuf.len() {
                return Ok(Step::Done(true));
            }
            if s.eof {
                return Ok(Step::Done(false));
            }
            if let Some(b) = self.fill(&mut s)? {
                return Ok(Step::Block(b));
            }
        }
    }

    /// Up to `max` bytes (None: everything to the end); None at the end.
    /// With `exact`, exactly `max` bytes: an error if the stream ends first.
    /// `Fail::Over` once more than `cap` bytes are buffered for it. The bytes
    /// are handed to `take` in the buffer.
    pub fn read<T>(
        &self,
        max: Option<usize>,
        exact: bool,
        cap: usize,
        take: impl FnOnce(&[u8]) -> T,
    ) -> ReadRes<Option<T>> {
        let mut s = match self.reading()? {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        loop {
            let have = s.rbuf.len() - s.rpos;
            let enough = match max {
                Some(n) => have >= n.max(1) || (have > 0 && self.kind == Kind::Pipe && !exact),
                None => false,
            };
            if let (true, Some(n), false) = (s.eof, max, enough) {
                if exact && have > 0 {
                    return Err(Fail::Io(format!("{} ended after {have} of the {n} bytes asked for", self.name)));
                }
            }
            if !enough && have > cap {
                return Err(Fail::Over);
            }
            if enough || s.eof {
                if have == 0 && s.eof {
                    return Ok(Step::Done(None));
                }
                let n = max.map_or(have, |m| m.min(have));
                let start = s.rpos;
                s.rpos += n;
                let data = take(&s.rbuf[start..start + n]);
                release_big(&mut s);
                return Ok(Step::Done(Some(data)));
            }
            room_for(&mut s, max.map_or(cap, |n| n.min(cap)));
            if let Some(b) = self.fill(&mut s)? {
                return Ok(Step::Block(b));
            }
        }
    }

    /// Reads more into the buffer: at once from a pipe (or a wait for it to be
    /// readable), through a pool job from a file.
    fn fill(&self, s: &mut Shared) -> Result<Option<Blocking>, String> {
        if s.rpos > 0 {
            let rpos = s.rpos;
            s.rbuf.drain(..rpos);
            s.rpos = 0;
        }
        let Some(file) = s.file.as_ref() else { return Err(format!("{} is closed", self.name)) };
        if let Some(tls) = s.tls.as_mut() {
            return match tls.read(file, &mut s.rbuf)? {
                Step::Done(n) => {
                    s.eof = n == 0;
                    Ok(None)
                }
                Step::Block(b) => Ok(Some(b)),
            };
        }
        match self.kind {
            Kind::Pipe => match read_through_scratch(file, &mut s.rbuf) {
                Ok(0) => {
                    s.eof = true;
                    // A socket may still be written to after its peer is done.
                    if !self.writable {
                        s.file = None;
                    }
                    Ok(None)
                }
                Ok(_) => Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    Ok(Some(Blocking::Ready(file.as_raw_fd(), Ready::Read)))
                }
                Err(e) => Err(self.failed("read", &e)),
            },
            Kind::File => {
                if let Some(n) = read_cached(file, &mut s.rbuf) {
                    s.read_file(n, !self.writable);
                    return Ok(None);
                }
                // Grown here rather than by the job: a buffer the pool's thread
                // allocates is freed from this one, which kept mimalloc taking
                // fresh memory (grep's peak RSS).
                s.rbuf.reserve(CHUNK);
                let shared = self.shared.clone();
                let name = self.name.clone().to_string();
                let read_only = !self.writable;
                Ok(Some(Blocking::IoThenRetry(Box::new(move || {
                    let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
                    let s = &mut *s;
                    let out = match s.file.as_ref() {
                        Some(f) => match read_some(f, &mut s.rbuf) {
                            Ok(n) => {
                                s.read_file(n, read_only);
                                Ok(crate::vm::Value::Nil)
                            }
                            Err(e) => Err(format!("cannot read {name}: {}", crate::os::io_reason(&e))),
                        },
                        None => Err(format!("{name} is closed")),
                    };
                    Box::new(move |_: &mut crate::vm::Heap| out.map_err(|e| (crate::vm::ErrorKind::Io, e)))
                }))))
            }
        }
    }

    /// Starts TLS on this socket; bytes already read into the buffer are the
    /// start of the peer's handshake.
    pub fn start_tls(&self, tls: super::tls::Tls) -> Result<(), String> {
        self.tls_starter()(tls)
    }

    /// `start_tls` for a pool job (which builds the session from files).
    pub fn tls_starter(&self) -> impl FnOnce(super::tls::Tls) -> Result<(), String> + Send {
        let (shared, name) = (self.shared.clone(), self.name.to_string());
        move |mut tls| {
            let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
            if s.file.is_none() || s.closed {
                return Err(format!("{name} is closed"));
            }
            if s.tls.is_some() {
                return Err(format!("{name} already uses TLS"));
            }
            let rpos = s.rpos;
            tls.feed(&s.rbuf[rpos..])?;
            s.rbuf.clear();
            s.rpos = 0;
            s.tls = Some(Box::new(tls));
            Ok(())
        }
    }

    /// Runs the TLS handshake (done at once without TLS or once it is over).
    pub fn handshake(&self) -> Res<()> {
        let mut s = match self.lock() {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        let s = &mut *s;
        match (s.file.as_ref(), s.tls.as_mut()) {
            (Some(f), Some(tls)) => tls.handshake(f),
            (None, _) => Err(format!("{} is closed", self.name)),
            _ => Ok(Step::Done(())),
        }
    }

    /// Ends the writing half of a socket (after TLS's close_notify).
    pub fn shutdown(&self) -> Res<()> {
        let mut s = match self.lock() {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        let s = &mut *s;
        let Some(file) = s.file.as_ref() else { return Err(format!("{} is closed", self.name)) };
        if let Some(tls) = s.tls.as_mut() {
            if let Step::Block(b) = tls.shutdown(file)? {
                return Ok(Step::Block(b));
            }
        }
        super::net::shutdown_write(file.as_raw_fd()).map(Step::Done)
    }

    /// Closes it without writing buffered output (its owner is gone).
    pub fn close_now(&self) {
        *self.front.borrow_mut() = Front::default();
        if let Ok(mut s) = self.shared.lock() {
            s.file = None;
            s.closed = true;
        }
    }

    /// The descriptor, while open.
    pub fn fd(&self) -> Option<RawFd> {
        self.shared.try_lock().ok().and_then(|s| s.file.as_ref().map(|f| f.as_raw_fd()))
    }

    fn failed(&self, what: &str, e: &std::io::Error) -> String {
        format!("cannot {what} {}: {}", self.name, crate::os::io_reason(e))
    }
}

/// What `read_head` found.
pub enum Head<T> {
    Got(T),
    /// The stream ended before the head began.
    End,
    /// The stream ended in the middle of it.
    Cut,
    /// No blank line within the limit.
    TooLong,
}

/// Skips the blank lines a peer may send before a message head (RFC 9112 2.2).
fn skip_blank_lines(s: &mut Shared) {
    while s.rbuf[s.rpos..].starts_with(b"\r\n") || s.rbuf[s.rpos..].starts_with(b"\n") {
        s.rpos += if s.rbuf[s.rpos] == b'\r' { 2 } else { 1 };
    }
}

/// The length of the head at the start of `buf` (through its blank line).
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
        let nl = from + i;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some(nl + 2),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some(nl + 3),
            _ => from = nl + 1,
        }
    }
    None
}

#[cfg(test)]
mod tests;
