//! `std/compress` (docs/compress.md): gzip, zlib (`deflate`) and raw deflate
//! of whole strings or bytes, and the incremental encoder and decoder that the
//! module's stream wrappers (csp, in std/compress.csp) drive. Whole-data work
//! past `INLINE` runs on the I/O pool, so a big job parks only its fiber;
//! decompressed output is bounded by the memory limit (a gzip bomb is a
//! catchable `memory` or `limit` error).

pub mod codec;
mod decoder;

use super::args::arity;
use super::bytes::data_arg;
use super::text::Opts;
use crate::limits::{show_bytes, MAX_STRING};
use crate::vm::builtin::io_kind;
use crate::vm::host::{Class, HostObject};
use crate::vm::{err, ErrorKind, Handle, NativeFn, Res, Ret, Value, Vm};
use codec::{Decoder, Encoder, Error, Format};
use std::borrow::Cow;

/// The state of a stream wrapper, a host object (type "codec").
pub enum Codec {
    Encoder(Encoder),
    Decoder(Decoder),
}

/// Input up to this size is compressed on the VM's thread, and decompressed
/// there up to this much output; more goes to the I/O pool.
const INLINE: usize = 64 * 1024;
/// Most output a decoder method makes per call, so one call stays short.
const STEP: usize = 1 << 20;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("compress.gzip", NativeFn::Full(|vm, _, a| compress(vm, a, "compress.gzip", Format::Gzip)));
    vm.define_hidden(
        "compress.deflate",
        NativeFn::Full(|vm, _, a| compress(vm, a, "compress.deflate", Format::Deflate)),
    );
    vm.define_hidden(
        "compress.deflate_raw",
        NativeFn::Full(|vm, _, a| compress(vm, a, "compress.deflate_raw", Format::Raw)),
    );
    vm.define_hidden("compress.gunzip", NativeFn::Full(|vm, _, a| decompress(vm, a, "compress.gunzip", Format::Gzip)));
    vm.define_hidden(
        "compress.inflate",
        NativeFn::Full(|vm, _, a| decompress(vm, a, "compress.inflate", Format::Deflate)),
    );
    vm.define_hidden(
        "compress.inflate_raw",
        NativeFn::Full(|vm, _, a| decompress(vm, a, "compress.inflate_raw", Format::Raw)),
    );
    vm.define_hidden("compress.encoder", NativeFn::Value(encoder));
    vm.define_hidden("compress.decoder", NativeFn::Value(decoder));
}

/// The format named by a stream wrapper's argument.
fn format_arg(vm: &Vm, name: &str, v: Option<&Value>) -> Res<Format> {
    let Some(&v) = v.filter(|v| !matches!(v, Value::Nil)) else { return Ok(Format::Gzip) };
    let Some(s) = vm.heap.as_str(v) else {
        return err(ErrorKind::Type, format!("{name}() format must be a string, not {}", vm.heap.type_name(v)));
    };
    Format::parse(&s.s).map_or_else(
        || {
            let hint = if &*s.s == "zlib" { " (zlib's framing is \"deflate\", as in HTTP)" } else { "" };
            err(
                ErrorKind::Value,
                format!("{name}() format is \"gzip\", \"deflate\" or \"deflate_raw\", not {:?}{hint}", &*s.s),
            )
        },
        Ok,
    )
}

/// The `level` option: 0 (no compression) to 9 (smallest), default 6.
fn level_opt(vm: &Vm, name: &str, opts: Option<&Value>) -> Res<u32> {
    let o = Opts::new(vm, name, opts, &["level"])?;
    match o.value("level") {
        None => Ok(6),
        Some(Value::Int(n)) if (0..=9).contains(&n) => Ok(n as u32),
        Some(Value::Int(n)) => err(ErrorKind::Value, format!("{name}() level must be from 0 to 9, got {n}")),
        Some(v) => err(ErrorKind::Type, format!("{name}() option level needs an int, not {}", vm.heap.type_name(v))),
    }
}

/// `compress.gzip(data, {level})` and the others: `data` (a string's UTF-8,
/// or bytes) compressed, as bytes.
fn compress(vm: &mut Vm, args: &[Value], name: &str, format: Format) -> Res<Ret> {
    arity(name, args, 1, 2)?;
    let level = level_opt(vm, name, args.get(1))?;
    let data = data_arg(&vm.heap, name, args[0])?;
    vm.heap.reserve(data.len() / 2)?;
    if data.len() <= INLINE {
        let out = codec::compress(format, level, data);
        return Ok(Ret::Value(vm.heap.bytes(out)));
    }
    let data = data.to_vec();
    let out_cap = vm.heap.headroom().min(MAX_STRING);
    let work = move || {
        let out = codec::compress(format, level, &data);
        match out.len() > out_cap {
            true => {
                Err((ErrorKind::Memory, format!("out of memory: the compressed data is {}", show_bytes(out.len()))))
            }
            false => Ok(out),
        }
    };
    Ok(io_kind(work, |heap, out| heap.bytes(out)))
}

/// What bounds a decompression: the memory limit, the longest bytes value,
/// or the caller's `max`; the error for passing it is made only when needed.
struct Cap {
    bytes: usize,
    bound: Bound,
    /// The heap's limit, for the message.
    limit: usize,
    /// Who is decompressing, for messages: "compress.gunzip()".
    who: Cow<'static, str>,
}

#[derive(Clone, Copy)]
enum Bound {
    Memory,
    Longest,
    Max,
}

impl Cap {
    fn new(vm: &Vm, who: Cow<'static, str>, max: Option<usize>) -> Cap {
        let room = vm.heap.headroom();
        let (bytes, bound) = match max {
            Some(m) if m <= room.min(MAX_STRING) => (m, Bound::Max),
            _ if MAX_STRING < room => (MAX_STRING, Bound::Longest),
            _ => (room, Bound::Memory),
        };
        Cap { bytes, bound, limit: vm.heap.limit, who }
    }

    fn error(&self, e: Error) -> (ErrorKind, String) {
        let (who, n) = (&self.who, self.bytes);
        match (e, self.bound) {
            (Error::Corrupt(m), _) => (ErrorKind::Value, format!("{who}: {m}")),
            (Error::TooBig, Bound::Memory) => {
                let (room, limit) = (show_bytes(n), show_bytes(self.limit));
                let m = format!("out of memory: {who} would make more than {room}, which passes the {limit} limit (see --max-memory)");
                (ErrorKind::Memory, m)
            }
            (Error::TooBig, Bound::Longest) => {
                let m = format!("{who}: the data decompresses to more than {n} bytes, the most a bytes value holds");
                (ErrorKind::Limit, m)
            }
            (Error::TooBig, Bound::Max) => {
                (ErrorKind::Limit, format!("{who}: the data decompresses to more than {n} bytes (its max option)"))
            }
        }
    }
}

/// `compress.gunzip(data, {max})` and the others: the decompressed bytes. A
/// result longer than `max` (or than memory allows) is an error, found while
/// decompressing, before the memory is taken.
fn decompress(vm: &mut Vm, args: &[Value], name: &str, format: Format) -> Res<Ret> {
    arity(name, args, 1, 2)?;
    let o = Opts::new(vm, name, args.get(1), &["max"])?;
    let max = match o.value("max") {
        None => None,
        Some(Value::Int(n)) if n >= 0 => Some(n as usize),
        Some(v) => {
            let t = vm.heap.type_name(v);
            return err(ErrorKind::Value, format!("{name}() option max needs an int of 0 or more, not {t}"));
        }
    };
    let cap = Cap::new(vm, format!("{name}()").into(), max);
    let data = data_arg(&vm.heap, name, args[0])?;
    let mut d = Decoder::new(format);
    d.feed(data);
    d.end_input();
    let step = |d: &mut Decoder, budget: usize| -> Result<(), (ErrorKind, String)> {
        while !d.finished() {
            let before = d.unread().len();
            d.fill(usize::MAX, budget, cap.bytes).map_err(|e| cap.error(e))?;
            if d.unread().len() - before >= budget {
                break;
            }
        }
        Ok(())
    };
    // Small data finishes here; the rest goes on on the pool.
    step(&mut d, INLINE).or_else(|(k, m)| err(k, m))?;
    if d.finished() {
        let n = d.unread().len();
        return Ok(Ret::Value(vm.heap.bytes(d.take(n))));
    }
    let work = move || {
        while !d.finished() {
            d.fill(usize::MAX, usize::MAX, cap.bytes).map_err(|e| cap.error(e))?;
        }
        let n = d.unread().len();
        Ok(d.take(n))
    };
    Ok(io_kind(work, |heap, out| heap.bytes(out)))
}

/// `__compress_encoder(format, {level})`: a stream wrapper's compressor.
fn encoder(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("compress.writer", args, 1, 2)?;
    let format = format_arg(vm, "compress.writer", args.first())?;
    let level = level_opt(vm, "compress.writer", args.get(1))?;
    Ok(vm.heap.host_object(Codec::Encoder(Encoder::new(format, level))))
}

/// `__compress_decoder(format)`: a stream wrapper's decompressor.
fn decoder(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("compress.reader", args, 1, 1)?;
    let format = format_arg(vm, "compress.reader", args.first())?;
    Ok(vm.heap.host_object(Codec::Decoder(Decoder::new(format))))
}

fn codec_mut(vm: &mut Vm, h: Handle) -> &mut Codec {
    vm.heap.host_mut::<Codec>(h).expect("a codec")
}

/// The methods of a codec (only std/compress.csp calls them):
/// an encoder's `write(data)`, `flush()`, `finish()` give the compressed bytes
/// made; a decoder's `feed(data | nil)` takes input (nil: its end),
/// `read(max | nil, exact)` and `line(max | nil)` give output or nil (then
/// `finished()` or `starved()` says why).
static ENCODER: Class = Class {
    name: "codec",
    methods: &[
        ("write", |vm, _, h, name, args| {
            arity(name, args, 1, 1)?;
            let data = data_arg(&vm.heap, "write", args[0])?.to_vec();
            encode(vm, h, |e, out| e.write(&data, out)).map(Ret::Value)
        }),
        ("flush", |vm, _, h, _, _| encode(vm, h, |e, out| e.flush(out)).map(Ret::Value)),
        ("finish", |vm, _, h, _, _| encode(vm, h, |e, out| e.finish(out)).map(Ret::Value)),
    ],
    next: None,
    field: None,
};

static DECODER: Class = Class {
    name: "codec",
    methods: &[
        ("feed", |vm, _, h, name, args| {
            arity(name, args, 1, 1)?;
            let data = match args[0] {
                Value::Nil => None,
                v => Some(data_arg(&vm.heap, "feed", v)?.to_vec()),
            };
            let d = decoder_mut(vm, h);
            match data {
                Some(b) => d.feed(&b),
                None => d.end_input(),
            }
            Ok(Ret::Value(Value::Nil))
        }),
        ("finished", |vm, _, h, _, _| {
            let d = decoder_mut(vm, h);
            Ok(Ret::Value(Value::Bool(d.finished() && d.unread().is_empty())))
        }),
        ("starved", |vm, _, h, _, _| Ok(Ret::Value(Value::Bool(decoder_mut(vm, h).starved())))),
        ("read", |vm, _, h, name, args| {
            arity(name, args, 1, 2)?;
            let max = count_arg(vm, "read", args[0])?;
            let exact = matches!(args.get(1), Some(Value::Bool(true)));
            read(vm, h, max, exact, &reader_cap(vm)).map(Ret::Value)
        }),
        ("line", |vm, _, h, name, args| {
            arity(name, args, 1, 1)?;
            let max = count_arg(vm, "read_line", args[0])?;
            line(vm, h, max.unwrap_or(usize::MAX), &reader_cap(vm)).map(Ret::Value)
        }),
    ],
    next: None,
    field: None,
};

impl HostObject for Codec {
    fn class(&self) -> &'static Class {
        match self {
            Codec::Encoder(_) => &ENCODER,
            Codec::Decoder(_) => &DECODER,
        }
    }
    /// deflate's window and tables (a compressor's are the bigger).
    fn size(&self) -> usize {
        match self {
            Codec::Encoder(_) => 256 * 1024,
            Codec::Decoder(_) => 48 * 1024,
        }
    }
}

fn reader_cap(vm: &Vm) -> Cap {
    Cap::new(vm, Cow::Borrowed("compress.reader()"), None)
}

fn decoder_mut(vm: &mut Vm, h: Handle) -> &mut Decoder {
    match codec_mut(vm, h) {
        Codec::Decoder(d) => d,
        Codec::Encoder(_) => unreachable!("a decoder"),
    }
}

fn count_arg(vm: &Vm, name: &str, v: Value) -> Res<Option<usize>> {
    match v {
        Value::Nil => Ok(None),
        Value::Int(n) if n > 0 => Ok(Some(n as usize)),
        v => err(ErrorKind::Value, format!("{name}() needs a positive int count, not {}", vm.heap.type_name(v))),
    }
}

/// Runs an encoder step; the bytes it made.
fn encode(vm: &mut Vm, h: Handle, f: impl FnOnce(&mut Encoder, &mut Vec<u8>) -> Result<(), String>) -> Res<Value> {
    let Codec::Encoder(e) = codec_mut(vm, h) else { unreachable!("an encoder") };
    let mut out = Vec::new();
    if let Err(m) = f(e, &mut out) {
        return err(ErrorKind::Io, m);
    }
    Ok(vm.heap.bytes(out))
}

fn decoder_fill(d: &mut Decoder, want: usize, cap: &Cap) -> Res<()> {
    d.fill(want, STEP, cap.bytes).or_else(|e| {
        let (k, m) = cap.error(e);
        err(k, m)
    })
}

/// Up to `max` bytes (None: all, once the stream is finished; exact: exactly
/// `max`, or an error if the stream ends first), or nil.
fn read(vm: &mut Vm, h: Handle, max: Option<usize>, exact: bool, cap: &Cap) -> Res<Value> {
    let Codec::Decoder(d) = codec_mut(vm, h) else { unreachable!("a decoder") };
    let want = max.unwrap_or(usize::MAX);
    let enough = |d: &Decoder| match (max, exact) {
        (None, _) => false,
        (Some(n), true) => d.unread().len() >= n,
        (Some(_), false) => !d.unread().is_empty(),
    };
    if !enough(d) {
        decoder_fill(d, want, cap)?;
    }
    let got = if enough(d) || d.finished() { d.unread().len().min(want) } else { 0 };
    if exact && d.finished() && got > 0 && got < want {
        return err(
            ErrorKind::Io,
            format!("the {} stream ended after {got} of the {want} bytes asked for", d.format.name()),
        );
    }
    if got == 0 {
        return Ok(Value::Nil);
    }
    let out = d.take(got);
    Ok(vm.heap.bytes(out))
}

/// The next line without its `\n` or `\r\n`, the last line of a stream that
/// does not end in a newline, or nil (no whole line yet, or the end). A line
/// longer than `max` bytes is a `limit` error.
fn line(vm: &mut Vm, h: Handle, max: usize, cap: &Cap) -> Res<Value> {
    let Codec::Decoder(d) = codec_mut(vm, h) else { unreachable!("a decoder") };
    let mut found = d.newline();
    if found.is_none() && !d.finished() && d.unread().len() <= max {
        decoder_fill(d, usize::MAX, cap)?;
        found = d.newline();
    }
    let name = d.format.name();
    let (mut len, eat) = match found {
        Some(i) => (i, i + 1),
        None if d.unread().len() > max => {
            return err(ErrorKind::Limit, format!("a line of the {name} stream is longer than {max} bytes"));
        }
        None if d.finished() && !d.unread().is_empty() => (d.unread().len(), d.unread().len()),
        None => return Ok(Value::Nil),
    };
    if len > 0 && d.unread()[len - 1] == b'\r' {
        len -= 1;
    }
    if len > max {
        return err(ErrorKind::Limit, format!("a line of the {name} stream is longer than {max} bytes"));
    }
    let text = match super::bytes::utf8(&d.unread()[..len]) {
        Ok(t) => t.to_string(),
        Err(crate::vm::Fault::Error(e)) => {
            return err(e.0, format!("the {name} stream is not text: {}; read() gives bytes", e.1));
        }
        Err(f) => return Err(f),
    };
    d.consume(eat);
    Ok(vm.heap.string(text))
}
