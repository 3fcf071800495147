//! Incremental deflate in the three framings of std/compress: gzip (RFC 1952,
//! its header and trailer written and checked here), zlib (RFC 1950, which
//! flate2 frames) and raw deflate (RFC 1951), on flate2's miniz_oxide
//! backend. Nothing here knows the VM: the encoder and decoder take bytes and
//! give bytes, and the decoder's output is bounded by its caller, so that a
//! gzip bomb stops at a limit instead of filling memory.

pub use super::decoder::Decoder;
use flate2::{Compress, Compression, FlushCompress, Status};

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
pub(super) const BODY_STEP: usize = 256 * 1024;

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
