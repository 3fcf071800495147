//! String methods and indexing. Positions are character (Unicode scalar) indices,
//! with an O(1) path for ASCII strings.

/// Every string method (for suggestions and completion).
pub const METHODS: &[&str] = &[
    "capitalize",
    "center",
    "chars",
    "contains",
    "count",
    "encode",
    "ends_with",
    "format",
    "find",
    "index_of",
    "is_alpha",
    "is_digit",
    "is_space",
    "len",
    "lower",
    "pad_end",
    "pad_start",
    "repeat",
    "replace",
    "rfind",
    "slice",
    "split",
    "splitlines",
    "starts_with",
    "title",
    "trim",
    "trim_end",
    "trim_start",
    "upper",
];

use super::{arity, int_arg, slice_bounds, str_arg};
use crate::limits::MAX_STRING;
use crate::vm::{err, ErrorKind, Heap, Res, Value, Vm};

pub fn call(vm: &mut Vm, recv: Value, name: &str, args: &[Value]) -> Res<Value> {
    let s: crate::vm::Str = vm.heap.as_str(recv).expect("receiver is a string").s.clone();
    let chars = vm.heap.as_str(recv).map_or(0, |s| s.chars);
    let heap = &mut vm.heap;
    let arg_str = |heap: &Heap, i: usize| str_arg(heap, name, args[i]);
    match name {
        "len" => {
            arity(name, args, 0, 0)?;
            Ok(Value::Int(chars as i64))
        }
        "upper" => {
            arity(name, args, 0, 0)?;
            Ok(heap.string(s.to_uppercase()))
        }
        "lower" => {
            arity(name, args, 0, 0)?;
            Ok(heap.string(s.to_lowercase()))
        }
        "replace" => {
            arity(name, args, 2, 2)?;
            let (from, to) = (arg_str(heap, 0)?, arg_str(heap, 1)?);
            let hits = if from.is_empty() { chars + 1 } else { s.matches(&*from).count() };
            let len = s.len() as i128 + hits as i128 * (to.len() as i128 - from.len() as i128);
            if len > MAX_STRING as i128 {
                return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
            }
            heap.reserve(len as usize)?;
            Ok(heap.string(s.replace(&*from, &to)))
        }
        "starts_with" => {
            arity(name, args, 1, 1)?;
            Ok(Value::Bool(s.starts_with(&*arg_str(heap, 0)?)))
        }
        "ends_with" => {
            arity(name, args, 1, 1)?;
            Ok(Value::Bool(s.ends_with(&*arg_str(heap, 0)?)))
        }
        "contains" => {
            arity(name, args, 1, 1)?;
            Ok(Value::Bool(s.contains(&*arg_str(heap, 0)?)))
        }
        "index_of" => {
            arity(name, args, 1, 1)?;
            let i = match s.find(&*arg_str(heap, 0)?) {
                Some(b) if chars == s.len() => b as i64,
                Some(b) => s[..b].chars().count() as i64,
                None => -1,
            };
            Ok(Value::Int(i))
        }
        "slice" => {
            let (a, b) = slice_bounds(heap, name, args, chars)?;
            let (a, b) = (byte_offset(heap, &s, chars, a), byte_offset(heap, &s, chars, b));
            Ok(heap.str(&s[a..b]))
        }
        "chars" => {
            arity(name, args, 0, 0)?;
            heap.reserve(super::string_ext::chars_bytes(s.chars()))?;
            let items = s.chars().map(|c| heap.char_str(c)).collect();
            Ok(heap.list(items))
        }
        "encode" => {
            arity(name, args, 0, 1)?;
            if !args.is_empty() {
                let e = arg_str(heap, 0)?;
                if !matches!(&*e, "utf-8" | "utf8") {
                    return err(ErrorKind::Value, format!("unknown encoding {e:?} (encode() takes \"utf-8\")"));
                }
            }
            Ok(heap.bytes(s.as_bytes()))
        }
        "repeat" => {
            arity(name, args, 1, 1)?;
            // `n <= 0` gives "", as `s * n` does (and Python's `s * n`).
            let n = int_arg(heap, name, args[0])?.max(0);
            let len = s.len() as i128 * n as i128;
            if len > MAX_STRING as i128 {
                return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
            }
            heap.reserve(len as usize)?;
            Ok(heap.string(s.repeat(n as usize)))
        }
        "format" => super::format_fn::method(heap, &s, args),
        _ => super::string_ext::call(vm, recv, name, args),
    }
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
