//! How values print: `display` for `print`/`str`/interpolation (top-level strings
//! bare) and `repr` for values inside containers (strings quoted). Golden tests
//! compare this output byte for byte.
//!
//! The walk over containers is iterative with an explicit stack, so arbitrarily deep
//! nesting never grows the Rust stack, and a container met again while it is being
//! printed shows as `[...]` or `{...}`.

use crate::limits::MAX_STRING;
use crate::vm::object::Obj;
use crate::vm::value::MapHasher;
use crate::vm::{Handle, Heap, Key, Value};
use std::collections::HashSet;
use std::fmt::Write;

/// What `print`, `str` and `"${}"` show: strings bare, everything else as `repr`.
pub fn display(heap: &Heap, v: Value) -> String {
    let mut out = String::new();
    write_display(heap, v, &mut out);
    out
}

/// Appends `display(v)` to `out`, without a string of its own for an int or
/// a string (interpolation builds its result this way).
pub fn write_display(heap: &Heap, v: Value, out: &mut String) {
    if let Value::Int(i) = v {
        return out.push_str(itoa::Buffer::new().format(i));
    }
    match heap.as_str(v) {
        Some(s) => out.push_str(&s.s),
        None => write_repr(heap, v, out),
    }
}

/// The form a value takes inside a container: strings quoted with escapes.
pub fn repr(heap: &Heap, v: Value) -> String {
    let mut out = String::new();
    write_repr(heap, v, &mut out);
    out
}

/// The containers being printed (a cycle prints as `[...]`).
type Opened = HashSet<u32, MapHasher>;

/// A container part-way through printing: its handle and the next item to print.
enum Open {
    List(Handle, usize),
    Map(Handle, usize),
}

/// Appends `repr(v)` to `out`. Output is cut short with `...` past `MAX_STRING`
/// bytes (a DAG of shared lists can be exponentially large when printed).
pub fn write_repr(heap: &Heap, v: Value, out: &mut String) {
    let mut stack: Vec<Open> = Vec::new();
    // Free to make until a container is entered: std's default hasher reads
    // and bumps per-thread keys even for a scalar, which enters none.
    let mut open = Opened::with_hasher(MapHasher);
    enter(heap, v, out, &mut stack, &mut open);
    while let Some(top) = stack.last_mut() {
        if out.len() > MAX_STRING - 3 {
            let mut cut = MAX_STRING - 3;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("...");
            return;
        }
        match top {
            Open::List(h, i) => {
                let h = *h;
                let Obj::List(items) = heap.get(h) else { unreachable!() };
                if *i >= items.len() {
                    out.push(']');
                    open.remove(&h.0);
                    stack.pop();
                    continue;
                }
                if *i > 0 {
                    out.push_str(", ");
                }
                let item = items[*i];
                *i += 1;
                enter(heap, item, out, &mut stack, &mut open);
            }
            Open::Map(h, i) => {
                let h = *h;
                let Obj::Map(map) = heap.get(h) else { unreachable!() };
                let Some((k, item)) = map.get_index(*i) else {
                    out.push('}');
                    open.remove(&h.0);
                    stack.pop();
                    continue;
                };
                if *i > 0 {
                    out.push_str(", ");
                }
                *i += 1;
                write_key(k, out);
                out.push_str(": ");
                enter(heap, *item, out, &mut stack, &mut open);
            }
        }
    }
}

/// Writes a scalar whole, or opens a container (pushing it on `stack`), or writes
/// `[...]`/`{...}` for a container that is already open.
fn enter(heap: &Heap, v: Value, out: &mut String, stack: &mut Vec<Open>, open: &mut Opened) {
    let h = match v {
        Value::Nil => return out.push_str("nil"),
        Value::Bool(b) => return out.push_str(if b { "true" } else { "false" }),
        Value::Int(i) => return out.push_str(itoa::Buffer::new().format(i)),
        Value::Float(f) => return out.push_str(&fmt_float(f)),
        Value::Obj(h) => h,
    };
    match heap.get(h) {
        Obj::List(_) => {
            if !open.insert(h.0) {
                return out.push_str("[...]");
            }
            out.push('[');
            stack.push(Open::List(h, 0));
        }
        Obj::Map(_) => {
            if !open.insert(h.0) {
                return out.push_str("{...}");
            }
            out.push('{');
            stack.push(Open::Map(h, 0));
        }
        obj => write_object(obj, out),
    }
}

/// Objects that print without looking inside other objects. New object kinds
/// (chan `<chan 3/10>`, task `<task 7>`, `<mutex>`, `<waitgroup>`, `<coroutine>`)
/// get their arm here.
fn write_object(obj: &Obj, out: &mut String) {
    match obj {
        Obj::Str(s) => quote(&s.s, out),
        Obj::Bytes(b) => quote_bytes(b, out),
        Obj::Closure(c) => {
            let name: &str = &c.proto.name;
            if name.is_empty() {
                out.push_str("<fn>");
            } else {
                write!(out, "<fn {name}>").unwrap();
            }
        }
        Obj::Native(n) => write!(out, "<fn {}>", n.name).unwrap(),
        Obj::Error(e) => write!(out, "<error: {}>", e.message).unwrap(),
        Obj::Range(lo, hi) => write!(out, "{lo}..{hi}").unwrap(),
        Obj::Chan(c) => write!(out, "<chan {}/{}>", c.len(), c.cap()).unwrap(),
        Obj::Task(t) => write!(out, "<task {}>", t.number).unwrap(),
        Obj::Mutex(_) => out.push_str("<mutex>"),
        Obj::Coroutine(_) => out.push_str("<coroutine>"),
        Obj::WaitGroup(_) => out.push_str("<waitgroup>"),
        Obj::Host(o) => o.display(out),
        Obj::Cell(_) => out.push_str("<cell>"),
        Obj::Free => out.push_str("<freed>"),
        Obj::List(_) | Obj::Map(_) => unreachable!("containers are walked by write_repr"),
    }
}

fn write_key(k: &Key, out: &mut String) {
    match k {
        Key::Nil => out.push_str("nil"),
        Key::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Key::Int(i) => write!(out, "{i}").unwrap(),
        Key::Str(s) => quote(s, out),
        Key::Bytes(b) => quote_bytes(b, out),
    }
}

/// Appends `s` in double quotes with `\n \t \r \\ \" \0` escaped and other control
/// characters as `\u{XX}` (lowercase hex, at least two digits).
pub fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => write!(out, "\\u{{{:02x}}}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends the printed form of a bytes value, as Python writes it: `b"..."` with
/// printable ASCII as is, `\" \\ \n \r \t` escaped and every other byte as `\xNN`.
pub fn quote_bytes(b: &[u8], out: &mut String) {
    out.push_str("b\"");
    for &c in b {
        match c {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b' '..=b'~' => out.push(c as char),
            c => write!(out, "\\x{c:02x}").unwrap(),
        }
    }
    out.push('"');
}

/// Formats a float as JavaScript's `Number.prototype.toString` does (shortest
/// round-trip digits; exponent form from 1e21 up and below 1e-6), except that an
/// integral value in plain form keeps `.0` so floats stay visibly floats (`3.0`).
/// For the same reason `-0.0` prints as `-0.0`, where JavaScript prints `0`.
pub fn fmt_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // ryu-js writes the shortest round-trip digits under JavaScript's rules
    // (Number::toString: plain form from 1e-6 up to 1e21, ties to the even
    // digit); csp adds `.0` to a plain integral value.
    let mut buf = ryu_js::Buffer::new();
    let s = buf.format_finite(f);
    let mut out = String::with_capacity(s.len() + 2);
    out.push_str(s);
    if !s.contains(['.', 'e']) {
        out.push_str(".0");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::Vm;

    /// Expected strings from `node -e 'console.log(String(x))'`, with `.0` added to
    /// integral plain-form values.
    #[test]
    fn floats_match_javascript() {
        let table: &[(f64, &str)] = &[
            (0.1 + 0.2, "0.30000000000000004"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (123456789012345680000.0, "123456789012345680000.0"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (1.5e-6, "0.0000015"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-0.5, "-0.5"),
            (100.0, "100.0"),
            (3.0, "3.0"),
            (0.1, "0.1"),
            (1.5e300, "1.5e+300"),
            (1e20, "100000000000000000000.0"),
            (1.2345e20, "123450000000000000000.0"),
            (1.2345e21, "1.2345e+21"),
            (123.456, "123.456"),
            (-123.456, "-123.456"),
            (0.000123, "0.000123"),
            (1e-5, "0.00001"),
            (2.5, "2.5"),
            (1e100, "1e+100"),
            (-1e-100, "-1e-100"),
            (std::f64::consts::PI, "3.141592653589793"),
            (std::f64::consts::E, "2.718281828459045"),
            (9007199254740993.0, "9007199254740992.0"),
            (9223372036854775808.0, "9223372036854776000.0"),
            (0.1 * 3.0, "0.30000000000000004"),
            (1e16, "10000000000000000.0"),
            (123e-20, "1.23e-18"),
            (5e-7, "5e-7"),
            (4.5e15, "4500000000000000.0"),
            (4.35, "4.35"),
            (0.5, "0.5"),
            (1.0 / 7.0, "0.14285714285714285"),
            (12345678.9, "12345678.9"),
            (1e15 + 0.3, "1000000000000000.2"),
            (-1.0, "-1.0"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (0.000001234, "0.000001234"),
            (1.234e-7, "1.234e-7"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
        ];
        for (x, want) in table {
            assert_eq!(fmt_float(*x), *want, "fmt_float({x:?})");
        }
    }

    fn s(vm: &mut Vm, text: &str) -> Value {
        vm.heap.str(text)
    }

    #[test]
    fn scalars_and_strings() {
        let mut vm = Vm::new();
        let h = &vm.heap;
        assert_eq!(display(h, Value::Nil), "nil");
        assert_eq!(display(h, Value::Bool(true)), "true");
        assert_eq!(display(h, Value::Int(42)), "42");
        assert_eq!(display(h, Value::Int(-7)), "-7");
        assert_eq!(display(h, Value::Float(3.0)), "3.0");
        let v = s(&mut vm, "a\"b\n\t\r\\\0\x1b\u{7f}é");
        assert_eq!(display(&vm.heap, v), "a\"b\n\t\r\\\0\x1b\u{7f}é");
        assert_eq!(repr(&vm.heap, v), r#""a\"b\n\t\r\\\0\u{1b}\u{7f}é""#);
    }

    #[test]
    fn containers() {
        let mut vm = Vm::new();
        let a = s(&mut vm, "a");
        let inner = vm.heap.list(vec![Value::Int(2)]);
        let l = vm.heap.list(vec![Value::Int(1), a, Value::Nil, Value::Float(2.5), inner]);
        assert_eq!(display(&vm.heap, l), r#"[1, "a", nil, 2.5, [2]]"#);
        let mut m = crate::vm::value::new_map(0);
        m.insert(Key::Str("a".into()), Value::Int(1));
        m.insert(Key::Str("b".into()), inner);
        m.insert(Key::Int(3), Value::Bool(true));
        m.insert(Key::Nil, Value::Int(1));
        m.insert(Key::Bool(false), Value::Nil);
        let m = Value::Obj(vm.heap.alloc(Obj::Map(m)));
        assert_eq!(display(&vm.heap, m), r#"{"a": 1, "b": [2], 3: true, nil: 1, false: nil}"#);
        let empty = vm.heap.list(vec![]);
        assert_eq!(display(&vm.heap, empty), "[]");
        let em = Value::Obj(vm.heap.alloc(Obj::Map(Default::default())));
        assert_eq!(display(&vm.heap, em), "{}");
        // Shared (not cyclic) sublists print in full each time.
        let shared = vm.heap.list(vec![inner, inner]);
        assert_eq!(display(&vm.heap, shared), "[[2], [2]]");
    }

    #[test]
    fn other_objects() {
        let mut vm = Vm::new();
        vm.define_native("print", |_, _| Ok(Value::Nil));
        let print = vm.globals[vm.global_names["print"] as usize];
        assert_eq!(display(&vm.heap, print), "<fn print>");
        let r = Value::Obj(vm.heap.alloc(Obj::Range(0, 3)));
        assert_eq!(display(&vm.heap, r), "0..3");
        let e = crate::vm::error::bare_error(&mut vm, crate::vm::ErrorKind::User, "boom");
        assert_eq!(display(&vm.heap, e), "<error: boom>");
        let l = vm.heap.list(vec![e, r]);
        assert_eq!(display(&vm.heap, l), "[<error: boom>, 0..3]");
    }

    #[test]
    fn cycles() {
        let mut vm = Vm::new();
        let a = vm.heap.list(vec![Value::Int(1)]);
        let Value::Obj(ha) = a else { unreachable!() };
        if let Obj::List(l) = vm.heap.get_mut(ha) {
            l.push(a);
        }
        assert_eq!(display(&vm.heap, a), "[1, [...]]");
        let m = Value::Obj(vm.heap.alloc(Obj::Map(Default::default())));
        let Value::Obj(hm) = m else { unreachable!() };
        if let Obj::Map(map) = vm.heap.get_mut(hm) {
            map.insert(Key::Str("self".into()), m);
            map.insert(Key::Str("list".into()), a);
        }
        assert_eq!(display(&vm.heap, m), r#"{"self": {...}, "list": [1, [...]]}"#);
    }

    #[test]
    fn deep_nesting_uses_no_rust_stack() {
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut vm = Vm::new();
                let mut v = Value::Int(0);
                for _ in 0..100_000 {
                    v = vm.heap.list(vec![v]);
                }
                let out = display(&vm.heap, v);
                assert_eq!(out.len(), 200_001);
                assert!(out.starts_with("[[[[") && out.contains("[[0]]") && out.ends_with("]]]]"));
            })
            .unwrap();
        t.join().unwrap();
    }
}
