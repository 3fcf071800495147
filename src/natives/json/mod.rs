//! `json_encode` and `json_decode`, written by hand. Both walk nesting with an explicit
//! stack (no Rust recursion) and stop at `limits::MAX_DEPTH` levels; the parser
//! is in `decode.rs`.

mod decode;

use super::args::{arity, str_arg};
use crate::display::fmt_float;
use crate::limits::{MAX_DEPTH, MAX_STRING};
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Handle, Heap, Key, Res, Value, Vm};
use std::collections::HashSet;
use std::fmt::Write;

pub fn register(vm: &mut Vm) {
    vm.define_native("json_encode", json_encode);
    vm.define_native("json_decode", json_decode);
}

/// `json_encode(v, indent)`: compact, or pretty-printed as JSON.stringify(v, null,
/// indent) and Python's json.dumps(v, indent=) with an int (spaces; 0 puts items on
/// their own lines unindented, as Python) or a string indent.
fn json_encode(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("json_encode", args, 1, 2)?;
    let indent = match args.get(1).copied() {
        None | Some(Value::Nil) => None,
        Some(Value::Int(n)) if (0..=MAX_INDENT).contains(&n) => Some(" ".repeat(n as usize)),
        Some(Value::Int(n)) => {
            return err(ErrorKind::Value, format!("json_encode() indent must be 0 to {MAX_INDENT}, got {n}"))
        }
        Some(v) => match vm.heap.as_str(v) {
            Some(s) if s.s.chars().count() <= MAX_INDENT as usize => Some(s.s.to_string()),
            Some(_) => {
                return err(ErrorKind::Value, format!("json_encode() indent string is longer than {MAX_INDENT}"))
            }
            None => {
                let kind = vm.heap.type_name(v);
                return err(ErrorKind::Type, format!("json_encode() indent must be an int or a string, not {kind}"));
            }
        },
    };
    let s = encode_with(&vm.heap, args[0], indent.as_deref())?;
    Ok(vm.heap.string(s))
}

/// The longest indent `json_encode` takes (output grows by it on every line).
const MAX_INDENT: i64 = 100;

fn json_decode(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("json_decode", args, 1, 1)?;
    let src = str_arg(&vm.heap, "json_decode", args[0])?;
    decode::Parser { src: &src, pos: 0 }.parse(&mut vm.heap)
}

/// A container part-way through encoding: its handle and the next item.
enum Open {
    List(Handle, usize),
    Map(Handle, usize),
}

/// Compact JSON for `v`, map keys in insertion order.
pub fn encode(heap: &Heap, v: Value) -> Res<String> {
    encode_with(heap, v, None)
}

/// JSON for `v`; with an indent, each item on its own line.
fn encode_with(heap: &Heap, v: Value, indent: Option<&str>) -> Res<String> {
    let mut out = String::new();
    let mut stack = Vec::new();
    let mut open = HashSet::new();
    enter(heap, v, &mut out, &mut stack, &mut open)?;
    while let Some(depth) = std::num::NonZeroUsize::new(stack.len()) {
        let depth = depth.get();
        let top = stack.last_mut().expect("the stack is not empty");
        if out.len() > MAX_STRING {
            return err(ErrorKind::Limit, format!("JSON output too long ({} bytes)", out.len()));
        }
        let (h, i) = match top {
            Open::List(h, i) | Open::Map(h, i) => (*h, i),
        };
        let next = match heap.get(h) {
            Obj::List(l) => l.get(*i).map(|v| (None, *v)),
            Obj::Map(m) => m.get_index(*i).map(|(k, v)| (Some(k), *v)),
            _ => unreachable!("only containers are open"),
        };
        let Some((key, item)) = next else {
            if let Some(ind) = indent.filter(|_| *i > 0) {
                newline(&mut out, ind, depth - 1);
            }
            out.push(if matches!(top, Open::List(..)) { ']' } else { '}' });
            open.remove(&h.0);
            stack.pop();
            continue;
        };
        if *i > 0 {
            out.push(',');
        }
        *i += 1;
        if let Some(ind) = indent {
            newline(&mut out, ind, depth);
        }
        if let Some(k) = key {
            match k {
                Key::Str(s) => quote(s, &mut out),
                Key::Int(n) => write!(out, "\"{n}\"").unwrap(),
                Key::Bool(b) => write!(out, "\"{b}\"").unwrap(),
                Key::Nil => out.push_str("\"null\""),
                Key::Bytes(_) => return err(ErrorKind::Type, "cannot encode a bytes map key as JSON"),
            }
            out.push_str(if indent.is_some() { ": " } else { ":" });
        }
        enter(heap, item, &mut out, &mut stack, &mut open)?;
    }
    Ok(out)
}

fn newline(out: &mut String, indent: &str, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str(indent);
    }
}

fn enter(heap: &Heap, v: Value, out: &mut String, stack: &mut Vec<Open>, open: &mut HashSet<u32>) -> Res<()> {
    let h = match v {
        Value::Obj(h) => h,
        Value::Nil => {
            out.push_str("null");
            return Ok(());
        }
        Value::Bool(b) => {
            out.push_str(if b { "true" } else { "false" });
            return Ok(());
        }
        Value::Int(i) => {
            write!(out, "{i}").unwrap();
            return Ok(());
        }
        Value::Float(f) if f.is_finite() => {
            out.push_str(&fmt_float(f));
            return Ok(());
        }
        Value::Float(f) => return err(ErrorKind::Value, format!("cannot encode {} as JSON", fmt_float(f))),
    };
    if let Some(t) = super::time::time_of(heap, v) {
        // RFC 3339, as JavaScript's Date and Go's time.Time encode.
        quote(&super::time_text::iso(t), out);
        return Ok(());
    }
    let (opener, frame) = match heap.get(h) {
        Obj::Str(s) => {
            quote(&s.s, out);
            return Ok(());
        }
        Obj::List(_) => ('[', Open::List(h, 0)),
        Obj::Map(_) => ('{', Open::Map(h, 0)),
        Obj::Bytes(_) => {
            return err(ErrorKind::Type, "cannot encode bytes as JSON (convert with b.decode() or b.hex() first)")
        }
        o => return err(ErrorKind::Type, format!("cannot encode {} as JSON", o.type_name())),
    };
    if !open.insert(h.0) {
        return err(ErrorKind::Value, "cannot encode a cyclic structure as JSON");
    }
    if stack.len() >= MAX_DEPTH {
        return err(ErrorKind::Limit, format!("cannot encode JSON nested more than {MAX_DEPTH} deep"));
    }
    out.push(opener);
    stack.push(frame);
    Ok(())
}

pub(crate) fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn dec(vm: &mut Vm, text: &str) -> Res<Value> {
        let s = vm.heap.str(text);
        call(vm, "json_decode", &[s])
    }

    fn enc(vm: &mut Vm, v: Value) -> Res<String> {
        let r = call(vm, "json_encode", &[v])?;
        Ok(crate::display::display(&vm.heap, r))
    }

    #[test]
    fn encodes() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let s = vm.heap.str("s");
        let l = vm.heap.list(vec![Value::Int(1), Value::Float(2.5), Value::Nil, Value::Bool(true), s]);
        let mut m = crate::vm::value::new_map(0);
        m.insert(Key::Str("a".into()), l);
        m.insert(Key::Int(1), Value::Int(2));
        m.insert(Key::Bool(false), Value::Float(3.0));
        m.insert(Key::Nil, Value::Float(1e21));
        let m = Value::Obj(vm.heap.alloc(Obj::Map(m)));
        assert_eq!(enc(vm, m).unwrap(), r#"{"a":[1,2.5,null,true,"s"],"1":2,"false":3.0,"null":1e+21}"#);
        let tricky = vm.heap.str("q\"b\\n\n\u{1}\u{8}é😀");
        assert_eq!(enc(vm, tricky).unwrap(), r#""q\"b\\n\n\u0001\bé😀""#);
        let empty = vm.heap.list(vec![]);
        assert_eq!(enc(vm, empty).unwrap(), "[]");
        let shared = vm.heap.list(vec![empty, empty]);
        assert_eq!(enc(vm, shared).unwrap(), "[[],[]]");
    }

    #[test]
    fn encode_errors() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let print = vm.globals[vm.global_names["print"] as usize];
        let l = vm.heap.list(vec![print]);
        assert_eq!(err_msg(enc(vm, l).map(|_| Value::Nil)), "cannot encode function as JSON");
        assert_eq!(err_msg(enc(vm, Value::Float(f64::NAN)).map(|_| Value::Nil)), "cannot encode nan as JSON");
        let a = vm.heap.list(vec![]);
        let Value::Obj(ha) = a else { panic!() };
        if let Obj::List(items) = vm.heap.get_mut(ha) {
            items.push(a);
        }
        assert_eq!(err_msg(enc(vm, a).map(|_| Value::Nil)), "cannot encode a cyclic structure as JSON");
        let mut deep = Value::Nil;
        for _ in 0..MAX_DEPTH + 1 {
            deep = vm.heap.list(vec![deep]);
        }
        assert!(err_msg(enc(vm, deep).map(|_| Value::Nil)).contains("nested"));
    }

    #[test]
    fn decodes() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let cases = [
            (r#"{"a":[1,2.5,null,true,"s"]}"#, r#"{"a": [1, 2.5, nil, true, "s"]}"#),
            (" [ ] ", "[]"),
            ("{}", "{}"),
            (r#"{"b": 1, "a": {"c": []}, "b": 2}"#, r#"{"b": 2, "a": {"c": []}}"#),
            ("-0", "0"),
            ("-12.5e-1", "-1.25"),
            ("1E2", "100.0"),
            ("9223372036854775807", "9223372036854775807"),
            ("9223372036854775808", "9223372036854776000.0"),
            ("-9223372036854775808", "-9223372036854775808"),
            (r#""\u00e9\ud83d\ude00\n\/\"""#, r#""é😀\n/\"""#),
            ("[[1,[2,[]]],{\"x\":[{}]}]", r#"[[1, [2, []]], {"x": [{}]}]"#),
            ("false", "false"),
        ];
        for (text, want) in cases {
            let v = dec(vm, text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(show(vm, v), want, "decoding {text}");
        }
    }

    #[test]
    fn decode_errors() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let cases = [
            ("", "1 column 1: unexpected end of input"),
            ("[1,]", "1 column 4: unexpected character ']'"),
            ("[1 2]", "1 column 4: expected ',' or ']'"),
            ("{\"a\" 1}", "1 column 6: expected ':'"),
            ("{a: 1}", "1 column 2: expected a string key"),
            ("{\n  \"a\": tru\n}", "2 column 8: unexpected character 't'"),
            ("[1] x", "1 column 5: unexpected trailing characters"),
            ("01", "1 column 2: unexpected trailing characters"),
            ("-", "1 column 2: unexpected end of input (expected a digit)"),
            ("1.", "1 column 3: unexpected end of input (expected a digit after '.')"),
            ("\"abc", "1 column 5: unexpected end of input (unterminated string)"),
            ("\"a\tb\"", "1 column 3: control character in string"),
            ("\"\\x\"", "1 column 3: invalid escape"),
            ("\"\\ud800\"", "1 column 4: unpaired surrogate in \\u escape"),
            ("\"\\u12g4\"", "1 column 4: expected 4 hex digits in \\u escape"),
            ("\"é\" é", "1 column 5: unexpected trailing characters"),
            ("[", "1 column 2: unexpected end of input"),
            ("NaN", "1 column 1: unexpected character 'N'"),
        ];
        for (text, want) in cases {
            let got = err_msg(dec(vm, text));
            assert_eq!(got, format!("invalid JSON at line {want}"), "decoding {text:?}");
        }
        assert_eq!(err_msg(call(vm, "json_decode", &[Value::Int(1)])), "json_decode() expects a string, got int");
    }

    #[test]
    fn deep_input_is_an_error_not_a_crash() {
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut vm = crate::natives::vm();
                let deep = "[".repeat(100_000) + &"]".repeat(100_000);
                assert!(err_msg(dec(&mut vm, &deep)).contains("nesting deeper than"));
                let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
                let v = dec(&mut vm, &ok).unwrap();
                let back = enc(&mut vm, v).unwrap();
                assert_eq!(back, ok);
            })
            .unwrap();
        t.join().unwrap();
    }

    #[test]
    fn round_trip() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let text = r#"{"name":"csp","tags":["a","b"],"n":-3,"x":0.1,"big":1.5e+300,"ok":false,"none":null,"nested":{"k":[[],{}]}}"#;
        let v = dec(vm, text).unwrap();
        assert_eq!(enc(vm, v).unwrap(), text);
    }
}
