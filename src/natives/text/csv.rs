//! `std/csv`: RFC 4180 comma-separated values, in Rust because a parser walks
//! every character. Quoted fields may hold delimiters, `""` (a quote) and line
//! breaks; records end at `\n`, `\r\n` or `\r`; blank lines are skipped.

use super::Opts;
use crate::limits::{MAX_LIST, MAX_STRING};
use crate::natives::args::arity;
use crate::vm::object::Obj;
use crate::vm::value::Map;
use crate::vm::{err, ErrorKind, Key, NativeFn, Res, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("csv.parse", NativeFn::Value(parse_fn));
    vm.define_hidden("csv.format", NativeFn::Value(format_fn));
}

/// The `delimiter` option: one ASCII character other than a quote or line break.
pub(super) fn delimiter(vm: &Vm, name: &str, o: &Opts) -> Res<u8> {
    let Some(d) = o.str(vm, "delimiter")? else { return Ok(b',') };
    match d.as_bytes() {
        [c] if !matches!(c, b'"' | b'\r' | b'\n') && c.is_ascii() => Ok(*c),
        _ => err(
            ErrorKind::Value,
            format!("{name}() delimiter must be one ASCII character (not a quote or line break), not {d:?}"),
        ),
    }
}

/// `csv.parse(text, {header, delimiter})`: a list of rows (lists of strings),
/// or with `header: true` a list of maps keyed by the first row's fields.
fn parse_fn(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("csv.parse", args, 1, 2)?;
    let o = Opts::new(vm, "csv.parse", args.get(1), &["header", "delimiter"])?;
    let (header, delim) = (o.bool(vm, "header", false)?, delimiter(vm, "csv.parse", &o)?);
    let Some(text) = vm.heap.as_str(args[0]) else {
        return err(ErrorKind::Type, format!("csv.parse() needs a string, not {}", vm.heap.type_name(args[0])));
    };
    let text = text.s.clone();
    // Parsing stops once the rows would not fit in the memory left, and the
    // heap is asked for them before they are built (3M rows took 3.7 GB at a
    // 1 GB limit before any check, issue 37).
    let c = parse_chunk(text.as_bytes(), delim, true, 1, vm.heap.headroom());
    if c.over {
        return err(ErrorKind::Memory, format!("csv.parse(): {}", vm.heap.over_message(c.cost)));
    }
    if let Some(why) = c.error {
        return err(ErrorKind::Value, format!("csv.parse(): {why}"));
    }
    vm.heap.reserve(c.cost)?;
    let rows = c.records;
    if !header || rows.is_empty() {
        let out = rows.into_iter().map(|(_, r)| row_list(vm, r)).collect();
        return Ok(vm.heap.list(out));
    }
    let mut rows = rows.into_iter();
    let (_, names) = rows.next().expect("not empty");
    let mut keys: Vec<crate::vm::Str> = Vec::with_capacity(names.len());
    for n in names {
        if keys.iter().any(|k| **k == *n) {
            return err(ErrorKind::Value, format!("csv.parse(): the header names {n:?} twice"));
        }
        keys.push(vm.intern(&n));
    }
    let mut out = Vec::new();
    for (line, r) in rows {
        if r.len() != keys.len() {
            let (n, k) = (r.len(), keys.len());
            return err(ErrorKind::Value, format!("csv.parse(): line {line} has {n} fields, the header has {k}"));
        }
        let mut m = Map::default();
        for (k, f) in keys.iter().zip(r) {
            m.insert(Key::Str(k.clone()), vm.heap.string(f));
        }
        out.push(Value::Obj(vm.heap.alloc(Obj::Map(m))));
    }
    Ok(vm.heap.list(out))
}

fn row_list(vm: &mut Vm, r: Vec<String>) -> Value {
    let items = r.into_iter().map(|f| vm.heap.string(f)).collect();
    vm.heap.list(items)
}

/// What a field and a row of a parse's result cost on the heap at least: a
/// string object and a list item; a list object.
const FIELD_COST: usize = 32 + 16;
const ROW_COST: usize = 32;

/// What `parse_chunk` read from the front of a buffer.
pub struct Chunk {
    /// The records, each with the line it starts on.
    pub records: Vec<(usize, Vec<String>)>,
    /// The bytes they took (with the blank lines between them); the rest
    /// begins a record whose end is not in the buffer yet.
    pub used: usize,
    /// The line the rest begins on.
    pub line: usize,
    /// What is wrong with the record that begins the rest, if anything: the
    /// records before it are good.
    pub error: Option<String>,
    /// What the records cost on the heap as strings and lists, about.
    pub cost: usize,
    /// Parsing stopped when `cost` passed the room it was given.
    pub over: bool,
}

/// The records at the front of `b`, whose first line is `line`. Unless `end`
/// (the buffer holds the rest of the input), a record counts only once its
/// line break is in `b`: a quoted field may go on in the next chunk.
pub fn parse_chunk(b: &[u8], delim: u8, end: bool, mut line: usize, room: usize) -> Chunk {
    let (mut records, mut row, mut field) = (Vec::new(), Vec::new(), Vec::new());
    let mut cost = 0usize;
    let (mut i, mut row_line, mut row_start) = (0, line, 0);
    // Where the input stops being known: the rest waits for the next chunk.
    macro_rules! more_to_come {
        () => {
            return Chunk { records, used: row_start, line: row_line, error: None, cost, over: false }
        };
    }
    macro_rules! bad {
        ($($t:tt)*) => {
            return Chunk { records, used: row_start, line: row_line, error: Some(format!($($t)*)), cost, over: false }
        };
    }
    while i < b.len() {
        if row.is_empty() && matches!(b[i], b'\n' | b'\r') {
            if !end && b[i] == b'\r' && i + 1 == b.len() {
                // A `\n` may follow in the next chunk: `\r\n` counts once.
                row_start = i;
                row_line = line;
                more_to_come!();
            }
            line += usize::from(b[i] == b'\n' || b.get(i + 1) != Some(&b'\n'));
            i += 1;
            continue;
        }
        if row.is_empty() {
            (row_line, row_start) = (line, i);
        }
        if b[i] == b'"' {
            let opened = line;
            i += 1;
            loop {
                match b.get(i) {
                    None if !end => more_to_come!(),
                    None => bad!("line {opened}: a quoted field is not closed"),
                    Some(b'"') if b.get(i + 1) == Some(&b'"') => {
                        field.push(b'"');
                        i += 2;
                    }
                    Some(b'"') if i + 1 == b.len() && !end => more_to_come!(),
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        line += usize::from(c == b'\n');
                        field.push(c);
                        i += 1;
                    }
                }
            }
            if let Some(&c) = b.get(i).filter(|&&c| c != delim && c != b'\n' && c != b'\r') {
                let c = String::from_utf8_lossy(&b[i..b.len().min(i + 4)]).chars().next().unwrap_or(c as char);
                bad!("line {line}: {c:?} after a closing quote (a quote in a field is written \"\")");
            }
        } else {
            while i < b.len() && b[i] != delim && b[i] != b'\n' && b[i] != b'\r' {
                field.push(b[i]);
                i += 1;
            }
            if i == b.len() && !end {
                more_to_come!();
            }
        }
        // Fields end at ASCII bytes, so a whole field is whole UTF-8 when
        // the input is.
        match String::from_utf8(std::mem::take(&mut field)) {
            Ok(f) => {
                cost += FIELD_COST + f.len();
                row.push(f)
            }
            Err(_) => bad!("line {line}: the text is not UTF-8"),
        }
        match b.get(i) {
            Some(&c) if c == delim => {
                i += 1;
                continue;
            }
            Some(b'\r') if i + 1 == b.len() && !end => more_to_come!(),
            Some(b'\r') if b.get(i + 1) == Some(&b'\n') => i += 2,
            Some(_) => i += 1,
            None if !end => more_to_come!(),
            None => {}
        }
        line += 1;
        if records.len() >= MAX_LIST {
            bad!("more than {MAX_LIST} rows");
        }
        records.push((row_line, std::mem::take(&mut row)));
        cost += ROW_COST;
        if cost > room {
            return Chunk { records, used: row_start, line: row_line, error: None, cost, over: true };
        }
    }
    if !row.is_empty() {
        if !end {
            more_to_come!();
        }
        // The text ended just after a delimiter: the last field is empty.
        row.push(String::new());
        records.push((row_line, row));
    }
    Chunk { records, used: b.len(), line, error: None, cost, over: false }
}

/// `csv.format(rows, {delimiter, crlf, header})`: rows of lists, or of maps
/// (their values in the order of `header`'s names, or else the first map's
/// keys); the header line is written first when there is one.
fn format_fn(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "csv.format";
    arity(NAME, args, 1, 2)?;
    let o = Opts::new(vm, NAME, args.get(1), &["delimiter", "crlf", "header"])?;
    let delim = delimiter(vm, NAME, &o)? as char;
    let eol = if o.bool(vm, "crlf", false)? { "\r\n" } else { "\n" };
    let Some(rows) = vm.heap.as_list(args[0]) else {
        return err(ErrorKind::Type, format!("{NAME}() needs a list of rows, not {}", vm.heap.type_name(args[0])));
    };
    let rows = rows.to_vec();
    let mut columns = header_option(vm, NAME, &o)?;
    let heap = &vm.heap;
    let mut out = String::new();
    // A header line: the option's names, or else the first map row's keys.
    let mut header_written = false;
    if let Some(cols) = &columns {
        write_record(&mut out, &cols.iter().map(key_text).collect::<Vec<_>>(), delim, eol);
        header_written = true;
    }
    for (n, row) in rows.iter().enumerate() {
        let fields = row_fields(heap, NAME, &format!("row {n}"), *row, &mut columns)?;
        if !header_written && matches!(row, Value::Obj(h) if matches!(heap.get(*h), Obj::Map(_))) {
            let names: Vec<String> = columns.iter().flatten().map(key_text).collect();
            write_record(&mut out, &names, delim, eol);
            header_written = true;
        }
        write_record(&mut out, &fields, delim, eol);
        if out.len() > MAX_STRING {
            return err(ErrorKind::Limit, format!("string too long ({} bytes)", out.len()));
        }
    }
    Ok(vm.heap.string(out))
}

/// The `header` option: a list of column names.
pub(super) fn header_option(vm: &Vm, name: &str, o: &Opts) -> Res<Option<Vec<Key>>> {
    let Some(h) = o.value("header") else { return Ok(None) };
    match vm.heap.as_list(h) {
        Some(names) => {
            let names = names.iter().map(|n| field_text(&vm.heap, name, *n, "header").map(|s| Key::Str(s.into())));
            Ok(Some(names.collect::<Res<_>>()?))
        }
        None => {
            err(ErrorKind::Type, format!("{name}() option header needs a list of names, not {}", vm.heap.type_name(h)))
        }
    }
}

/// The fields of one row (`what` names it in errors): a list's items, or a
/// map's values in the order of `columns` (which the first map row sets when
/// there are none yet).
pub(super) fn row_fields(
    heap: &crate::vm::Heap,
    name: &str,
    what: &str,
    row: Value,
    columns: &mut Option<Vec<Key>>,
) -> Res<Vec<String>> {
    let bad = || err(ErrorKind::Type, format!("{name}() {what} must be a list or a map, not {}", heap.type_name(row)));
    let Value::Obj(h) = row else { return bad() };
    match heap.get(h) {
        Obj::List(items) => items.iter().map(|v| field_text(heap, name, *v, what)).collect(),
        Obj::Map(m) => {
            let cols = columns.get_or_insert_with(|| m.keys().cloned().collect());
            if let Some(k) = m.keys().find(|k| !cols.contains(k)) {
                let k = key_text(k);
                return err(ErrorKind::Value, format!("{name}() {what} has key {k:?}, which is not a column"));
            }
            cols.iter().map(|k| m.get(k).map_or(Ok(String::new()), |v| field_text(heap, name, *v, what))).collect()
        }
        _ => bad(),
    }
}

/// A field's text: a string as it is, nil as empty, a number or bool as `str()` writes it.
fn field_text(heap: &crate::vm::Heap, name: &str, v: Value, what: &str) -> Res<String> {
    match v {
        Value::Nil => Ok(String::new()),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => Ok(crate::display::display(heap, v)),
        _ => match heap.as_str(v) {
            Some(s) => Ok(s.s.to_string()),
            None => err(ErrorKind::Type, format!("{name}() {what} has a {}, which is not a field", heap.type_name(v))),
        },
    }
}

pub(super) fn key_text(k: &Key) -> String {
    match k {
        Key::Str(s) => s.to_string(),
        Key::Int(i) => i.to_string(),
        Key::Bool(b) => b.to_string(),
        Key::Nil => String::new(),
        Key::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// One record: fields quoted where they hold the delimiter, a quote or a line
/// break (and a lone empty field, so the line is not blank).
pub(super) fn write_record(out: &mut String, fields: &[String], delim: char, eol: &str) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(delim);
        }
        let quote = f.contains([delim, '"', '\n', '\r']) || (f.is_empty() && fields.len() == 1);
        if quote {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push_str(eol);
}

#[cfg(test)]
mod tests {
    use super::parse_chunk;

    /// The records of `text`, each with the line it starts on.
    fn parse(text: &str, delim: u8) -> Result<Vec<(usize, Vec<String>)>, String> {
        let c = parse_chunk(text.as_bytes(), delim, true, 1, usize::MAX);
        c.error.map_or(Ok(c.records), Err)
    }

    #[test]
    fn parsing_stops_past_its_room() {
        let text = "a,b\n".repeat(1000);
        let c = parse_chunk(text.as_bytes(), b',', true, 1, 10_000);
        assert!(c.over && c.cost > 10_000 && c.records.len() < 1000);
        let c = parse_chunk(text.as_bytes(), b',', true, 1, usize::MAX);
        assert!(!c.over && c.records.len() == 1000);
    }

    /// Fed `size` bytes at a time as `csv.reader` feeds it: the records and
    /// lines of parsing the whole text, or its error.
    fn by_chunks(text: &[u8], size: usize) -> Result<Vec<(usize, Vec<String>)>, String> {
        let (mut out, mut buf, mut line) = (Vec::new(), Vec::new(), 1);
        let mut chunks = text.chunks(size).peekable();
        loop {
            let chunk = chunks.next();
            buf.extend_from_slice(chunk.unwrap_or_default());
            let end = chunk.is_none();
            let c = parse_chunk(&buf, b',', end, line, usize::MAX);
            out.extend(c.records);
            if let Some(e) = c.error {
                return Err(e);
            }
            buf.drain(..c.used);
            line = c.line;
            if end {
                return Ok(out);
            }
        }
    }

    #[test]
    fn chunks_split_anywhere() {
        let texts = [
            "a,b\r\n1,2\r\n",
            "\"x,y\",\"say \"\"hi\"\"\"\n\"two\nlines\",z",
            "a,\n,b,",
            "\n\na\r\rb\n\r\n\r\nc",
            "\"\"",
            "é,\"ü\r\nß\"\r\n日本,語",
            "a\n\"b",
            "\"a\"x",
            "",
        ];
        for t in texts {
            let whole = parse(t, b',');
            for size in 1..=t.len().max(1) {
                assert_eq!(by_chunks(t.as_bytes(), size), whole, "{t:?} in chunks of {size}");
            }
        }
        assert_eq!(by_chunks(b"a,\xff\n", 2).unwrap_err(), "line 1: the text is not UTF-8");
        let c = parse_chunk(b"a\nb\n\"c", b',', true, 1, usize::MAX);
        assert_eq!((c.records.len(), c.used, c.error.as_deref()), (2, 4, Some("line 3: a quoted field is not closed")));
    }

    fn rows(s: &str) -> Vec<Vec<String>> {
        parse(s, b',').unwrap().into_iter().map(|(_, r)| r).collect()
    }

    #[test]
    fn rfc4180() {
        assert_eq!(rows("a,b\r\n1,2\r\n"), [["a", "b"], ["1", "2"]]);
        assert_eq!(rows("\"x,y\",\"say \"\"hi\"\"\"\n"), [["x,y", "say \"hi\""]]);
        assert_eq!(rows("\"two\nlines\",z"), [["two\nlines", "z"]]);
        assert_eq!(rows("a,\n,b,"), [vec!["a", ""], vec!["", "b", ""]]);
        assert_eq!(rows("\n\na\r\rb\n"), [["a"], ["b"]]);
        assert_eq!(rows("\"\""), [[""]]);
        assert!(rows("").is_empty());
    }

    #[test]
    fn line_numbers() {
        let lines: Vec<usize> = parse("a\n\"b\nc\"\r\n\nd", b',').unwrap().into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, [1, 2, 5]);
        assert_eq!(parse("a\n\"b", b',').unwrap_err(), "line 2: a quoted field is not closed");
        assert!(parse("\"a\"x", b',').unwrap_err().starts_with("line 1: 'x' after a closing quote"));
    }
}
