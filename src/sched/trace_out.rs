//! The bytes of a `--trace` file: each isolate's buffer, its events written
//! into it piece by piece (fixed-size pieces are plain moves, numbers are
//! written in place), handed a chunk of whole events at a time to the one
//! thread that writes the file. An isolate's thread pays for formatting
//! only; chunks of several isolates interleave in the file, never their
//! events; the chunks in flight are bounded, so a long trace never piles
//! up in memory.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Bytes per chunk handed to the writer: a chunk ends with the event that
/// passes this.
const CHUNK: usize = 1 << 18;
/// Room past `CHUNK` for the event being written (a longer one grows the
/// buffer).
const ROOM: usize = 1 << 14;
/// Chunks queued for the writer before the program waits for it: 2 MB,
/// enough to ride out the writer's stalls (with 2 the program waited on it:
/// the 200,000-message ping-pong took 84 ms traced, 69 ms with 8).
const IN_FLIGHT: usize = 8;

/// The document around the events. Every event starts with `,\n{`: the
/// writer leaves out the first one's comma, whichever isolate wrote it.
const HEAD: &[u8] = b"{\"traceEvents\":[";
const TAIL: &[u8] = b"\n]}\n";

/// What the writer is sent: a chunk (and how much of it is used), or the end.
enum Piece {
    Chunk(Vec<u8>, usize),
    End,
}

/// The file's one writer, shared by every isolate's `Out`.
pub(super) struct Writer {
    to_writer: SyncSender<Piece>,
    /// Chunks the writer is done with, to reuse.
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
    /// The writer's thread until someone ends it, then its first write
    /// error (the lock is held while it is joined: a second `end` waits).
    state: Mutex<Ending>,
}

enum Ending {
    Running(JoinHandle<std::io::Result<()>>),
    Ended(Option<std::io::Error>),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A copy of an error to hand out again.
fn again(e: &std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), e.to_string())
}

impl Writer {
    /// Starts the writer's thread on `file`.
    pub fn start(file: File) -> std::io::Result<Arc<Writer>> {
        let (to_writer, from_program) = sync_channel::<Piece>(IN_FLIGHT);
        let spare = Arc::new(Mutex::new(Vec::new()));
        let given = spare.clone();
        let thread = std::thread::Builder::new()
            .name("csp-trace".into())
            .spawn(move || write_all(file, from_program, &given))?;
        Ok(Arc::new(Writer { to_writer, spare, state: Mutex::new(Ending::Running(thread)) }))
    }

    /// Closes the document after what was handed over so far and waits for
    /// the writer; the first write error, if any. Chunks handed over later
    /// are dropped; later calls give the same answer.
    pub fn end(&self) -> std::io::Result<()> {
        let mut st = lock(&self.state);
        if let Ending::Running(_) = &*st {
            let _ = self.to_writer.send(Piece::End);
            if let Ending::Running(t) = std::mem::replace(&mut *st, Ending::Ended(None)) {
                *st = Ending::Ended(match t.join() {
                    Ok(r) => r.err(),
                    Err(_) => Some(std::io::Error::other("the trace writer failed")),
                });
            }
        }
        match &*st {
            Ending::Ended(Some(e)) => Err(again(e)),
            _ => Ok(()),
        }
    }

    /// An empty chunk: one the writer gave back, or a new one.
    fn chunk(&self) -> Vec<u8> {
        lock(&self.spare).pop().unwrap_or_else(|| vec![0; CHUNK + ROOM])
    }
}

/// The writer's thread: the head, the chunks as they come (the first
/// event's comma left out), the tail at the end.
fn write_all(mut file: File, from: Receiver<Piece>, spare: &Mutex<Vec<Vec<u8>>>) -> std::io::Result<()> {
    let mut result = file.write_all(HEAD);
    let mut first = true;
    for piece in from {
        let Piece::Chunk(chunk, used) = piece else { break };
        let skip = usize::from(first && used > 0);
        first &= used == 0;
        if result.is_ok() {
            result = file.write_all(&chunk[skip..used]);
        }
        let mut spare = lock(spare);
        if spare.len() < IN_FLIGHT + 2 {
            spare.push(chunk);
        }
    }
    if result.is_ok() {
        result = file.write_all(TAIL);
    }
    result
}

/// One isolate's (one thread's) buffer of events.
pub(super) struct Out {
    buf: Vec<u8>,
    /// Bytes of `buf` written so far.
    pos: usize,
    writer: Arc<Writer>,
}

impl Out {
    pub fn new(writer: Arc<Writer>) -> Out {
        Out { buf: writer.chunk(), pos: 0, writer }
    }

    /// `,\n{`: a new event, the chunk handed over first if it is full (so
    /// a chunk holds whole events).
    #[inline(always)]
    pub fn open(&mut self) {
        if self.pos >= CHUNK {
            self.hand_over();
        }
        self.put(b",\n{");
    }

    /// Hands the chunk to the writer and starts another. After the
    /// document's end, bytes are dropped.
    #[cold]
    fn hand_over(&mut self) {
        let next = self.writer.chunk();
        self.send(next);
    }

    /// Sends the chunk, `next` taking its place.
    fn send(&mut self, next: Vec<u8>) {
        let full = std::mem::replace(&mut self.buf, next);
        let _ = self.writer.to_writer.send(Piece::Chunk(full, self.pos));
        self.pos = 0;
    }

    /// Hands over what is buffered (whole events).
    pub fn flush(&mut self) {
        if self.pos > 0 {
            self.hand_over();
        }
    }

    /// An event longer than the room left: the buffer grows.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        let len = (self.pos + n).max(self.buf.len() * 2);
        self.buf.resize(len, 0);
    }

    /// Fixed-size bytes (a literal): a move, no call.
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, b: &[u8; N]) {
        if self.pos + N > self.buf.len() {
            self.grow(N);
        }
        self.buf[self.pos..self.pos + N].copy_from_slice(b);
        self.pos += N;
    }

    pub fn put_slice(&mut self, b: &[u8]) {
        if self.pos + b.len() > self.buf.len() {
            self.grow(b.len());
        }
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }

    /// A decimal number, its digits written in place from the last.
    #[inline]
    pub fn uint(&mut self, mut n: u64) {
        const MAX: usize = 20;
        if self.pos + MAX > self.buf.len() {
            self.grow(MAX);
        }
        let len = n.checked_ilog10().unwrap_or(0) as usize + 1;
        let digits = &mut self.buf[self.pos..self.pos + len];
        let mut end = len;
        while n >= 100 {
            end -= 2;
            digits[end..end + 2].copy_from_slice(&PAIRS16[(n % 100) as usize].to_le_bytes());
            n /= 100;
        }
        match n >= 10 {
            true => digits[..2].copy_from_slice(&PAIRS16[n as usize].to_le_bytes()),
            false => digits[0] = b'0' + n as u8,
        }
        self.pos += len;
    }

    /// Nanoseconds as microseconds with three decimals (the format's unit).
    #[inline]
    pub fn micros(&mut self, ns: u64) {
        self.stamp(&Stamp::new(ns));
    }

    #[inline]
    pub fn stamp(&mut self, s: &Stamp) {
        match s.text {
            Some(t) => self.text(t),
            None => self.put_slice(format!("{}.{:03}", s.ns / 1000, s.ns % 1000).as_bytes()),
        }
    }

    /// Up to 16 bytes held in a register: one store.
    #[inline(always)]
    pub fn text(&mut self, t: Text) {
        if self.pos + 16 > self.buf.len() {
            self.grow(16);
        }
        self.buf[self.pos..self.pos + 16].copy_from_slice(&t.bytes.to_le_bytes());
        self.pos += t.len as usize;
    }

    /// Bytes formatted earlier: a fixed-size move, then only their length counts.
    #[inline(always)]
    pub fn small(&mut self, s: &Small) {
        if self.pos + SMALL > self.buf.len() {
            self.grow(SMALL);
        }
        self.buf[self.pos..self.pos + SMALL].copy_from_slice(&s.bytes);
        self.pos += s.len as usize;
    }
}

/// A time (nanoseconds) formatted once, to be written in several events.
#[derive(Clone, Copy)]
pub(super) struct Stamp {
    pub ns: u64,
    text: Option<Text>,
}

impl Stamp {
    #[inline]
    pub fn new(ns: u64) -> Stamp {
        Stamp { ns, text: Text::micros(ns) }
    }
}

/// Up to 16 bytes of text (a number) in an integer, the first in its low
/// byte. Built in a register and stored at once: digits written a byte at a
/// time into memory and then copied wide stall the copy.
#[derive(Clone, Copy)]
pub(super) struct Text {
    bytes: u128,
    len: u8,
}

/// Each pair of decimal digits as two bytes, the tens' digit first in memory.
const PAIRS16: [u16; 100] = {
    let mut t = [0u16; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = (b'0' + (i / 10) as u8) as u16 | ((b'0' + (i % 10) as u8) as u16) << 8;
        i += 1;
    }
    t
};

impl Text {
    /// `n` in decimal, if it has at most 16 digits.
    #[inline]
    pub fn uint(mut n: u64) -> Option<Text> {
        let len = n.checked_ilog10().unwrap_or(0) + 1;
        if len > 16 {
            return None;
        }
        let mut bytes = 0u128;
        while n >= 100 {
            bytes = bytes << 16 | PAIRS16[(n % 100) as usize] as u128;
            n /= 100;
        }
        bytes = match n >= 10 {
            true => bytes << 16 | PAIRS16[n as usize] as u128,
            false => bytes << 8 | (b'0' + n as u8) as u128,
        };
        Some(Text { bytes, len: len as u8 })
    }

    /// Nanoseconds as microseconds with three decimals, if that fits.
    #[inline]
    pub fn micros(ns: u64) -> Option<Text> {
        let whole = Text::uint(ns / 1000).filter(|t| t.len <= 12)?;
        let f = ns % 1000;
        let frac = b'.' as u128 | ((b'0' + (f / 100) as u8) as u128) << 8 | (PAIRS16[(f % 100) as usize] as u128) << 16;
        Some(Text { bytes: whole.bytes | frac << (8 * whole.len as u32), len: whole.len + 4 })
    }
}

/// Bytes of `Small`: a number, or a fiber's `"pid":P,"tid":T}`.
const SMALL: usize = 40;

/// A few bytes formatted once and written many times (the end of each
/// event of a track) without a call to copy them.
#[derive(Clone, Copy)]
pub(super) struct Small {
    bytes: [u8; SMALL],
    len: u8,
}

impl Small {
    pub fn new() -> Small {
        Small { bytes: [0; SMALL], len: 0 }
    }

    /// Appends bytes (the caller keeps to `SMALL`).
    pub fn push(&mut self, b: &[u8]) {
        let at = self.len as usize;
        self.bytes[at..at + b.len()].copy_from_slice(b);
        self.len += b.len() as u8;
    }

    /// Appends a decimal number.
    pub fn push_uint(&mut self, n: u64) {
        self.push(itoa::Buffer::new().format(n).as_bytes());
    }
}

impl Drop for Out {
    /// An isolate's last events go out with it.
    fn drop(&mut self) {
        if self.pos > 0 {
            self.send(Vec::new());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Out, Writer, HEAD, TAIL};

    /// What `f` wrote through an `Out` (first) and the `Out`s it makes,
    /// between the document's head and tail.
    fn written(f: impl FnOnce(&mut Out, &dyn Fn() -> Out)) -> String {
        let path = std::env::temp_dir().join(format!(
            "csp-trace-out-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let writer = Writer::start(std::fs::File::create(&path).unwrap()).unwrap();
        let mut out = Out::new(writer.clone());
        f(&mut out, &|| Out::new(writer.clone()));
        drop(out);
        writer.end().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let inner = text.strip_prefix(std::str::from_utf8(HEAD).unwrap()).expect("the head");
        inner.strip_suffix(std::str::from_utf8(TAIL).unwrap()).expect("the tail").to_string()
    }

    #[test]
    fn numbers_and_times() {
        let text = written(|o, _| {
            o.open();
            for n in [0, 7, 10, 99, 100, 12345, u64::MAX] {
                o.uint(n);
                o.put(b" ");
            }
            o.micros(1_234_567);
            o.put(b" ");
            o.micros(5);
            o.put(b" ");
            o.micros(u64::MAX);
            o.put(b" ");
            o.uint(9_999_999_999_999_999);
        });
        let max_us = format!("{}.{:03}", u64::MAX / 1000, u64::MAX % 1000);
        let want = format!("0 7 10 99 100 12345 {} 1234.567 0.005 {max_us} 9999999999999999", u64::MAX);
        assert_eq!(text, format!("\n{{{want}"));
    }

    /// Many chunks, and an event longer than a chunk, arrive whole and in
    /// order; the first event has no comma.
    #[test]
    fn chunks_arrive_in_order() {
        let long = "x".repeat(super::CHUNK * 2 + 3);
        let text = written(|o, _| {
            for i in 0..200_000u64 {
                o.open();
                o.uint(i);
            }
            o.open();
            o.put_slice(long.as_bytes());
        });
        let (nums, tail) = text.split_at(text.len() - long.len());
        assert_eq!(tail, long);
        let expected: Vec<String> = (0..200_000).map(|i| format!("{{{i}")).collect();
        assert_eq!(nums, format!("\n{},\n{{", expected.join(",\n")));
    }

    /// Two isolates' buffers on their own threads: their chunks interleave,
    /// their events do not.
    #[test]
    fn isolates_interleave_whole_events() {
        let text = written(|o, another| {
            let threads: Vec<_> = (0..2)
                .map(|t| {
                    let mut mine = another();
                    std::thread::spawn(move || {
                        for i in 0..100_000u64 {
                            mine.open();
                            mine.put(b"\"t\":");
                            mine.uint(t);
                            mine.put(b",\"i\":");
                            mine.uint(i);
                            mine.put(b"}");
                        }
                    })
                })
                .collect();
            o.open();
            o.put(b"\"main\":1}");
            for t in threads {
                t.join().unwrap();
            }
        });
        let events: serde_json::Value = serde_json::from_str(&format!("[{text}]")).unwrap();
        let events = events.as_array().unwrap();
        assert_eq!(events.len(), 200_001);
        for t in 0..2 {
            let mine: Vec<u64> = events.iter().filter(|e| e["t"] == t).map(|e| e["i"].as_u64().unwrap()).collect();
            assert_eq!(mine, (0..100_000).collect::<Vec<_>>());
        }
    }
}
