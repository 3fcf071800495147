//! The natives under `csv.reader` and `csv.writer` (std/csv.csp reads and
//! writes the stream): records parsed from a buffer of the chunks read so far,
//! and one record's text at a time, so a file of any length is never whole
//! in memory.

use super::csv::{delimiter, header_option, key_text, parse_chunk, row_fields, write_record};
use super::Opts;
use crate::natives::args::arity;
use crate::vm::map::Layout;
use crate::vm::value::Map;
use crate::vm::{err, ErrorKind, Key, NativeFn, Obj, Res, Value, Vm};
use std::rc::Rc;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("csv.reader", NativeFn::Value(reader_opts));
    vm.define_hidden("csv.records", NativeFn::Value(records));
    vm.define_hidden("csv.writer", NativeFn::Value(writer_opts));
    vm.define_hidden("csv.line", NativeFn::Value(line));
}

/// `csv.reader(opts)`: checks the options; `[delimiter, header]`.
fn reader_opts(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "csv.reader";
    arity(NAME, args, 1, 1)?;
    let o = Opts::new(vm, NAME, args.first(), &["header", "delimiter"])?;
    let header = Value::Bool(o.bool(vm, "header", false)?);
    let delim = delimiter(vm, NAME, &o)?;
    let d = vm.heap.str(&(delim as char).to_string());
    Ok(vm.heap.list(vec![d, header]))
}

/// `csv.records(buf, end, line, delimiter, header)`: the records at the front
/// of `buf` (bytes: the input not yet parsed), whose first line is `line`;
/// `end` when no more input follows. `header` is nil (rows are lists), true
/// (the first record names the columns) or the names (rows are maps).
/// `[records, bytes used, next line, header, error]`: the error (a value,
/// for std/csv to throw once it gave the records before it) or nil.
fn records(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "csv.reader";
    arity("csv.records", args, 5, 5)?;
    let Some(buf) = vm.heap.as_bytes(args[0]) else {
        let t = vm.heap.type_name(args[0]);
        return err(ErrorKind::Type, format!("{NAME}() reads bytes or strings from the stream, not {t}"));
    };
    let (Value::Bool(end), Value::Int(first_line)) = (args[1], args[2]) else { unreachable!("std/csv passes them") };
    let delim = vm.heap.as_str(args[3]).map_or(b',', |s| s.s.as_bytes()[0]);
    // The buffer is a bounded chunk of the stream: no room to watch.
    let chunk = parse_chunk(buf, delim, end, first_line as usize, usize::MAX);
    let mut header = args[4];
    let mut layout: Option<Rc<Layout>> = None;
    if let Some(names) = vm.heap.as_list(header) {
        let keys: Vec<Key> = names.iter().map(|n| Key::Str(vm.heap.as_str(*n).expect("names").s.clone())).collect();
        layout = Some(Layout::of(keys));
    }
    let mut out = Vec::with_capacity(chunk.records.len());
    let mut error = chunk.error;
    for (line, fields) in chunk.records {
        if matches!(header, Value::Bool(true)) {
            let mut keys: Vec<Key> = Vec::with_capacity(fields.len());
            for f in fields {
                let k = Key::Str(vm.intern(&f));
                if keys.contains(&k) {
                    error = Some(format!("the header names {f:?} twice"));
                    break;
                }
                keys.push(k);
            }
            let names: Vec<Value> = keys.iter().map(|k| vm.heap.str(&key_text(k))).collect();
            header = vm.heap.list(names);
            layout = Some(Layout::of(keys));
            if error.is_some() {
                break;
            }
            continue;
        }
        let values: Vec<Value> = fields.into_iter().map(|f| vm.heap.string(f)).collect();
        match &layout {
            None => out.push(vm.heap.list(values)),
            Some(l) if l.len() != values.len() => {
                let (n, k) = (values.len(), l.len());
                error = Some(format!("line {line} has {n} fields, the header has {k}"));
                break;
            }
            Some(l) => out.push(Value::Obj(vm.heap.alloc(Obj::Map(Map::from_layout(l, &values))))),
        }
    }
    let list = vm.heap.list(out);
    let error = match error {
        Some(why) => crate::vm::error::bare_error(vm, ErrorKind::Value, &format!("{NAME}(): {why}")),
        None => Value::Nil,
    };
    let items = vec![list, Value::Int(chunk.used as i64), Value::Int(chunk.line as i64), header, error];
    Ok(vm.heap.list(items))
}

/// `csv.writer(opts)`: checks the options; `[delimiter, line end, header]`
/// (header nil or a list of names).
fn writer_opts(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "csv.writer";
    arity(NAME, args, 1, 1)?;
    let o = Opts::new(vm, NAME, args.first(), &["delimiter", "crlf", "header"])?;
    let delim = delimiter(vm, NAME, &o)?;
    let eol = if o.bool(vm, "crlf", false)? { "\r\n" } else { "\n" };
    let header = match header_option(vm, NAME, &o)? {
        None => Value::Nil,
        Some(keys) => {
            let names = keys.iter().map(|k| vm.heap.str(&key_text(k))).collect();
            vm.heap.list(names)
        }
    };
    let d = vm.heap.str(&(delim as char).to_string());
    let e = vm.heap.str(eol);
    Ok(vm.heap.list(vec![d, e, header]))
}

/// `csv.line(row, delimiter, eol, columns)`: the text of one record; a map
/// row's values in the order of `columns` (a list of names).
fn line(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "csv.writer";
    arity("csv.line", args, 4, 4)?;
    let text = |v: Value| vm.heap.as_str(v).map(|s| s.s.to_string()).unwrap_or_default();
    let (delim, eol) = (text(args[1]).chars().next().unwrap_or(','), text(args[2]));
    let mut columns = vm
        .heap
        .as_list(args[3])
        .map(|names| names.iter().map(|n| Key::Str(vm.heap.as_str(*n).expect("names").s.clone())).collect::<Vec<_>>());
    let fields = row_fields(&vm.heap, NAME, "row", args[0], &mut columns)?;
    let mut out = String::new();
    write_record(&mut out, &fields, delim, &eol);
    Ok(vm.heap.string(out))
}
