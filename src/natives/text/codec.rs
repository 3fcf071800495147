//! `std/base64`, `std/hex` and `std/hash`: binary data as text, digests and
//! CRC-32. Encoders take a string (its UTF-8) or bytes; decoders give bytes.
//! std/crypto's `hmac` uses `digest_output` and the same digest types.

use super::Opts;
use crate::natives::args::arity;
use crate::natives::bytes::{data_arg, from_hex, to_hex};
use crate::vm::{err, ErrorKind, NativeFn, Res, Value, Vm};
use base64::engine::general_purpose::{GeneralPurpose, PAD_INDIFFERENT};
use base64::engine::GeneralPurposeConfig;
use base64::{alphabet, DecodeError, Engine};
use sha2::Digest;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("base64.encode", NativeFn::Value(|vm, a| encode(vm, a, "base64.encode", &alphabet::STANDARD)));
    vm.define_hidden(
        "base64.url_encode",
        NativeFn::Value(|vm, a| encode(vm, a, "base64.url_encode", &alphabet::URL_SAFE)),
    );
    vm.define_hidden("base64.decode", NativeFn::Value(|vm, a| decode(vm, a, "base64.decode", false)));
    vm.define_hidden("base64.url_decode", NativeFn::Value(|vm, a| decode(vm, a, "base64.url_decode", true)));
    vm.define_hidden("hex.encode", NativeFn::Value(hex_encode));
    vm.define_hidden("hex.decode", NativeFn::Value(hex_decode));
    vm.define_hidden("hash.sha1", NativeFn::Value(|vm, a| digest::<sha1::Sha1>(vm, a, "hash.sha1")));
    vm.define_hidden("hash.sha256", NativeFn::Value(|vm, a| digest::<sha2::Sha256>(vm, a, "hash.sha256")));
    vm.define_hidden("hash.sha512", NativeFn::Value(|vm, a| digest::<sha2::Sha512>(vm, a, "hash.sha512")));
    vm.define_hidden("hash.md5", NativeFn::Value(|vm, a| digest::<md5::Md5>(vm, a, "hash.md5")));
    vm.define_hidden("hash.crc32", NativeFn::Value(crc32));
}

/// `base64.encode(data, {pad: false})`: padded with `=` unless told not to.
fn encode(vm: &mut Vm, args: &[Value], name: &str, abc: &alphabet::Alphabet) -> Res<Value> {
    arity(name, args, 1, 2)?;
    let pad = Opts::new(vm, name, args.get(1), &["pad"])?.bool(vm, "pad", true)?;
    let data = data_arg(&vm.heap, name, args[0])?;
    crate::natives::bytes::check_len(data.len() / 3 * 4 + 4)?;
    let engine = GeneralPurpose::new(abc, GeneralPurposeConfig::new().with_encode_padding(pad));
    let s = engine.encode(data);
    Ok(vm.heap.string(s))
}

/// `base64.decode(s)`: padding optional, ASCII whitespace (line breaks) skipped.
fn decode(vm: &mut Vm, args: &[Value], name: &str, url: bool) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let Some(s) = vm.heap.as_str(args[0]) else {
        return err(ErrorKind::Type, format!("{name}() needs a string, not {}", vm.heap.type_name(args[0])));
    };
    let s = s.s.clone();
    // The symbols and, where whitespace was skipped, each one's byte offset in `s`.
    let (symbols, at): (Vec<u8>, Vec<usize>) = if s.bytes().any(|b| b.is_ascii_whitespace()) {
        s.bytes().enumerate().filter(|(_, b)| !b.is_ascii_whitespace()).map(|(i, b)| (b, i)).unzip()
    } else {
        (s.as_bytes().to_vec(), Vec::new())
    };
    let abc = if url { &alphabet::URL_SAFE } else { &alphabet::STANDARD };
    let engine = GeneralPurpose::new(abc, PAD_INDIFFERENT);
    match engine.decode(&symbols) {
        Ok(data) => Ok(vm.heap.bytes(data)),
        Err(e) => {
            let index = |i: usize| {
                let byte = at.get(i).copied().unwrap_or(i);
                s[..byte].chars().count()
            };
            let symbol = |i: usize| s[at.get(i).copied().unwrap_or(i)..].chars().next().unwrap_or('?');
            let why = match e {
                DecodeError::InvalidByte(i, _) => {
                    let c = symbol(i);
                    let hint = match (c, url) {
                        ('-' | '_', false) => " (URL-safe base64? use base64.url_decode)",
                        ('+' | '/', true) => " (standard base64? use base64.decode)",
                        _ => "",
                    };
                    format!("{c:?} at index {} is not a base64 symbol{hint}", index(i))
                }
                DecodeError::InvalidLength(n) => format!("{n} symbols cannot end a whole number of bytes"),
                DecodeError::InvalidLastSymbol { offset: i, .. } => {
                    format!("{:?} at index {} has bits set past the end of the data", symbol(i), index(i))
                }
                DecodeError::InvalidPadding => "misplaced padding".to_string(),
            };
            err(ErrorKind::Value, format!("invalid base64: {why}"))
        }
    }
}

fn hex_encode(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("hex.encode", args, 1, 1)?;
    let s = to_hex(data_arg(&vm.heap, "hex.encode", args[0])?)?;
    Ok(vm.heap.string(s))
}

fn hex_decode(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("hex.decode", args, 1, 1)?;
    let Some(s) = vm.heap.as_str(args[0]) else {
        return err(ErrorKind::Type, format!("hex.decode() needs a string, not {}", vm.heap.type_name(args[0])));
    };
    let data = from_hex(&s.s.clone())?;
    Ok(vm.heap.bytes(data))
}

/// `hash.NAME(data, "hex" | "bytes")`: the digest of `data`, as lowercase hex
/// (the default) or as bytes.
fn digest<D: Digest>(vm: &mut Vm, args: &[Value], name: &str) -> Res<Value> {
    arity(name, args, 1, 2)?;
    let as_bytes = digest_output(vm, name, args.get(1), false)?;
    let sum = D::digest(data_arg(&vm.heap, name, args[0])?);
    output(vm, &sum, as_bytes)
}

/// Whether an output argument (`"hex"` or `"bytes"`; `default` when missing)
/// asks for bytes.
pub(crate) fn digest_output(vm: &Vm, name: &str, arg: Option<&Value>, default: bool) -> Res<bool> {
    match arg.map(|v| vm.heap.as_str(*v).map(|s| s.s.clone())) {
        None => Ok(default),
        Some(Some(f)) if &*f == "hex" => Ok(false),
        Some(Some(f)) if &*f == "bytes" => Ok(true),
        Some(Some(f)) => err(ErrorKind::Value, format!("{name}() output is \"hex\" or \"bytes\", not {f:?}")),
        Some(None) => {
            let t = vm.heap.type_name(*arg.expect("some"));
            err(ErrorKind::Type, format!("{name}() output is \"hex\" or \"bytes\", not {t}"))
        }
    }
}

/// A digest as bytes or lowercase hex.
pub(crate) fn output(vm: &mut Vm, sum: &[u8], as_bytes: bool) -> Res<Value> {
    if as_bytes {
        return Ok(vm.heap.bytes(sum));
    }
    Ok(vm.heap.string(to_hex(sum)?))
}

/// `hash.crc32(data, crc = 0)`: the CRC-32 (IEEE, as gzip, zip, PNG and
/// Python's `zlib.crc32`) of `data` as an int from 0 to 2^32 - 1; `crc`
/// continues one computed over the data before.
fn crc32(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("hash.crc32", args, 1, 2)?;
    let start = match args.get(1) {
        None => 0,
        Some(&Value::Int(c)) if (0..=u32::MAX as i64).contains(&c) => c as u32,
        Some(&Value::Int(c)) => {
            return err(ErrorKind::Value, format!("hash.crc32() start must be from 0 to 4294967295, got {c}"))
        }
        Some(v) => {
            return err(ErrorKind::Type, format!("hash.crc32() start needs an int, not {}", vm.heap.type_name(*v)))
        }
    };
    let mut h = crc32fast::Hasher::new_with_initial(start);
    h.update(data_arg(&vm.heap, "hash.crc32", args[0])?);
    Ok(Value::Int(h.finalize() as i64))
}
