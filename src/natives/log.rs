//! The line of `std/log` (docs/log.md): a record (time, level, message,
//! key-value fields) formatted as one line of text or JSON, in Rust because
//! it runs for every line a program logs. std/log.csp decides the level and
//! writes the line with one write.

use super::args::arity;
use crate::display::display;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Heap, Key, Res, Value, Vm};
use std::fmt::Write;

pub fn register(vm: &mut Vm) {
    vm.define_native("__log_line", line);
}

/// `__log_line(json, time, level, msg, base, fields)`: the line without its
/// newline. `time` is "local", "utc" or false (no time); `base` and
/// `fields` are maps or nil (a key in `fields` replaces the same in `base`).
fn line(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("__log_line", args, 6, 6)?;
    let heap = &vm.heap;
    let json = args[0].truthy();
    let time = match heap.as_str(args[1]) {
        Some(s) if &*s.s == "utc" => Some(now(true)),
        Some(_) => Some(now(false)),
        None => None,
    };
    let level = display(heap, args[2]);
    let msg = text(heap, args[3]);
    let fields = merged(heap, args[4], args[5])?;
    let mut out = String::with_capacity(96);
    if json {
        out.push('{');
        if let Some(t) = &time {
            write!(out, "\"time\":\"{t}\",").unwrap();
        }
        write!(out, "\"level\":\"{level}\",\"msg\":").unwrap();
        super::json::quote(&msg, &mut out);
        for (k, v) in fields {
            out.push(',');
            super::json::quote(&k, &mut out);
            out.push(':');
            json_value(heap, v, &mut out);
        }
        out.push('}');
    } else {
        if let Some(t) = &time {
            out.push_str(t);
            out.push(' ');
        }
        write!(out, "{level:<5} ").unwrap();
        one_line(&msg, &mut out);
        for (k, v) in fields {
            out.push(' ');
            logfmt(&k, &mut out);
            out.push('=');
            logfmt(&text(heap, v), &mut out);
        }
    }
    if out.len() > crate::limits::MAX_STRING {
        return err(ErrorKind::Limit, "log line too long");
    }
    Ok(vm.heap.string(out))
}

/// RFC 3339 with milliseconds: local time with its offset, or UTC with `Z`.
fn now(utc: bool) -> String {
    let ts = jiff::Timestamp::now();
    if utc {
        return format!("{ts:.3}");
    }
    let z = ts.to_zoned_datetime(jiff::tz::TimeZone::system());
    z.strftime("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string()
}

/// How a value reads in a line: a string as itself, an error as its
/// message, anything else as `str` writes it.
fn text(heap: &Heap, v: Value) -> String {
    if let Value::Obj(h) = v {
        match heap.get(h) {
            Obj::Str(s) => return s.s.to_string(),
            Obj::Error(e) => return e.message.to_string(),
            _ => {}
        }
    }
    display(heap, v)
}

/// The fields of `base` then of `fields`, keys as text; a key given in both
/// keeps its place in `base` and takes the value from `fields`.
fn merged(heap: &Heap, base: Value, fields: Value) -> Res<Vec<(String, Value)>> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for m in [base, fields] {
        let map = match m {
            Value::Nil => continue,
            Value::Obj(h) => match heap.get(h) {
                Obj::Map(map) => map,
                _ => return err(ErrorKind::Type, format!("log fields need a map, not {}", heap.type_name(m))),
            },
            _ => return err(ErrorKind::Type, format!("log fields need a map, not {}", heap.type_name(m))),
        };
        for (k, v) in map.iter() {
            let k = match k {
                Key::Str(s) => s.to_string(),
                Key::Int(i) => i.to_string(),
                Key::Bool(b) => b.to_string(),
                Key::Nil => "nil".to_string(),
                Key::Bytes(_) => return err(ErrorKind::Type, "log field names are strings"),
            };
            match out.iter_mut().find(|(old, _)| *old == k) {
                Some(slot) => slot.1 = *v,
                None => out.push((k, *v)),
            }
        }
    }
    Ok(out)
}

/// The message of a text line: control characters escaped, so a record is
/// always one line.
fn one_line(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => write!(out, "\\u{{{:x}}}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
}

/// A key or value of a text line: bare, or quoted with escapes when empty or
/// holding a space, `=`, `"` or a control character (logfmt, as Go's slog).
fn logfmt(s: &str, out: &mut String) {
    let plain =
        !s.is_empty() && !s.chars().any(|c| c == ' ' || c == '=' || c == '"' || c.is_control() || c.is_whitespace());
    if plain {
        out.push_str(s);
    } else {
        super::json::quote(s, out);
    }
}

/// A field's value in a JSON line: as `json_encode` writes it; an error as
/// its message; what JSON cannot hold (a function, a channel, NaN) as the
/// text `str` gives.
fn json_value(heap: &Heap, v: Value, out: &mut String) {
    if let Value::Obj(h) = v {
        if let Obj::Error(e) = heap.get(h) {
            return super::json::quote(&e.message, out);
        }
    }
    match super::json::encode(heap, v) {
        Ok(s) => out.push_str(&s),
        Err(_) => super::json::quote(&display(heap, v), out),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn logfmt_quotes_only_when_needed() {
        let f = |s: &str| {
            let mut out = String::new();
            super::logfmt(s, &mut out);
            out
        };
        assert_eq!(f("plain"), "plain");
        assert_eq!(f("a b"), "\"a b\"");
        assert_eq!(f(""), "\"\"");
        assert_eq!(f("k=v"), "\"k=v\"");
        assert_eq!(f("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(f("two\nlines"), "\"two\\nlines\"");
        assert_eq!(f("ü/€"), "ü/€");
    }

    #[test]
    fn times_are_rfc3339_with_milliseconds() {
        let utc = super::now(true);
        assert!(utc.ends_with('Z') && utc.len() == "2026-01-02T03:04:05.678Z".len(), "{utc}");
        let local = super::now(false);
        assert_eq!(local.len(), "2026-01-02T03:04:05.678+01:00".len(), "{local}");
    }
}
