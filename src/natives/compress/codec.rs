//! Incremental deflate in the three framings of std/compress: gzip (RFC 1952,
//! its header and trailer written and checked here), zlib (RFC 1950, which
//! flate2 frames) and raw deflate (RFC 1951), on flate2's miniz_oxide
//! backend. Nothing here knows the VM: the encoder and decoder take bytes and
//! give bytes, and the decoder's output is bounded by its caller, so that a
//! gzip bomb stops at a limit instead of filling memory.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The framing of a deflate stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Gzip,
    /// zlib's framing (RFC 1950): HTTP's `deflate`, Python's `zlib.compress`.
    Deflate,
    /// Raw deflate blocks (RFC 1951): zip entries, WebSocket compression.
    Raw,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "gzip" => Some(Format::Gzip),
            "deflate" => Some(Format::Deflate),
            "deflate_raw" => Some(Format::Raw),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Deflate => "deflate",
            Format::Raw => "deflate_raw",
        }
    }
}

/// Why decoding stopped: the data is not what it claims (a `value` error), or
/// the output passed the caller's limit.
#[derive(Debug, PartialEq)]
pub enum Error {
    Corrupt(String),
    TooBig,
}

/// Output made per call of `Encoder` when the caller gave no room.
const OUT_STEP: usize = 32 * 1024;
/// Most output one step of a decoder makes (then it checks its limits).
const BODY_STEP: usize = 256 * 1024;

/// A gzip header without a name, comment or time (as Go writes it): magic,
/// method 8, no flags, mtime 0, extra flags, OS 255 ("unknown").
fn gzip_header(level: u32) -> [u8; 10] {
    let xfl = match level {
        9 => 2,
        1 => 4,
        _ => 0,
    };
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255]
}

pub struct Encoder {
    format: Format,
    z: Compress,
    level: u32,
    header_written: bool,
    /// gzip's trailer: the CRC-32 and length (mod 2^32) of the input.
    crc: crc32fast::Hasher,
    size: u32,
    finished: bool,
}

impl Encoder {
    /// `level` 0 (stored) to 9 (smallest); 6 is zlib's default.
    pub fn new(format: Format, level: u32) -> Encoder {
        Encoder {
            format,
            z: Compress::new(Compression::new(level), format == Format::Deflate),
            level,
            header_written: false,
            crc: crc32fast::Hasher::new(),
            size: 0,
            finished: false,
        }
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Compresses `data` onto the end of `out` (deflate keeps some of it back
    /// until more comes, a flush or the finish).
    pub fn write(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        if self.finished {
            return Err(format!("the {} stream is finished: nothing more can be written to it", self.format.name()));
        }
        self.header(out);
        if self.format == Format::Gzip {
            self.crc.update(data);
            self.size = self.size.wrapping_add(data.len() as u32);
        }
        self.run(data, out, FlushCompress::None)
    }

    /// Writes out everything compressed so far, ending on a byte boundary
    /// (zlib's sync flush), so a reader can decompress all of it now.
    pub fn flush(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        if self.finished {
            return Ok(());
        }
        self.header(out);
        self.run(&[], out, FlushCompress::Sync)
    }

    /// Ends the stream: the last block and the framing's trailer.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        if self.finished {
            return Ok(());
        }
        self.header(out);
        self.run(&[], out, FlushCompress::Finish)?;
        if self.format == Format::Gzip {
            out.extend_from_slice(&self.crc.clone().finalize().to_le_bytes());
            out.extend_from_slice(&self.size.to_le_bytes());
        }
        self.finished = true;
        Ok(())
    }

    fn header(&mut self, out: &mut Vec<u8>) {
        if !self.header_written && self.format == Format::Gzip {
            out.extend_from_slice(&gzip_header(self.level));
        }
        self.header_written = true;
    }

    fn run(&mut self, mut input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) -> Result<(), String> {
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve((input.len() / 2).clamp(OUT_STEP, 1 << 20));
            }
            let before = self.z.total_in();
            let status = self.z.compress_vec(input, out, flush).map_err(|e| format!("compression failed: {e}"))?;
            input = &input[(self.z.total_in() - before) as usize..];
            let out_full = out.len() == out.capacity();
            let done = match flush {
                FlushCompress::Finish => status == Status::StreamEnd,
                // A flush is complete once a call leaves room in the output.
                _ => input.is_empty() && !(flush == FlushCompress::Sync && out_full),
            };
            if done {
                return Ok(());
            }
        }
    }
}

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

/// All of `data` compressed in one go.
pub fn compress(format: Format, level: u32, data: &[u8]) -> Vec<u8> {
    let mut e = Encoder::new(format, level);
    let mut out = Vec::with_capacity(data.len() / 3 + 64);
    // Compressing into a Vec fails only on a broken state, never here.
    e.write(data, &mut out).and_then(|()| e.finish(&mut out)).expect("deflate into memory");
    out
}

/// All of `data` decompressed, or an error when the output passes `cap` bytes.
pub fn decompress(format: Format, data: &[u8], cap: usize) -> Result<Vec<u8>, Error> {
    let mut d = Decoder::new(format);
    d.feed(data);
    d.end_input();
    while !d.finished() {
        d.fill(usize::MAX, usize::MAX, cap)?;
    }
    let n = d.unread().len();
    Ok(d.take(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMATS: [Format; 3] = [Format::Gzip, Format::Deflate, Format::Raw];

    fn text(n: usize) -> Vec<u8> {
        (0..n).map(|i| b"the quick brown fox "[i % 20] ^ (i / 997) as u8).collect()
    }

    #[test]
    fn round_trips_in_every_format_and_level() {
        for f in FORMATS {
            for level in [0, 1, 6, 9] {
                for n in [0, 1, 1000, 300_000] {
                    let data = text(n);
                    let z = compress(f, level, &data);
                    assert_eq!(decompress(f, &z, usize::MAX).unwrap(), data, "{f:?} level {level} n {n}");
                }
            }
        }
    }

    #[test]
    fn decodes_byte_by_byte() {
        for f in FORMATS {
            let data = text(50_000);
            let z = compress(f, 6, &data);
            let mut d = Decoder::new(f);
            let mut got = Vec::new();
            for b in &z {
                d.feed(&[*b]);
                d.fill(usize::MAX, 1 << 20, usize::MAX).unwrap();
                let n = d.unread().len();
                got.extend(d.take(n));
            }
            d.end_input();
            d.fill(usize::MAX, usize::MAX, usize::MAX).unwrap();
            assert!(d.finished(), "{f:?}");
            got.extend(d.take(d.unread().len()));
            assert_eq!(got, data);
        }
    }

    #[test]
    fn flushes_make_everything_so_far_readable() {
        let mut e = Encoder::new(Format::Gzip, 6);
        let mut d = Decoder::new(Format::Gzip);
        for part in [&b"first line\n"[..], b"second\n", b""] {
            let mut out = Vec::new();
            e.write(part, &mut out).unwrap();
            e.flush(&mut out).unwrap();
            d.feed(&out);
            d.fill(usize::MAX, usize::MAX, usize::MAX).unwrap();
            assert_eq!(d.take(d.unread().len()), part);
            assert!(d.starved() && !d.finished());
        }
    }

    #[test]
    fn bad_data_is_an_error_and_stays_one() {
        let z = compress(Format::Gzip, 6, b"hello world");
        assert_eq!(
            decompress(Format::Gzip, b"hello", 100),
            Err(Error::Corrupt("not gzip data (it starts with 0x68 0x65, not 0x1f 0x8b)".into()))
        );
        assert_eq!(
            decompress(Format::Gzip, &z[..z.len() - 3], 100),
            Err(Error::Corrupt("the gzip data is cut short in its trailer (truncated?)".into()))
        );
        assert!(matches!(decompress(Format::Gzip, &z[..12], 100), Err(Error::Corrupt(m)) if m.contains("cut short")));
        let mut bad = z.clone();
        let n = bad.len();
        bad[n - 8] ^= 1;
        assert!(matches!(decompress(Format::Gzip, &bad, 100), Err(Error::Corrupt(m)) if m.contains("CRC-32")));
        let mut d = Decoder::new(Format::Deflate);
        d.feed(b"\x78\x9c\xff\xff\xff\xff");
        let first = d.fill(10, 10, 100);
        assert_eq!(first, Err(Error::Corrupt("the deflate data is corrupt".into())));
        assert_eq!(d.fill(10, 10, 100), first);
    }

    #[test]
    fn gzip_members_padding_and_trailing_data() {
        let mut two = compress(Format::Gzip, 6, b"one ");
        two.extend(compress(Format::Gzip, 1, b"two"));
        two.extend([0, 0, 0]);
        assert_eq!(decompress(Format::Gzip, &two, 100).unwrap(), b"one two");
        two.extend(b"junk");
        assert!(matches!(decompress(Format::Gzip, &two, 100), Err(Error::Corrupt(m)) if m.contains("after the gzip")));
        let mut z = compress(Format::Deflate, 6, b"zlib");
        z.extend(b"rest");
        assert_eq!(decompress(Format::Deflate, &z, 100).unwrap(), b"zlib");
    }

    #[test]
    fn header_fields_are_skipped() {
        // FEXTRA, FNAME, FCOMMENT and FHCRC.
        let body = compress(Format::Raw, 6, b"named");
        let mut h = vec![0x1f, 0x8b, 8, 2 | 4 | 8 | 16, 0, 0, 0, 0, 0, 3, 3, 0, b'a', b'b', b'c'];
        h.extend(b"file.txt\0a comment\0");
        let crc = crc32fast::hash(&h) as u16;
        h.extend(crc.to_le_bytes());
        h.extend(&body);
        h.extend(crc32fast::hash(b"named").to_le_bytes());
        h.extend(5u32.to_le_bytes());
        assert_eq!(decompress(Format::Gzip, &h, 100).unwrap(), b"named");
    }

    #[test]
    fn a_bomb_stops_at_the_cap() {
        let zeros = vec![0u8; 50 << 20];
        let z = compress(Format::Gzip, 9, &zeros);
        assert!(z.len() < 100_000);
        assert_eq!(decompress(Format::Gzip, &z, 1 << 20), Err(Error::TooBig));
        // Step by step, the buffer never holds much more than asked for.
        let mut d = Decoder::new(Format::Gzip);
        d.feed(&z);
        d.fill(1000, 1 << 20, 1 << 20).unwrap();
        assert!(d.unread().len() >= 1000 && d.unread().len() < 1 << 16, "{}", d.unread().len());
    }
}
