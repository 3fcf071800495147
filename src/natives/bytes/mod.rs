//! The `bytes` value: immutable binary data (`Obj::Bytes`). This module has the
//! `bytes(x)` builtin, what the VM does with bytes out of its fast paths (indexing,
//! `+`, `in`), and the helpers file and process builtins use to take and give data:
//! `Heap::bytes`, `Heap::as_bytes`, `Heap::as_data`, `data_arg`, `utf8`.

mod methods;

pub use crate::vm::seq_ops::{check_bytes_len as check_len, find_bytes as find};
pub use methods::CLASS;

use super::args::{arity, str_arg};
use crate::limits::MAX_STRING;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Heap, Res, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("bytes", bytes);
}

/// The data of a string (its UTF-8) or bytes argument, or a `type` error naming
/// the function: what a `write` of text or bytes takes.
pub fn data_arg<'h>(heap: &'h Heap, name: &str, v: Value) -> Res<&'h [u8]> {
    match heap.as_data(v) {
        Some(d) => Ok(d),
        None => err(ErrorKind::Type, format!("{name}() needs a string or bytes, not {}", heap.type_name(v))),
    }
}

/// `data` as UTF-8 text, or a `value` error naming the offset of the first bad byte.
pub fn utf8(data: &[u8]) -> Res<&str> {
    std::str::from_utf8(data).or_else(|e| {
        let at = e.valid_up_to();
        match e.error_len() {
            Some(_) => err(ErrorKind::Value, format!("invalid UTF-8 at byte offset {at} (0x{:02x})", data[at])),
            None => err(ErrorKind::Value, format!("invalid UTF-8 at byte offset {at}: the data ends mid-character")),
        }
    })
}

/// `bytes(x)`: from a string (UTF-8), a list of ints 0 to 255, an int count of zero
/// bytes, or bytes (the same value); `bytes(s, "hex")` parses hex digits and
/// `bytes(s, "utf-8")` is `bytes(s)`.
fn bytes(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("bytes", args, 1, 2)?;
    let heap = &mut vm.heap;
    let v = args[0];
    if let Some(enc) = args.get(1) {
        let enc = str_arg(heap, "bytes", *enc)?;
        let Some(s) = heap.as_str(v) else {
            let t = heap.type_name(v);
            return err(ErrorKind::Type, format!("bytes() with an encoding needs a string, not {t}"));
        };
        let text = s.s.clone();
        return match &*enc {
            "utf-8" | "utf8" => Ok(heap.bytes(text.as_bytes())),
            "hex" => {
                let data = from_hex(&text)?;
                Ok(heap.bytes(data))
            }
            _ => err(ErrorKind::Value, format!("unknown encoding {enc:?} (bytes() takes \"utf-8\" or \"hex\")")),
        };
    }
    let Value::Obj(h) = v else {
        return match v {
            Value::Int(n) if n < 0 => err(ErrorKind::Value, format!("bytes() count must not be negative, got {n}")),
            Value::Int(n) => {
                check_len(n as usize)?;
                Ok(heap.bytes(vec![0u8; n as usize]))
            }
            _ => bad_source(heap, v),
        };
    };
    match heap.get(h) {
        Obj::Bytes(_) => Ok(v),
        Obj::Str(s) => {
            let data = s.s.clone();
            Ok(heap.bytes(data.as_bytes()))
        }
        Obj::List(items) => {
            let mut data = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                match heap.as_data(*x) {
                    // Bytes or strings in the list are joined (Buffer.concat).
                    Some(d) => data.extend_from_slice(d),
                    None => data.push(byte_item(heap, i, *x)?),
                }
                check_len(data.len())?;
            }
            Ok(heap.bytes(data))
        }
        _ => bad_source(heap, v),
    }
}

fn bad_source<T>(heap: &Heap, v: Value) -> Res<T> {
    let t = heap.type_name(v);
    err(ErrorKind::Type, format!("bytes() needs a string, a list of ints, an int or bytes, not {t}"))
}

/// Item `i` of the list given to `bytes()`, which must be an int from 0 to 255.
fn byte_item(heap: &Heap, i: usize, x: Value) -> Res<u8> {
    match x {
        Value::Int(b) => u8::try_from(b)
            .or_else(|_| err(ErrorKind::Value, format!("bytes() list item {i} is {b}, not a byte (0 to 255)"))),
        _ => err(ErrorKind::Type, format!("bytes() list item {i} is a {}, not an int or bytes", heap.type_name(x))),
    }
}

/// Lowercase hex, two digits per byte (`b.hex()`, `hex.encode`).
pub fn to_hex(b: &[u8]) -> Res<String> {
    use std::fmt::Write;
    let len = b.len() * 2;
    if len > MAX_STRING {
        return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
    }
    let mut s = String::with_capacity(len);
    b.iter().for_each(|x| write!(s, "{x:02x}").unwrap());
    Ok(s)
}

/// Parses pairs of hex digits (either case); ASCII whitespace between pairs is
/// skipped, so `"de ad be ef"` works.
pub fn from_hex(s: &str) -> Res<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 2);
    let mut high: Option<u8> = None;
    for (i, c) in s.chars().enumerate() {
        if high.is_none() && c.is_ascii_whitespace() {
            continue;
        }
        let Some(d) = c.to_digit(16) else {
            return err(ErrorKind::Value, format!("invalid hex: {c:?} at index {i} is not a hex digit"));
        };
        match high.take() {
            Some(h) => out.push(h << 4 | d as u8),
            None => high = Some(d as u8),
        }
    }
    if high.is_some() {
        return err(ErrorKind::Value, "invalid hex: odd number of digits");
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
