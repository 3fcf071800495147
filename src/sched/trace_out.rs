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
/// Chunks queued for the writer before the program waits for it: 2 MB,
/// enough to ride out the writer's stalls (with 2 the program waited on it:
/// the 200,000-message ping-pong took 84 ms traced, 69 ms with 8).
const IN_FLIGHT: usize = 8;

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

    /// A decimal number, its digits written in place from the last.
    #[inline]
    pub fn uint(&mut self, mut n: u64) {
        const MAX: usize = 20;
        if self.pos + MAX > CHUNK {
            self.hand_over();
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
        if self.pos + 16 > CHUNK {
            self.hand_over();
        }
        self.buf[self.pos..self.pos + 16].copy_from_slice(&t.bytes.to_le_bytes());
        self.pos += t.len as usize;
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
            o.put(b" ");
            o.micros(u64::MAX);
            o.put(b" ");
            o.uint(9_999_999_999_999_999);
        });
        let max_us = format!("{}.{:03}", u64::MAX / 1000, u64::MAX % 1000);
        assert_eq!(text, format!("0 7 10 99 100 12345 {} 1234.567 0.005 {max_us} 9999999999999999", u64::MAX));
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
