//! String methods and indexing. Positions are character (Unicode scalar) indices,
//! with an O(1) path for ASCII strings.

use super::args::{arity, int_arg, slice_bounds, str_arg};
use super::string_ext as ext;
use super::value_method as v;
use crate::limits::MAX_STRING;
use crate::vm::host::Class;
use crate::vm::{err, ErrorKind, Handle, Heap, Res, Value, Vm};

/// Strings' methods (`Vm::kinds`); more of them are in `string_ext.rs`.
pub static CLASS: Class = Class {
    name: "string",
    methods: &[
        ("capitalize", v!(ext::capitalize)),
        ("center", v!(ext::pad)),
        ("chars", v!(chars)),
        ("contains", v!(contains)),
        ("count", v!(ext::count)),
        ("encode", v!(encode)),
        ("ends_with", v!(ends_with)),
        ("format", v!(format)),
        ("find", v!(ext::find)),
        ("index_of", v!(index_of)),
        ("is_alpha", v!(ext::is_class)),
        ("is_digit", v!(ext::is_class)),
        ("is_space", v!(ext::is_class)),
        ("len", v!(len)),
        ("lower", v!(lower)),
        ("pad_end", v!(ext::pad)),
        ("pad_start", v!(ext::pad)),
        ("repeat", v!(repeat)),
        ("replace", v!(replace)),
        ("rfind", v!(ext::find)),
        ("slice", v!(slice)),
        ("split", v!(ext::split)),
        ("splitlines", v!(ext::splitlines)),
        ("starts_with", v!(starts_with)),
        ("title", v!(ext::title)),
        ("trim", v!(ext::trim)),
        ("trim_end", v!(ext::trim)),
        ("trim_start", v!(ext::trim)),
        ("upper", v!(upper)),
    ],
    next: None,
    field: None,
};

/// The receiver's text (shared, so the heap can be mutated while it is held)
/// and its length in characters.
pub(super) fn text(heap: &Heap, h: Handle) -> (crate::vm::Str, usize) {
    let so = heap.as_str(Value::Obj(h)).expect("receiver is a string");
    (so.s.clone(), so.chars())
}

fn len(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    Ok(Value::Int(text(&vm.heap, h).1 as i64))
}

fn upper(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    Ok(vm.heap.string(s.to_uppercase()))
}

fn lower(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    Ok(vm.heap.string(s.to_lowercase()))
}

fn replace(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    let (s, chars) = text(&vm.heap, h);
    let heap = &mut vm.heap;
    arity(name, args, 2, 2)?;
    let (from, to) = (str_arg(heap, name, args[0])?, str_arg(heap, name, args[1])?);
    let hits = if from.is_empty() { chars + 1 } else { s.matches(&*from).count() };
    let len = s.len() as i128 + hits as i128 * (to.len() as i128 - from.len() as i128);
    if len > MAX_STRING as i128 {
        return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
    }
    heap.reserve(len as usize)?;
    Ok(heap.string(s.replace(&*from, &to)))
}

fn starts_with(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let s = text(&vm.heap, h).0;
    Ok(Value::Bool(s.starts_with(&*str_arg(&vm.heap, name, args[0])?)))
}

fn ends_with(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let s = text(&vm.heap, h).0;
    Ok(Value::Bool(s.ends_with(&*str_arg(&vm.heap, name, args[0])?)))
}

fn contains(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let s = text(&vm.heap, h).0;
    Ok(Value::Bool(s.contains(&*str_arg(&vm.heap, name, args[0])?)))
}

fn index_of(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let (s, chars) = text(&vm.heap, h);
    let i = match s.find(&*str_arg(&vm.heap, name, args[0])?) {
        Some(b) if chars == s.len() => b as i64,
        Some(b) => s[..b].chars().count() as i64,
        None => -1,
    };
    Ok(Value::Int(i))
}

fn slice(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    let (s, chars) = text(&vm.heap, h);
    let heap = &mut vm.heap;
    let (a, b) = slice_bounds(heap, name, args, chars)?;
    let (a, b) = (byte_offset(heap, &s, chars, a), byte_offset(heap, &s, chars, b));
    Ok(heap.str(&s[a..b]))
}

fn chars(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    let heap = &mut vm.heap;
    heap.reserve(super::string_ext::chars_bytes(s.chars()))?;
    let items = s.chars().map(|c| heap.char_str(c)).collect();
    Ok(heap.list(items))
}

fn encode(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 1)?;
    let s = text(&vm.heap, h).0;
    if !args.is_empty() {
        let e = str_arg(&vm.heap, name, args[0])?;
        if !matches!(&*e, "utf-8" | "utf8") {
            return err(ErrorKind::Value, format!("unknown encoding {e:?} (encode() takes \"utf-8\")"));
        }
    }
    Ok(vm.heap.bytes(s.as_bytes()))
}

fn repeat(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let s = text(&vm.heap, h).0;
    let heap = &mut vm.heap;
    // `n <= 0` gives "", as `s * n` does (and Python's `s * n`).
    let n = int_arg(heap, name, args[0])?.max(0);
    let len = s.len() as i128 * n as i128;
    if len > MAX_STRING as i128 {
        return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
    }
    heap.reserve(len as usize)?;
    Ok(heap.string(s.repeat(n as usize)))
}

fn format(vm: &mut Vm, h: Handle, _: &str, args: &[Value]) -> Res<Value> {
    let s = text(&vm.heap, h).0;
    super::format_fn::method(&mut vm.heap, &s, args)
}

/// The byte offset of char index `i` (`i <= chars`): through the buffer's
/// character index when the text is not ASCII (counted on the heap).
fn byte_offset(heap: &mut Heap, s: &crate::vm::Str, chars: usize, i: usize) -> usize {
    if chars == s.len() {
        return i;
    }
    let (b, grew) = s.char_offset(i);
    heap.note_growth(grew);
    b
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::vm::object::Obj;
    use crate::vm::seq_ops::str_index;

    fn m(vm: &mut Vm, s: &str, name: &str, args: &[Value]) -> String {
        let recv = vm.heap.str(s);
        let r = method(vm, recv, name, args).unwrap();
        show(vm, r)
    }

    fn st(vm: &mut Vm, s: &str) -> Value {
        vm.heap.str(s)
    }

    #[test]
    fn methods() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        use Value::Int as I;
        assert_eq!(m(vm, "héllo", "len", &[]), "5");
        assert_eq!(m(vm, "Héllo", "upper", &[]), "\"HÉLLO\"");
        assert_eq!(m(vm, "Héllo", "lower", &[]), "\"héllo\"");
        assert_eq!(m(vm, "  a b \n", "trim", &[]), "\"a b\"");
        let comma = st(vm, ",");
        assert_eq!(m(vm, "a,b,,c", "split", &[comma]), r#"["a", "b", "", "c"]"#);
        let empty = st(vm, "");
        assert_eq!(m(vm, "aé", "split", &[empty]), r#"["a", "é"]"#);
        assert_eq!(m(vm, "  a  b\tc ", "split", &[]), r#"["a", "b", "c"]"#);
        let (a, xy) = (st(vm, "a"), st(vm, "xy"));
        assert_eq!(m(vm, "banana", "replace", &[a, xy]), "\"bxynxynxy\"");
        assert_eq!(m(vm, "ab", "replace", &[empty, comma]), "\",a,b,\"");
        let (ba, na, z) = (st(vm, "ba"), st(vm, "na"), st(vm, "z"));
        assert_eq!(m(vm, "banana", "starts_with", &[ba]), "true");
        assert_eq!(m(vm, "banana", "ends_with", &[na]), "true");
        assert_eq!(m(vm, "banana", "contains", &[z]), "false");
        assert_eq!(m(vm, "banana", "index_of", &[na]), "2");
        assert_eq!(m(vm, "éébanana", "index_of", &[na]), "4");
        assert_eq!(m(vm, "banana", "index_of", &[z]), "-1");
        assert_eq!(m(vm, "héllo", "slice", &[I(1), I(3)]), "\"él\"");
        assert_eq!(m(vm, "héllo", "slice", &[I(-3)]), "\"llo\"");
        assert_eq!(m(vm, "hello", "slice", &[I(-100), I(100)]), "\"hello\"");
        assert_eq!(m(vm, "hello", "slice", &[I(3), I(1)]), "\"\"");
        assert_eq!(m(vm, "hello", "slice", &[I(1), I(-1)]), "\"ell\"");
        let r = Value::Obj(vm.heap.alloc(Obj::Range(1, 3)));
        assert_eq!(m(vm, "héllo", "slice", &[r]), "\"él\"");
        assert_eq!(m(vm, "hé", "chars", &[]), r#"["h", "é"]"#);
        assert_eq!(m(vm, "ab", "repeat", &[I(3)]), "\"ababab\"");
        assert_eq!(m(vm, "ab", "repeat", &[I(0)]), "\"\"");
        let s = st(vm, "ab");
        assert!(err_msg(method(vm, s, "repeat", &[I(1 << 40)])).contains("too long"));
        assert_eq!(m(vm, "ab", "repeat", &[I(-2)]), "\"\"");
        assert_eq!(err_msg(method(vm, s, "split", &[I(1)])), "split() expects a string, got int");
        assert_eq!(err_msg(method(vm, s, "upper", &[I(1)])), "upper() takes 0 arguments (1 given)");
    }

    #[test]
    fn indexing() {
        let mut vm = crate::natives::vm();
        for (text, i, want) in [("abc", 0, "a"), ("abc", -1, "c"), ("héllo", 1, "é"), ("héllo", -4, "é")] {
            let s = vm.heap.str(text);
            let r = str_index(&mut vm.heap, s, i).unwrap();
            assert_eq!(crate::display::display(&vm.heap, r), want);
        }
        let s = vm.heap.str("abc");
        assert_eq!(err_msg(str_index(&mut vm.heap, s, 5)), "string index 5 out of range for length 3");
        assert_eq!(err_msg(str_index(&mut vm.heap, s, -4)), "string index -4 out of range for length 3");
    }
}
