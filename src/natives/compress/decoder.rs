//! Decoding of std/compress's three framings (see codec.rs): gzip members'
//! headers and trailers checked here, zlib and raw deflate by flate2, with the
//! output bounded by the caller so that a gzip bomb stops at a limit.

use super::codec::{Error, Format, BODY_STEP};
use flate2::{Decompress, FlushDecompress, Status};

/// Where a decoder is in its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Reading a gzip member's header.
    Header,
    Body,
    /// Reading a gzip member's CRC-32 and length.
    Trailer,
    /// The stream (for gzip: a member) ended.
    End,
}

pub struct Decoder {
    pub format: Format,
    z: Decompress,
    state: State,
    /// Compressed input not yet decompressed, from `ipos` on.
    input: Vec<u8>,
    ipos: usize,
    /// No more input will come.
    input_ended: bool,
    crc: crc32fast::Hasher,
    size: u32,
    /// Decompressed output not yet taken, from `opos` on.
    out: Vec<u8>,
    opos: usize,
    /// How many unread bytes `newline` has seen hold no `\n`.
    scanned: usize,
    /// The last step could do nothing more without input.
    starved: bool,
    /// A corrupt stream stays broken: later calls give the same error.
    broken: Option<String>,
}

impl Decoder {
    pub fn new(format: Format) -> Decoder {
        Decoder {
            format,
            z: Decompress::new(format == Format::Deflate),
            state: if format == Format::Gzip { State::Header } else { State::Body },
            input: Vec::new(),
            ipos: 0,
            input_ended: false,
            crc: crc32fast::Hasher::new(),
            size: 0,
            out: Vec::new(),
            opos: 0,
            scanned: 0,
            starved: true,
            broken: None,
        }
    }

    /// More compressed input.
    pub fn feed(&mut self, data: &[u8]) {
        if self.ipos > 0 && self.ipos == self.input.len() {
            self.input.clear();
            self.ipos = 0;
        }
        self.input.extend_from_slice(data);
        self.starved = false;
    }

    /// No more input will come.
    pub fn end_input(&mut self) {
        self.input_ended = true;
        self.starved = false;
    }

    /// Decompressed bytes not yet taken.
    pub fn unread(&self) -> &[u8] {
        &self.out[self.opos..]
    }

    /// Takes the first `n` unread bytes.
    pub fn take(&mut self, n: usize) -> Vec<u8> {
        let v = self.out[self.opos..self.opos + n].to_vec();
        self.consume(n);
        v
    }

    /// Where the first `\n` of the unread bytes is, without looking again at
    /// bytes an earlier call looked at (a long line comes a step at a time).
    pub fn newline(&mut self) -> Option<usize> {
        let found = memchr::memchr(b'\n', &self.unread()[self.scanned..]).map(|i| self.scanned + i);
        self.scanned = found.unwrap_or(self.unread().len());
        found
    }

    /// Drops the first `n` unread bytes.
    pub fn consume(&mut self, n: usize) {
        self.scanned = self.scanned.saturating_sub(n);
        self.opos += n;
        if self.opos == self.out.len() {
            self.out.clear();
            self.opos = 0;
        }
    }

    /// The whole stream has been decompressed (its output may still be unread).
    pub fn finished(&self) -> bool {
        self.state == State::End && (self.format != Format::Gzip || self.input_ended && self.ipos == self.input.len())
    }

    /// Nothing more can be decompressed until more input comes.
    pub fn starved(&self) -> bool {
        self.starved && !self.input_ended
    }

    /// Decompresses until `unread()` holds at least `want` bytes, the input
    /// runs out, or about `step` bytes were made by this call; `TooBig` when
    /// the unread output would pass `cap`.
    pub fn fill(&mut self, want: usize, step: usize, cap: usize) -> Result<(), Error> {
        if let Some(e) = &self.broken {
            return Err(Error::Corrupt(e.clone()));
        }
        let start = self.out.len() - self.opos;
        let r = self.fill_inner(want, step, cap, start);
        if let Err(Error::Corrupt(e)) = &r {
            self.broken = Some(e.clone());
        }
        r
    }

    fn fill_inner(&mut self, want: usize, step: usize, cap: usize, start: usize) -> Result<(), Error> {
        while self.unread().len() < want && self.unread().len() - start < step {
            if self.unread().len() > cap {
                return Err(Error::TooBig);
            }
            if self.opos > 0 && self.opos >= self.out.len() / 2 {
                self.out.drain(..self.opos);
                self.opos = 0;
            }
            let progressed = match self.state {
                State::Header => self.header()?,
                State::Body if self.format == Format::Deflate && self.z.total_in() == 0 && self.rest().len() < 2 => {
                    false
                }
                State::Body => {
                    if self.format == Format::Deflate && self.z.total_in() == 0 {
                        zlib_header(self.rest()).map_err(Error::Corrupt)?;
                    }
                    let have = self.unread().len();
                    let room = (want - have).min(step).min(cap.saturating_add(1) - have).clamp(1, BODY_STEP);
                    self.body(room)?
                }
                State::Trailer => self.trailer()?,
                State::End => self.next_member()?,
            };
            if !progressed {
                self.starved = true;
                if self.input_ended && !self.finished() {
                    return Err(Error::Corrupt(self.truncated()));
                }
                return Ok(());
            }
        }
        if self.unread().len() > cap {
            return Err(Error::TooBig);
        }
        Ok(())
    }

    fn rest(&self) -> &[u8] {
        &self.input[self.ipos..]
    }

    fn truncated(&self) -> String {
        let what = match self.state {
            State::Header => "in its header",
            State::Trailer => "in its trailer",
            _ => "before its end",
        };
        format!("the {} data is cut short {what} (truncated?)", self.format.name())
    }

    /// Reads a gzip header; false when it is not all there yet.
    fn header(&mut self) -> Result<bool, Error> {
        match gzip_header_len(self.rest()).map_err(Error::Corrupt)? {
            None => Ok(false),
            Some(n) => {
                self.ipos += n;
                self.state = State::Body;
                Ok(true)
            }
        }
    }

    /// Decompresses at most `room` bytes; false when nothing could be done.
    fn body(&mut self, room: usize) -> Result<bool, Error> {
        let at = self.out.len();
        self.out.resize(at + room, 0);
        let (bi, bo) = (self.z.total_in(), self.z.total_out());
        let status = self.z.decompress(&self.input[self.ipos..], &mut self.out[at..], FlushDecompress::None);
        let used = (self.z.total_in() - bi) as usize;
        let made = (self.z.total_out() - bo) as usize;
        self.out.truncate(at + made);
        // miniz_oxide says no more than that the data is bad.
        let status = status.map_err(|_| Error::Corrupt(format!("the {} data is corrupt", self.format.name())))?;
        self.ipos += used;
        if self.format == Format::Gzip {
            self.crc.update(&self.out[at..]);
            self.size = self.size.wrapping_add(made as u32);
        }
        if status == Status::StreamEnd {
            self.state = if self.format == Format::Gzip { State::Trailer } else { State::End };
            return Ok(true);
        }
        Ok(used > 0 || made > 0)
    }

    /// Checks a gzip member's CRC-32 and length.
    fn trailer(&mut self) -> Result<bool, Error> {
        let Some(t) = self.rest().get(..8) else { return Ok(false) };
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc != self.crc.clone().finalize() {
            return Err(Error::Corrupt("the gzip data is corrupt: its CRC-32 does not match".into()));
        }
        if size != self.size {
            return Err(Error::Corrupt("the gzip data is corrupt: its length does not match".into()));
        }
        self.ipos += 8;
        self.state = State::End;
        Ok(true)
    }

    /// After a gzip member: another member (as `gunzip` reads `cat a.gz
    /// b.gz`), zero bytes of padding (skipped, as gzip and Python do), or the
    /// end. Data that is none of these is an error; after a zlib or raw
    /// stream, the rest of the input is ignored (as Python's and Go's readers
    /// leave it). False when there is nothing to do.
    fn next_member(&mut self) -> Result<bool, Error> {
        if self.format != Format::Gzip {
            return Ok(false);
        }
        let zeros = self.rest().iter().take_while(|&&b| b == 0).count();
        if zeros > 0 {
            self.ipos += zeros;
            return Ok(true);
        }
        match self.rest() {
            [] => Ok(false),
            [0x1f] if !self.input_ended => Ok(false),
            [0x1f, 0x8b, ..] => {
                self.state = State::Header;
                self.z.reset(false);
                self.crc = crc32fast::Hasher::new();
                self.size = 0;
                Ok(true)
            }
            _ => Err(Error::Corrupt("the data after the gzip stream is not gzip data".into())),
        }
    }
}

/// Whether `b` starts with a zlib header: deflate (method 8) with a window of
/// at most 32 KiB, and a check value that makes the two bytes a multiple of 31.
fn zlib_header(b: &[u8]) -> Result<(), String> {
    let (cmf, flg) = (b[0], b[1]);
    if cmf & 0x0f == 8 && cmf >> 4 <= 7 && (cmf as u16 * 256 + flg as u16).is_multiple_of(31) {
        return Ok(());
    }
    let gzip = if cmf == 0x1f && flg == 0x8b { ", as gzip data does" } else { "" };
    Err(format!("not zlib (deflate) data: it starts with {cmf:#04x} {flg:#04x}{gzip}"))
}

/// The length of the gzip header at the start of `b`, None if it is not all
/// there yet, or why it is not a gzip header.
fn gzip_header_len(b: &[u8]) -> Result<Option<usize>, String> {
    if let Some(&first) = b.first() {
        if first != 0x1f || b.get(1).is_some_and(|&x| x != 0x8b) {
            let shown: Vec<String> = b.iter().take(2).map(|x| format!("{x:#04x}")).collect();
            let zlib = if b.len() >= 2 && zlib_header(b).is_ok() { "; zlib (deflate) data starts so" } else { "" };
            return Err(format!("not gzip data (it starts with {}, not 0x1f 0x8b{zlib})", shown.join(" ")));
        }
    }
    if b.len() < 10 {
        return Ok(None);
    }
    if b[2] != 8 {
        return Err(format!("gzip data in an unknown compression method ({})", b[2]));
    }
    let flags = b[3];
    if flags & 0xe0 != 0 {
        return Err("the gzip header has reserved flags set".into());
    }
    let mut at = 10;
    if flags & 4 != 0 {
        let Some(x) = b.get(at..at + 2) else { return Ok(None) };
        at += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
    }
    for flag in [8, 16] {
        if flags & flag != 0 {
            match b.get(at..).and_then(|r| memchr::memchr(0, r)) {
                Some(i) => at += i + 1,
                None => return Ok(None),
            }
        }
    }
    if flags & 2 != 0 {
        let Some(x) = b.get(at..at + 2) else { return Ok(None) };
        let crc = crc32fast::hash(&b[..at]) as u16;
        if u16::from_le_bytes([x[0], x[1]]) != crc {
            return Err("the gzip data is corrupt: its header's CRC does not match".into());
        }
        at += 2;
    }
    if at > b.len() {
        return Ok(None);
    }
    Ok(Some(at))
}
