//! The byte-level half of `std/http` (the rest is csp): reading a message head
//! from a connection and parsing it with `httparse`, the body's framing
//! (RFC 9112 section 6), serializing a head and body into one write, chunks.

use super::{arity, step};
use crate::os::stream::{Head, Stream};
use crate::vm::{err, ErrorKind, Fiber, Key, NativeFn, Obj, Res, Ret, Value, Vm};

/// More header lines than this is a 431 (a request) or an error (a response).
const MAX_HEADERS: usize = 100;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("http.read_request", NativeFn::Full(read_request));
    vm.define_hidden("http.read_response", NativeFn::Full(read_response));
    vm.define_hidden("http.chunk_size", NativeFn::Full(chunk_size));
    vm.define_hidden("http.send", NativeFn::Full(send));
    vm.define_hidden("http.respond", NativeFn::Full(respond));
    vm.define_hidden("http.write_chunk", NativeFn::Full(write_chunk));
    vm.define_hidden("http.go", NativeFn::Full(go_detached));
    vm.define_hidden("http.date", NativeFn::Full(date));
    vm.define_hidden("http.unescape", NativeFn::Full(unescape));
    vm.define_hidden("http.escape", NativeFn::Full(escape));
}

fn conn(vm: &Vm, name: &str, v: Value) -> Res<Stream> {
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Stream(s) => Ok((**s).clone()),
            _ => err(ErrorKind::Type, format!("{name}() needs a connection, not {}", vm.heap.type_name(v))),
        },
        _ => err(ErrorKind::Type, format!("{name}() needs a connection, not {}", vm.heap.type_name(v))),
    }
}

fn size_arg(vm: &Vm, name: &str, v: Value) -> Res<usize> {
    match v {
        Value::Int(n) if n > 0 => Ok(n as usize),
        _ => err(ErrorKind::Value, format!("{name}() needs a positive int size, not {}", vm.heap.type_name(v))),
    }
}

/// A parsed head, owned (the buffer it came from is the stream's).
struct Parsed {
    /// The method and target of a request; the status and reason of a response.
    first: (String, String),
    version: u8,
    headers: Vec<(String, String)>,
}

/// Why a head was refused: the status a server answers with, and a reason.
type Refusal = (i64, String);

fn parse(head: &[u8], request: bool) -> Result<Parsed, Refusal> {
    let mut hs = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let (first, version, hs) = if request {
        let mut r = httparse::Request::new(&mut hs);
        r.parse(head).map_err(refusal)?;
        let first = (r.method.unwrap_or("").to_string(), r.path.unwrap_or("").to_string());
        (first, r.version.unwrap_or(1), r.headers)
    } else {
        let mut r = httparse::Response::new(&mut hs);
        r.parse(head).map_err(refusal)?;
        let first = (r.code.unwrap_or(0).to_string(), r.reason.unwrap_or("").to_string());
        (first, r.version.unwrap_or(1), r.headers)
    };
    let headers =
        hs.iter().map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).trim().to_string())).collect();
    Ok(Parsed { first, version, headers })
}

fn refusal(e: httparse::Error) -> Refusal {
    match e {
        httparse::Error::TooManyHeaders => (431, format!("more than {MAX_HEADERS} header lines")),
        e => (400, format!("malformed head: {e}")),
    }
}

/// How the body is delimited (RFC 9112 6.3): chunked, a length, or (a
/// response only) the end of the connection.
struct Framing {
    chunked: bool,
    length: Option<i64>,
    keep_alive: bool,
}

fn framing(p: &Parsed, request: bool) -> Result<Framing, Refusal> {
    fn values<'a>(p: &'a Parsed, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        p.headers.iter().filter(move |(k, _)| k == name).flat_map(|(_, v)| v.split(',')).map(str::trim)
    }
    let has_token = |name: &str, token: &str| values(p, name).any(|t| t.eq_ignore_ascii_case(token));
    let keep_alive = match p.version {
        0 => has_token("connection", "keep-alive"),
        _ => !has_token("connection", "close"),
    };
    let te: Vec<&str> = values(p, "transfer-encoding").collect();
    let lengths: Vec<&str> = values(p, "content-length").collect();
    if !te.is_empty() {
        if !lengths.is_empty() && request {
            return Err((400, "both Transfer-Encoding and Content-Length".into()));
        }
        if te.last().is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
            return Ok(Framing { chunked: true, length: None, keep_alive });
        }
        if request {
            return Err((501, format!("unsupported Transfer-Encoding {}", te.join(", "))));
        }
        return Ok(Framing { chunked: false, length: None, keep_alive: false });
    }
    if let Some(first) = lengths.first() {
        let n = first.parse::<i64>().ok().filter(|n| *n >= 0 && first.bytes().all(|b| b.is_ascii_digit()));
        match n {
            Some(n) if lengths.iter().all(|l| l == first) => {
                return Ok(Framing { chunked: false, length: Some(n), keep_alive })
            }
            _ => return Err((400, format!("bad Content-Length {}", lengths.join(", ")))),
        }
    }
    match request {
        true => Ok(Framing { chunked: false, length: Some(0), keep_alive }),
        false => Ok(Framing { chunked: false, length: None, keep_alive: false }),
    }
}

/// The message as a map: `fields` first, then version, headers and framing.
fn message(vm: &mut Vm, fields: &[(&str, Value)], p: &Parsed, f: &Framing) -> Value {
    let mut headers = crate::vm::value::new_map(p.headers.len());
    for (k, v) in &p.headers {
        let key = Key::Str(vm.intern(k));
        let joined = match headers.get(&key).and_then(|old| vm.heap.as_str(*old)) {
            Some(old) => format!("{}, {v}", old.s),
            None => v.clone(),
        };
        let v = vm.heap.string(joined);
        headers.insert(key, v);
    }
    let headers = Value::Obj(vm.heap.alloc(Obj::Map(Box::new(headers))));
    let version = vm.heap.string(if p.version == 0 { "1.0" } else { "1.1" }.to_string());
    // Room for the fields std/http adds (remote, read, bytes, text, json, url).
    let mut m = crate::vm::value::new_map(fields.len() + 11);
    for (k, v) in fields.iter().copied().chain([
        ("version", version),
        ("headers", headers),
        ("keep_alive", Value::Bool(f.keep_alive)),
        ("chunked", Value::Bool(f.chunked)),
        ("length", f.length.map_or(Value::Nil, Value::Int)),
    ]) {
        m.insert(Key::Str(vm.intern(k)), v);
    }
    Value::Obj(vm.heap.alloc(Obj::Map(Box::new(m))))
}

/// `__http_read_request(conn, max_head)`: the next request on a server's
/// connection as a map (method, target, path, query, version, headers,
/// keep_alive, chunked, length); nil when the client closed it between
/// requests (or in the middle of a head); `{error: status, message}` for a
/// request the server must refuse.
fn read_request(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("read_request", args, 2, 2)?;
    let (c, max) = (conn(vm, "read_request", args[0])?, size_arg(vm, "read_request", args[1])?);
    let r = c.read_head(max, |head| parse(head, true));
    step(vm, r, |vm, head| {
        let parsed = match head {
            Head::End | Head::Cut => return Ok(Value::Nil),
            Head::TooLong => Err((431, format!("request head longer than {max} bytes"))),
            Head::Got(p) => p,
        };
        let framed = parsed.and_then(|p| {
            if p.version == 1 && !p.headers.iter().any(|(k, _)| k == "host") {
                return Err((400, "HTTP/1.1 request without Host".to_string()));
            }
            framing(&p, true).map(|f| (p, f))
        });
        match framed {
            Ok((p, f)) => {
                let (method, target) = &p.first;
                let (path, query) = target.split_once('?').unwrap_or((target, ""));
                let fields = [
                    ("method", vm.heap.string(method.clone())),
                    ("target", vm.heap.string(target.clone())),
                    ("path", vm.heap.string(path.to_string())),
                    ("query", vm.heap.string(query.to_string())),
                ];
                Ok(message(vm, &fields, &p, &f))
            }
            Err((status, why)) => {
                let why = vm.heap.string(why);
                Ok(super::fs::record(&mut vm.heap, &[("error", Value::Int(status)), ("message", why)]))
            }
        }
    })
}

/// `__http_read_response(conn, max_head, head_request)`: a response head as a
/// map (status, reason, version, headers, keep_alive, chunked, length: nil
/// means "until the connection ends" unless chunked); nil if the connection
/// ended before its first byte (a kept-alive connection the server closed).
fn read_response(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("read_response", args, 3, 3)?;
    let (c, max) = (conn(vm, "read_response", args[0])?, size_arg(vm, "read_response", args[1])?);
    let no_body = args[2].truthy();
    let r = c.read_head(max, |head| parse(head, false));
    let name = c.name.clone();
    step(vm, r, |vm, head| {
        let p = match head {
            Head::End => return Ok(Value::Nil),
            Head::Cut => return err(ErrorKind::Io, format!("{name} closed in the middle of a response")),
            Head::TooLong => {
                return err(ErrorKind::Io, format!("response head from {name} is longer than {max} bytes"))
            }
            Head::Got(Ok(p)) => p,
            Head::Got(Err((_, why))) => return err(ErrorKind::Io, format!("bad response from {name}: {why}")),
        };
        let status: i64 = p.first.0.parse().unwrap_or(0);
        let mut f = framing(&p, false).map_err(|(_, why)| format!("bad response from {name}: {why}"));
        if no_body || (100..200).contains(&status) || status == 204 || status == 304 {
            f = Ok(Framing { chunked: false, length: Some(0), keep_alive: f.as_ref().map_or(false, |f| f.keep_alive) });
        }
        let f = match f {
            Ok(f) => f,
            Err(e) => return err(ErrorKind::Io, e),
        };
        let fields = [("status", Value::Int(status)), ("reason", vm.heap.string(p.first.1.clone()))];
        Ok(message(vm, &fields, &p, &f))
    })
}

/// `__http_chunk_size(conn)`: reads a chunk-size line of a chunked body and
/// gives the size (0: the last chunk; its trailer lines follow).
fn chunk_size(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("chunk_size", args, 1, 1)?;
    let c = conn(vm, "chunk_size", args[0])?;
    let r = c.read_line(Some(4096), |line: &[u8]| {
        let hex = line.split(|b| *b == b';').next().unwrap_or(b"");
        let hex = std::str::from_utf8(hex).unwrap_or("").trim();
        i64::from_str_radix(hex, 16).ok().filter(|n| *n >= 0 && !hex.starts_with('+'))
    });
    let name = c.name.clone();
    step(vm, r, |_, size| match size {
        Some(Some(n)) => Ok(Value::Int(n)),
        Some(None) => err(ErrorKind::Io, format!("bad chunk size in a body from {name}")),
        None => err(ErrorKind::Io, format!("{name} closed in the middle of a chunked body")),
    })
}

/// Appends `name: value` lines for a header whose value is a string, a number
/// or a list of them (one line each); refuses line breaks (header injection).
fn header_lines(vm: &Vm, out: &mut Vec<u8>, name: &str, v: Value) -> Res<()> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)) {
        return err(ErrorKind::Value, format!("bad header name {name:?}"));
    }
    if let Value::Obj(h) = v {
        if let Obj::List(items) = vm.heap.get(h) {
            for item in items.iter() {
                header_lines(vm, out, name, *item)?;
            }
            return Ok(());
        }
    }
    let value = crate::format::display(&vm.heap, v);
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return err(ErrorKind::Value, format!("header {name} has a line break in its value"));
    }
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// `__http_send(conn, start_line, headers, body, head_only)`: writes a
/// message head (the start line, the headers map's lines, a Content-Length
/// for a body unless the map has one) and the body (a string, bytes or nil),
/// in one write. With `head_only` (the answer to HEAD) the body is left out.
fn send(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("send", args, 5, 5)?;
    let c = conn(vm, "send", args[0])?;
    let start = crate::format::display(&vm.heap, args[1]);
    let body: Option<&[u8]> = match args[3] {
        Value::Nil => None,
        v => Some(super::bytes::data_arg(&vm.heap, "send", v)?),
    };
    let mut out = Vec::with_capacity(start.len() + 128 + body.map_or(0, <[u8]>::len));
    out.extend_from_slice(start.as_bytes());
    out.extend_from_slice(b"\r\n");
    let mut has_length = false;
    if let Value::Obj(h) = args[2] {
        if let Obj::Map(m) = vm.heap.get(h) {
            for (k, v) in m.iter() {
                let Key::Str(name) = k else {
                    return err(ErrorKind::Type, "header names are strings".to_string());
                };
                has_length |= &**name == "content-length";
                header_lines(vm, &mut out, name, *v)?;
            }
        }
    }
    if let (Some(b), false) = (body, has_length) {
        out.extend_from_slice(format!("content-length: {}\r\n", b.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if !args[4].truthy() {
        out.extend_from_slice(body.unwrap_or_default());
    }
    let r = c.write(&out);
    step(vm, r, |_, ()| Ok(Value::Nil))
}

/// Flags of `__http_respond` (std/http.csp names them).
const CLOSE: i64 = 1;
const KEEP_ALIVE: i64 = 2;
const HEAD_ONLY: i64 = 4;
const CHUNKED: i64 = 8;

/// `__http_respond(conn, status, headers, body, flags)`: a server's response
/// in one write: the status line, the headers (a map or nil), Date,
/// Content-Type when the headers have none (text for a string, octet-stream
/// for bytes), Content-Length of the body (or `Transfer-Encoding: chunked`
/// with CHUNKED: the body follows in chunks), Connection per CLOSE or
/// KEEP_ALIVE; the body unless HEAD_ONLY (or the status has none).
fn respond(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("respond", args, 5, 5)?;
    let c = conn(vm, "respond", args[0])?;
    let status = match args[1] {
        Value::Int(s) if (100..1000).contains(&s) => s,
        v => return err(ErrorKind::Value, format!("bad HTTP status {}", crate::format::display(&vm.heap, v))),
    };
    let flags = match args[4] {
        Value::Int(f) => f,
        _ => 0,
    };
    let body: Option<&[u8]> = match args[3] {
        Value::Nil => None,
        v => Some(super::bytes::data_arg(&vm.heap, "respond", v)?),
    };
    let mut out = Vec::with_capacity(160 + body.map_or(0, <[u8]>::len));
    out.extend_from_slice(format!("HTTP/1.1 {status} {}\r\n", reason(status)).as_bytes());
    let (mut has_type, mut has_length) = (false, false);
    if let Value::Obj(h) = args[2] {
        let Obj::Map(m) = vm.heap.get(h) else {
            return err(ErrorKind::Type, format!("response headers are a map, not {}", vm.heap.type_name(args[2])));
        };
        for (k, v) in m.iter() {
            let Key::Str(name) = k else {
                return err(ErrorKind::Type, "header names are strings".to_string());
            };
            has_type |= name.eq_ignore_ascii_case("content-type");
            has_length |= name.eq_ignore_ascii_case("content-length");
            header_lines(vm, &mut out, name, *v)?;
        }
    }
    let bodiless = status < 200 || status == 204 || status == 304;
    if !has_type && !bodiless {
        let is_bytes = vm.heap.as_bytes(args[3]).is_some();
        let kind = if is_bytes { "application/octet-stream" } else { "text/plain; charset=utf-8" };
        out.extend_from_slice(format!("content-type: {kind}\r\n").as_bytes());
    }
    if flags & CHUNKED != 0 {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    } else if !has_length && !bodiless {
        out.extend_from_slice(format!("content-length: {}\r\n", body.map_or(0, <[u8]>::len)).as_bytes());
    }
    if flags & CLOSE != 0 {
        out.extend_from_slice(b"connection: close\r\n");
    } else if flags & KEEP_ALIVE != 0 {
        out.extend_from_slice(b"connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"date: ");
    out.extend_from_slice(now_date().as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    if flags & HEAD_ONLY == 0 && !bodiless {
        out.extend_from_slice(body.unwrap_or_default());
    }
    let r = c.write(&out);
    step(vm, r, |_, ()| Ok(Value::Nil))
}

/// The reason phrase of a status code (RFC 9110 15).
fn reason(status: i64) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// `__http_write_chunk(conn, data)`: one chunk of a chunked body; empty data
/// writes the last chunk.
fn write_chunk(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("write_chunk", args, 2, 2)?;
    let c = conn(vm, "write_chunk", args[0])?;
    let data = super::bytes::data_arg(&vm.heap, "write", args[1])?;
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    let r = c.write(&out);
    step(vm, r, |_, ()| Ok(Value::Nil))
}

/// `__http_go(f)`: starts `f()` in a fiber owned by the program, not by the
/// caller (a server's connection, left to finish its request when the
/// server's fiber is cancelled); its task.
fn go_detached(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("go", args, 1, 1)?;
    let site = fiber.current_site().expect("a builtin is called from a frame");
    Ok(Ret::Value(crate::sched::ops::go_detached(vm, args, site)))
}

thread_local! {
    /// The Date header of the current second (formatted once a second).
    static DATE: std::cell::RefCell<(u64, std::rc::Rc<str>)> = std::cell::RefCell::new((u64::MAX, "".into()));
}

/// `__http_date()`: the time now as an HTTP date (`Tue, 01 Dec 2026 09:25:44 GMT`),
/// formatted once a second (a server sends it with every response).
fn date(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("date", args, 0, 0)?;
    let text = now_date();
    Ok(Ret::Value(vm.heap.str(&text)))
}

/// The current second's HTTP date.
fn now_date() -> std::rc::Rc<str> {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with(|d| {
        let mut d = d.borrow_mut();
        if d.0 != secs {
            *d = (secs, http_date(secs).into());
        }
        d.1.clone()
    })
}

/// IMF-fixdate (RFC 9110 5.6.7) of `secs` since the epoch.
fn http_date(secs: u64) -> String {
    let (days, rem) = (secs / 86400, secs % 86400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let wd = DAYS[(days % 7) as usize];
    format!("{wd}, {day:02} {} {year} {h:02}:{m:02}:{s:02} GMT", MONTHS[month as usize - 1])
}

/// `__http_unescape(s)`: percent-decoding (and `+` as a space, as in a
/// query); a `value` error for a bad escape or bytes that are not UTF-8.
fn unescape(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("unescape", args, 1, 1)?;
    let s = super::text_arg(&vm.heap, "http.unescape", "a string", args[0])?;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(x) => out.push(x),
                    None => return err(ErrorKind::Value, format!("bad percent escape in {s:?}")),
                }
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(t) => Ok(Ret::Value(vm.heap.string(t))),
        Err(_) => err(ErrorKind::Value, format!("{s:?} does not decode to UTF-8 text")),
    }
}

/// `__http_escape(s)`: percent-encodes everything but unreserved characters
/// (RFC 3986 2.3), for a query value or a path segment.
fn escape(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("escape", args, 1, 1)?;
    let s = super::text_arg(&vm.heap, "http.escape", "a string", args[0])?;
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(Ret::Value(vm.heap.string(out)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(super::http_date(1_796_117_144), "Tue, 01 Dec 2026 09:25:44 GMT");
        assert_eq!(super::http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
