//! Methods of bytes values. Positions are byte indices; arguments that are runs of
//! bytes must be bytes (a string is a `type` error pointing to `s.encode()`).

use super::{find, utf8};
use crate::limits::{MAX_LIST, MAX_STRING};
use crate::natives::args::{arity, slice_bounds, str_arg};
use crate::natives::value_method as v;
use crate::vm::host::Class;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Handle, Heap, Res, Value, Vm};
use std::rc::Rc;

/// Bytes' methods (`Vm::kinds`).
pub static CLASS: Class = Class {
    name: "bytes",
    methods: &[
        ("contains", v!(contains)),
        ("decode", v!(decode)),
        ("ends_with", v!(ends_with)),
        ("find", v!(index_of)),
        ("hex", v!(hex)),
        ("index_of", v!(index_of)),
        ("len", v!(len)),
        ("list", v!(list)),
        ("slice", v!(slice)),
        ("split", v!(split)),
        ("starts_with", v!(starts_with)),
    ],
    next: None,
    field: None,
};

/// The receiver's data (shared, so the heap can be mutated while it is held).
fn data(heap: &Heap, h: Handle) -> Rc<[u8]> {
    match heap.get(h) {
        Obj::Bytes(b) => b.clone(),
        _ => unreachable!("receiver is bytes"),
    }
}

fn len(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    Ok(Value::Int(data(&vm.heap, h).len() as i64))
}

fn hex(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let b = data(&vm.heap, h);
    Ok(vm.heap.string(super::to_hex(&b)?))
}

fn decode(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 1)?;
    let b = data(&vm.heap, h);
    let heap = &mut vm.heap;
    let mode = match args.first() {
        Some(m) => str_arg(heap, name, *m)?,
        None => "utf-8".into(),
    };
    match &*mode {
        "utf-8" | "utf8" => {
            let s = utf8(&b)?;
            Ok(heap.str(s))
        }
        "lossy" => {
            let s = String::from_utf8_lossy(&b).into_owned();
            if s.len() > MAX_STRING {
                return err(ErrorKind::Limit, format!("string too long ({} bytes)", s.len()));
            }
            Ok(heap.string(s))
        }
        m => err(ErrorKind::Value, format!("unknown encoding {m:?} (decode() takes \"utf-8\" or \"lossy\")")),
    }
}

fn slice(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    let b = data(&vm.heap, h);
    let (start, end) = slice_bounds(&vm.heap, name, args, b.len())?;
    if end - start == b.len() {
        return Ok(Value::Obj(h));
    }
    Ok(vm.heap.bytes(&b[start..end]))
}

fn list(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let b = data(&vm.heap, h);
    if b.len() > MAX_LIST {
        return err(ErrorKind::Limit, format!("list too long ({} items)", b.len()));
    }
    let items = b.iter().map(|x| Value::Int(*x as i64)).collect();
    Ok(vm.heap.list(items))
}

/// `index_of` and `find`.
fn index_of(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let b = data(&vm.heap, h);
    let at = match args[0] {
        Value::Int(i) => u8::try_from(i).ok().and_then(|x| b.iter().position(|y| *y == x)),
        v => find(&b, bytes_arg(&vm.heap, name, v)?),
    };
    Ok(Value::Int(at.map_or(-1, |i| i as i64)))
}

fn contains(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let b = data(&vm.heap, h);
    Ok(Value::Bool(crate::vm::seq_ops::bytes_contain(&vm.heap, args[0], &b)?))
}

fn starts_with(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let b = data(&vm.heap, h);
    Ok(Value::Bool(b.starts_with(bytes_arg(&vm.heap, name, args[0])?)))
}

fn ends_with(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let b = data(&vm.heap, h);
    Ok(Value::Bool(b.ends_with(bytes_arg(&vm.heap, name, args[0])?)))
}

fn split(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 1)?;
    let b = data(&vm.heap, h);
    let heap = &mut vm.heap;
    let parts: Vec<&[u8]> = match args.first() {
        None => b.split(|c| c.is_ascii_whitespace()).filter(|p| !p.is_empty()).collect(),
        Some(sep) => {
            let sep = bytes_arg(heap, name, *sep)?;
            if sep.is_empty() {
                return err(ErrorKind::Value, "split() separator must not be empty");
            }
            split_on(&b, sep)
        }
    };
    let items = parts.into_iter().map(|p| heap.bytes(p)).collect();
    Ok(heap.list(items))
}

/// A bytes argument, or a `type` error (suggesting `encode` for a string).
fn bytes_arg<'h>(heap: &'h Heap, name: &str, v: Value) -> Res<&'h [u8]> {
    if let Some(b) = heap.as_bytes(v) {
        return Ok(b);
    }
    let hint = if heap.as_str(v).is_some() { " (make bytes of a string with s.encode())" } else { "" };
    err(ErrorKind::Type, format!("{name}() expects bytes, got {}{hint}", heap.type_name(v)))
}

/// The runs of `b` between occurrences of the non-empty `sep`.
fn split_on<'a>(b: &'a [u8], sep: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i + sep.len() <= b.len() {
        if &b[i..i + sep.len()] == sep {
            parts.push(&b[start..i]);
            i += sep.len();
            start = i;
        } else {
            i += 1;
        }
    }
    parts.push(&b[start..]);
    parts
}
