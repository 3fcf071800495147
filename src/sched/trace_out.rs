//! The bytes of a `--trace` file: a buffer the events are written into piece
//! by piece (fixed-size pieces are plain moves, numbers are written in place),
//! handed a chunk at a time to a thread that writes the file. The program's
//! thread pays for formatting only; the chunks in flight are bounded, so a
//! long trace never piles up in memory.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes per chunk handed to the writer.
const CHUNK: usize = 1 << 18;
/// Chunks queued for the writer before the program waits for it.
const IN_FLIGHT: usize = 2;

/// Pairs of decimal digits, for writing numbers two digits at a time.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

type Chunk = (Vec<u8>, usize);

pub(super) struct Out {
    buf: Vec<u8>,
    /// Bytes of `buf` written so far.
    pos: usize,
    /// Full chunks (and how much of each is used) to the writer; None once closed.
    to_writer: Option<SyncSender<Chunk>>,
    /// Chunks the writer is done with, to reuse.
    spare: Receiver<Chunk>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
}

impl Out {
    pub fn new(file: File) -> std::io::Result<Out> {
        let (to_writer, from_program) = sync_channel::<Chunk>(IN_FLIGHT);
        let (to_program, spare) = sync_channel(IN_FLIGHT + 2);
        let writer = std::thread::Builder::new().name("csp-trace".into()).spawn(move || {
            let mut file = file;
            let mut result = Ok(());
            for (chunk, used) in from_program {
                if result.is_ok() {
                    result = file.write_all(&chunk[..used]);
                }
                let _ = to_program.try_send((chunk, 0));
            }
            result
        })?;
        Ok(Out { buf: vec![0; CHUNK], pos: 0, to_writer: Some(to_writer), spare, writer: Some(writer) })
    }

    /// Hands the chunk to the writer and starts another (a spare one if the
    /// writer has one back). After `close`, bytes are dropped.
    #[cold]
    fn hand_over(&mut self) {
        let next = match self.spare.try_recv() {
            Ok((chunk, _)) => chunk,
            Err(_) => vec![0; CHUNK],
        };
        let full = std::mem::replace(&mut self.buf, next);
        if let Some(tx) = &self.to_writer {
            let _ = tx.send((full, self.pos));
        }
        self.pos = 0;
    }

    /// Writes out what is buffered and waits for the writer to finish; the
    /// first write error, if any. Later calls do nothing.
    pub fn close(&mut self) -> std::io::Result<()> {
        if self.to_writer.is_some() {
            self.hand_over();
        }
        self.to_writer = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the trace writer failed")),
            None => Ok(()),
        }
    }

    /// Fixed-size bytes (a literal): a move, no call.
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, b: &[u8; N]) {
        if self.pos + N > CHUNK {
            self.hand_over();
        }
        self.buf[self.pos..self.pos + N].copy_from_slice(b);
        self.pos += N;
    }

    pub fn put_slice(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            if self.pos == CHUNK {
                self.hand_over();
            }
            let n = b.len().min(CHUNK - self.pos);
            self.buf[self.pos..self.pos + n].copy_from_slice(&b[..n]);
            self.pos += n;
            b = &b[n..];
        }
    }

    /// A decimal number.
    #[inline]
    pub fn uint(&mut self, n: u64) {
        self.small(&Small::uint(n));
    }

    /// Nanoseconds as microseconds with three decimals (the format's unit).
    #[inline]
    pub fn micros(&mut self, ns: u64) {
        self.small(&Small::micros(ns));
    }

    /// Bytes formatted earlier: a fixed-size move, then only their length counts.
    #[inline(always)]
    pub fn small(&mut self, s: &Small) {
        if self.pos + SMALL > CHUNK {
            self.hand_over();
        }
        self.buf[self.pos..self.pos + SMALL].copy_from_slice(&s.bytes);
        self.pos += s.len as usize;
    }
}

/// Bytes of `Small`: a number, or a fiber's `"pid":P,"tid":T}`.
const SMALL: usize = 40;

/// A few bytes formatted once and written many times (a slice's start time
/// is in its event and its flows' events) without a call to copy them.
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

    /// Appends a decimal number, two digits at a time.
    pub fn push_uint(&mut self, mut n: u64) {
        let len = n.checked_ilog10().unwrap_or(0) as usize + 1;
        let mut i = self.len as usize + len;
        self.len = i as u8;
        while n >= 100 {
            let p = (n % 100) as usize * 2;
            n /= 100;
            i -= 2;
            self.bytes[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
        }
        if n >= 10 {
            let p = n as usize * 2;
            self.bytes[i - 2..i].copy_from_slice(&PAIRS[p..p + 2]);
        } else {
            self.bytes[i - 1] = b'0' + n as u8;
        }
    }

    pub fn uint(n: u64) -> Small {
        let mut s = Small::new();
        s.push_uint(n);
        s
    }

    pub fn micros(ns: u64) -> Small {
        let mut s = Small::uint(ns / 1000);
        let f = ns % 1000;
        s.push(&[b'.', b'0' + (f / 100) as u8, b'0' + (f / 10 % 10) as u8, b'0' + (f % 10) as u8]);
        s
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::Out;

    fn written(f: impl FnOnce(&mut Out)) -> String {
        let path = std::env::temp_dir().join(format!(
            "csp-trace-out-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let mut out = Out::new(std::fs::File::create(&path).unwrap()).unwrap();
        f(&mut out);
        out.close().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        text
    }

    #[test]
    fn numbers_and_times() {
        let text = written(|o| {
            for n in [0, 7, 10, 99, 100, 12345, u64::MAX] {
                o.uint(n);
                o.put(b" ");
            }
            o.micros(1_234_567);
            o.put(b" ");
            o.micros(5);
        });
        assert_eq!(text, format!("0 7 10 99 100 12345 {} 1234.567 0.005", u64::MAX));
    }

    /// Many chunks, and a slice longer than a chunk, arrive whole and in order.
    #[test]
    fn chunks_arrive_in_order() {
        let long = "x".repeat(super::CHUNK * 2 + 3);
        let text = written(|o| {
            for i in 0..200_000u64 {
                o.uint(i);
                o.put(b",");
            }
            o.put_slice(long.as_bytes());
        });
        let (nums, tail) = text.split_at(text.len() - long.len());
        assert_eq!(tail, long);
        let expected: String = (0..200_000).map(|i| format!("{i},")).collect();
        assert_eq!(nums, expected);
    }
}
