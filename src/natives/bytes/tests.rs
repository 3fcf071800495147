use super::super::testutil::{call, call_s, err_kind, err_msg, method, method_s, show};
use super::*;
use crate::vm::seq_ops::{bytes_add as add, bytes_contain as contains, bytes_index as index};
use crate::vm::Fault;
use Value::Int as I;

fn b(vm: &mut Vm, data: &[u8]) -> Value {
    vm.heap.bytes(data)
}

#[test]
fn heap_helpers() {
    let mut vm = crate::natives::vm();
    let v = vm.heap.bytes(vec![1u8, 2, 255]);
    assert_eq!(vm.heap.as_bytes(v), Some(&[1u8, 2, 255][..]));
    assert_eq!(vm.heap.as_data(v), Some(&[1u8, 2, 255][..]));
    assert_eq!(vm.heap.type_name(v), "bytes");
    let s = vm.heap.str("hé");
    assert_eq!(vm.heap.as_bytes(s), None);
    assert_eq!(vm.heap.as_data(s), Some("hé".as_bytes()));
    assert_eq!(vm.heap.as_data(I(1)), None);
    assert_eq!(data_arg(&vm.heap, "write", s).unwrap(), "hé".as_bytes());
    assert_eq!(
        err_msg(data_arg(&vm.heap, "write", I(1)).map(|_| Value::Nil)),
        "write() needs a string or bytes, not int"
    );
    // A bytes value's data counts towards the collector's pacing.
    let before = vm.heap.allocated;
    vm.heap.bytes(vec![0u8; 1000]);
    assert!(vm.heap.allocated >= before + 1000);
}

#[test]
fn utf8_errors_name_the_offset() {
    assert_eq!(utf8(b"h\xc3\xa9").unwrap(), "hé");
    let e = |d: &[u8]| err_msg(utf8(d).map(|_| Value::Nil));
    assert_eq!(e(b"ab\xff"), "invalid UTF-8 at byte offset 2 (0xff)");
    assert_eq!(e(b"a\xc3("), "invalid UTF-8 at byte offset 1 (0xc3)");
    assert_eq!(e(b"ab\xe2\x82"), "invalid UTF-8 at byte offset 2: the data ends mid-character");
    assert_eq!(err_kind(utf8(b"\xff").map(|_| Value::Nil)), ErrorKind::Value);
}

#[test]
fn hex() {
    assert_eq!(from_hex("").unwrap(), b"");
    assert_eq!(from_hex("00fFa0").unwrap(), [0, 255, 160]);
    assert_eq!(from_hex(" de ad\nbe ef ").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
    let e = |s: &str| err_msg(from_hex(s).map(|_| Value::Nil));
    assert_eq!(e("abc"), "invalid hex: odd number of digits");
    assert_eq!(e("a b"), "invalid hex: ' ' at index 1 is not a hex digit");
    assert_eq!(e("0é"), "invalid hex: 'é' at index 1 is not a hex digit");
    let mut vm = crate::natives::vm();
    let v = b(&mut vm, &[0, 15, 16, 255]);
    assert_eq!(method_s(&mut vm, v, "hex", &[]), "\"000f10ff\"");
}

#[test]
fn constructor() {
    let mut vm = crate::natives::vm();
    let s = vm.heap.str("hé");
    assert_eq!(call_s(&mut vm, "bytes", &[s]), r#"b"h\xc3\xa9""#);
    assert_eq!(call_s(&mut vm, "bytes", &[I(2)]), r#"b"\x00\x00""#);
    let l = vm.heap.list(vec![I(0), I(65), I(255)]);
    assert_eq!(call_s(&mut vm, "bytes", &[l]), r#"b"\x00A\xff""#);
    let v = b(&mut vm, b"x");
    let same = call(&mut vm, "bytes", &[v]).unwrap();
    assert!(crate::vm::arith::identical(&vm.heap, same, v));
    let (hex, h) = (vm.heap.str("ff00"), vm.heap.str("hex"));
    assert_eq!(call_s(&mut vm, "bytes", &[hex, h]), r#"b"\xff\x00""#);
    let utf = vm.heap.str("utf-8");
    assert_eq!(call_s(&mut vm, "bytes", &[s, utf]), r#"b"h\xc3\xa9""#);
    let e = |vm: &mut Vm, args: &[Value]| {
        let r = call(vm, "bytes", args);
        let kind = match &r {
            Err(Fault::Error(e)) => e.0,
            _ => panic!("expected an error"),
        };
        (kind, err_msg(r))
    };
    let bad = vm.heap.list(vec![I(1), I(256)]);
    assert_eq!(e(&mut vm, &[bad]), (ErrorKind::Value, "bytes() list item 1 is 256, not a byte (0 to 255)".into()));
    let bad = vm.heap.list(vec![I(-1)]);
    assert_eq!(e(&mut vm, &[bad]).0, ErrorKind::Value);
    let bad = vm.heap.list(vec![Value::Float(1.0)]);
    assert_eq!(e(&mut vm, &[bad]), (ErrorKind::Type, "bytes() list item 0 is a float, not an int or bytes".into()));
    assert_eq!(e(&mut vm, &[I(-1)]), (ErrorKind::Value, "bytes() count must not be negative, got -1".into()));
    assert_eq!(e(&mut vm, &[I(1 << 40)]).0, ErrorKind::Limit);
    assert_eq!(e(&mut vm, &[Value::Nil]).1, "bytes() needs a string, a list of ints, an int or bytes, not nil");
    assert_eq!(e(&mut vm, &[I(1), h]).1, "bytes() with an encoding needs a string, not int");
    let latin = vm.heap.str("latin-1");
    assert_eq!(e(&mut vm, &[s, latin]).1, "unknown encoding \"latin-1\" (bytes() takes \"utf-8\" or \"hex\")");
}

#[test]
fn vm_operations() {
    let mut vm = crate::natives::vm();
    let (x, y) = (b(&mut vm, b"ab"), b(&mut vm, b"c"));
    assert_eq!(show(&vm, index(b"ab", -1).unwrap()), "98");
    assert_eq!(err_msg(index(b"ab", 2)), "bytes index 2 out of range for length 2");
    assert_eq!(err_kind(index(b"ab", -3)), ErrorKind::Index);
    let xy = add(&mut vm.heap, x, y).unwrap();
    assert_eq!(show(&vm, xy), r#"b"abc""#);
    let s = vm.heap.str("c");
    assert!(err_msg(add(&mut vm.heap, x, s)).contains("s.encode()"));
    let l = vm.heap.list(vec![]);
    assert_eq!(err_msg(add(&mut vm.heap, x, l)), "cannot apply '+' to bytes and list");
    assert!(contains(&vm.heap, I(97), b"ab").unwrap());
    assert!(!contains(&vm.heap, I(97 + 256), b"ab").unwrap());
    assert!(contains(&vm.heap, y, b"abc").unwrap());
    assert!(!contains(&vm.heap, y, b"ab").unwrap());
    assert_eq!(err_kind(contains(&vm.heap, s, b"c").map(|_| Value::Nil)), ErrorKind::Type);
    assert!(check_len(crate::limits::MAX_STRING).is_ok());
    assert_eq!(err_kind(check_len(crate::limits::MAX_STRING + 1).map(|_| Value::Nil)), ErrorKind::Limit);
    use crate::vm::arith::{compare, equal, to_key};
    let x2 = b(&mut vm, b"ab");
    assert!(equal(&vm.heap, x, x2) && !equal(&vm.heap, x, y));
    let ab = vm.heap.str("ab");
    assert!(!equal(&vm.heap, x, ab));
    assert_eq!(compare(&vm.heap, x, y).unwrap(), std::cmp::Ordering::Less);
    assert!(compare(&vm.heap, x, ab).is_err());
    assert_eq!(to_key(&vm.heap, x).unwrap(), to_key(&vm.heap, x2).unwrap());
    assert_ne!(to_key(&vm.heap, x).unwrap(), to_key(&vm.heap, ab).unwrap());
}

#[test]
fn methods() {
    let mut vm = crate::natives::vm();
    let vm = &mut vm;
    let m = |vm: &mut Vm, data: &[u8], name: &str, args: &[Value]| {
        let recv = vm.heap.bytes(data);
        method_s(vm, recv, name, args)
    };
    assert_eq!(m(vm, b"abc", "len", &[]), "3");
    assert_eq!(m(vm, b"h\xc3\xa9", "decode", &[]), "\"hé\"");
    let lossy = vm.heap.str("lossy");
    assert_eq!(m(vm, b"a\xffb", "decode", &[lossy]), "\"a\u{fffd}b\"");
    assert_eq!(m(vm, b"hello", "slice", &[I(1), I(-1)]), r#"b"ell""#);
    assert_eq!(m(vm, b"hello", "slice", &[I(-2)]), r#"b"lo""#);
    assert_eq!(m(vm, b"hello", "slice", &[I(4), I(1)]), r#"b"""#);
    assert_eq!(m(vm, b"\x01\xff", "list", &[]), "[1, 255]");
    let l = b(vm, b"l");
    assert_eq!(m(vm, b"hello", "index_of", &[l]), "2");
    assert_eq!(m(vm, b"hello", "find", &[I(111)]), "4");
    assert_eq!(m(vm, b"hello", "find", &[I(1000)]), "-1");
    let (he, lo, z) = (b(vm, b"he"), b(vm, b"lo"), b(vm, b"z"));
    assert_eq!(m(vm, b"hello", "find", &[z]), "-1");
    assert_eq!(m(vm, b"hello", "contains", &[lo]), "true");
    assert_eq!(m(vm, b"hello", "starts_with", &[he]), "true");
    assert_eq!(m(vm, b"hello", "ends_with", &[he]), "false");
    let sep = b(vm, b"--");
    assert_eq!(m(vm, b"a--b----c", "split", &[sep]), r#"[b"a", b"b", b"", b"c"]"#);
    assert_eq!(m(vm, b"--", "split", &[sep]), r#"[b"", b""]"#);
    assert_eq!(m(vm, b" a\t b\n", "split", &[]), r#"[b"a", b"b"]"#);
    let recv = b(vm, b"abc");
    let (s, empty) = (vm.heap.str("a"), b(vm, b""));
    assert_eq!(
        err_msg(method(vm, recv, "starts_with", &[s])),
        "starts_with() expects bytes, got string (make bytes of a string with s.encode())"
    );
    assert_eq!(err_msg(method(vm, recv, "split", &[empty])), "split() separator must not be empty");
    assert_eq!(err_msg(method(vm, recv, "len", &[I(1)])), "len() takes 0 arguments (1 given)");
    assert_eq!(
        err_msg(method(vm, recv, "decode", &[s])),
        "unknown encoding \"a\" (decode() takes \"utf-8\" or \"lossy\")"
    );
    assert_eq!(err_msg(method(vm, recv, "fnd", &[])), "bytes has no method 'fnd'; did you mean 'find'?");
    let text = vm.heap.str("hé");
    assert_eq!(method_s(vm, text, "encode", &[]), r#"b"h\xc3\xa9""#);
    assert_eq!(err_kind(method(vm, text, "encode", &[s])), ErrorKind::Value);
}

#[test]
fn printed_form() {
    let mut out = String::new();
    crate::display::quote_bytes(b"a \"q\" \\ \n\r\t\x00\x7f\x80~", &mut out);
    assert_eq!(out, r#"b"a \"q\" \\ \n\r\t\x00\x7f\x80~""#);
}
