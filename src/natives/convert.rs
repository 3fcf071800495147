//! Conversions and builders as globals: `ord chr hex bin oct`, `int(s, base)`,
//! `zip`, `from_entries` and `set` (a map of keys to `true`).

use super::args::{arity, int_arg, str_arg};
use crate::display::repr;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Heap, Res, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("ord", ord);
    vm.define_native("chr", chr);
    vm.define_native("hex", hex);
    vm.define_native("bin", bin);
    vm.define_native("oct", oct);
    vm.define_native("zip", zip);
    vm.define_native("from_entries", from_entries);
    vm.define_native("set", set);
}

/// `ord(c)`: the code point of a one-character string.
fn ord(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("ord", args, 1, 1)?;
    let s = str_arg(&vm.heap, "ord", args[0])?;
    let mut it = s.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(Value::Int(c as i64)),
        _ => err(ErrorKind::Value, format!("ord() needs one character, got {}", repr(&vm.heap, args[0]))),
    }
}

/// `chr(n)`: the one-character string of code point `n`.
fn chr(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("chr", args, 1, 1)?;
    let n = int_arg(&vm.heap, "chr", args[0])?;
    match u32::try_from(n).ok().and_then(char::from_u32) {
        Some(c) => Ok(vm.heap.char_str(c)),
        None => err(ErrorKind::Value, format!("chr() needs a code point (0 to 0x10ffff, not a surrogate), got {n}")),
    }
}

fn radix(vm: &mut Vm, name: &str, args: &[Value], prefix: &str) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let n = int_arg(&vm.heap, name, args[0])?;
    let sign = if n < 0 { "-" } else { "" };
    let m = n.unsigned_abs();
    let digits = match prefix {
        "0x" => format!("{m:x}"),
        "0o" => format!("{m:o}"),
        _ => format!("{m:b}"),
    };
    Ok(vm.heap.string(format!("{sign}{prefix}{digits}")))
}

/// `hex(n)`: `"0xff"`, `"-0x1"` (as Python).
fn hex(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    radix(vm, "hex", args, "0x")
}

fn bin(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    radix(vm, "bin", args, "0b")
}

fn oct(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    radix(vm, "oct", args, "0o")
}

/// `int(s, base)`: `s` in base 2..36 with an optional sign, surrounding whitespace,
/// and for bases 16, 8 and 2 an optional `0x`, `0o` or `0b` prefix.
pub(crate) fn int_base(heap: &Heap, args: &[Value]) -> Res<Value> {
    let Value::Int(base) = args[1] else {
        return err(ErrorKind::Type, format!("int() base must be an int, got {}", heap.type_name(args[1])));
    };
    if !(2..=36).contains(&base) {
        return err(ErrorKind::Value, format!("int() base must be 2 to 36, got {base}"));
    }
    let Some(so) = heap.as_str(args[0]) else {
        return err(ErrorKind::Type, format!("int() with a base needs a string, got {}", heap.type_name(args[0])));
    };
    let t = so.s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let prefix = match base {
        16 => "0x",
        8 => "0o",
        2 => "0b",
        _ => "",
    };
    let digits = match digits.get(..2) {
        Some(p) if !prefix.is_empty() && p.eq_ignore_ascii_case(prefix) => &digits[2..],
        _ => digits,
    };
    let bad = || err(ErrorKind::Value, format!("cannot convert {} to int in base {base}", repr(heap, args[0])));
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return bad();
    }
    let Some(digits) = without_underscores(digits, |b| b.is_ascii_alphanumeric()) else { return bad() };
    // Parsed as u64 so that the most negative int fits.
    let Ok(m) = u64::from_str_radix(&digits, base as u32) else { return bad() };
    let v = if neg { 0i64.checked_sub_unsigned(m) } else { i64::try_from(m).ok() };
    v.map(Value::Int).map_or_else(bad, Ok)
}

/// `s` without the `_` that separate digits (`1_000`, as in literals and
/// Python's `int`); None when one does not stand between two digits.
pub(crate) fn without_underscores(s: &str, digit: fn(u8) -> bool) -> Option<std::borrow::Cow<'_, str>> {
    if !s.contains('_') {
        return Some(std::borrow::Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let between = |i: usize| i > 0 && i + 1 < b.len() && digit(b[i - 1]) && digit(b[i + 1]);
    if (0..b.len()).any(|i| b[i] == b'_' && !between(i)) {
        return None;
    }
    Some(std::borrow::Cow::Owned(s.replace('_', "")))
}

/// `zip(a, b, ...)`: a list of lists, the i-th items of each list, as long as the shortest.
fn zip(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("zip", args, 1, usize::MAX)?;
    let mut lists = Vec::with_capacity(args.len());
    for (i, v) in args.iter().enumerate() {
        match vm.heap.as_list(*v) {
            Some(l) => lists.push(l.to_vec()),
            None => {
                let t = vm.heap.type_name(*v);
                return err(ErrorKind::Type, format!("zip() expects lists, got {t} (argument {})", i + 1));
            }
        }
    }
    let n = lists.iter().map(Vec::len).min().unwrap_or(0);
    let rows = (0..n).map(|i| vm.heap.list(lists.iter().map(|l| l[i]).collect())).collect();
    Ok(vm.heap.list(rows))
}

/// `from_entries(pairs)`: a map from a list of `[key, value]` lists (later keys win).
fn from_entries(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("from_entries", args, 1, 1)?;
    let Some(pairs) = vm.heap.as_list(args[0]) else {
        let t = vm.heap.type_name(args[0]);
        return err(ErrorKind::Type, format!("from_entries() expects a list of [key, value] lists, got {t}"));
    };
    let mut m = crate::vm::value::new_map(pairs.len());
    for p in pairs {
        match vm.heap.as_list(*p).map(|l| &l[..]) {
            Some([k, v]) => {
                m.insert(super::args::key_arg(&vm.heap, "from_entries", *k)?, *v);
            }
            _ => {
                let shown = repr(&vm.heap, *p);
                return err(ErrorKind::Value, format!("from_entries() needs [key, value] pairs, got {shown}"));
            }
        }
    }
    Ok(Value::Obj(vm.heap.alloc(Obj::Map(m))))
}

/// `set(list?)`: a map with each item as a key and `true` as its value.
fn set(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("set", args, 0, 1)?;
    let items = match args.first() {
        None => Vec::new(),
        Some(v) => match vm.heap.as_list(*v) {
            Some(l) => l.to_vec(),
            None => return err(ErrorKind::Type, format!("set() expects a list, got {}", vm.heap.type_name(*v))),
        },
    };
    let mut m = crate::vm::value::new_map(items.len());
    for v in items {
        m.insert(super::args::key_arg(&vm.heap, "set", v)?, Value::Bool(true));
    }
    Ok(Value::Obj(vm.heap.alloc(Obj::Map(m))))
}
