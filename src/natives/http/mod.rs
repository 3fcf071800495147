//! The byte-level half of `std/http` (the rest is csp): reading a message head
//! from a connection and parsing it with `httparse`, the body's framing
//! (RFC 9112 section 6), chunk sizes (here); writing heads, bodies and chunks
//! (`write.rs`); dates (`text.rs`). Targets are parsed with `std/url`'s
//! `absolute_target`.

mod text;
mod write;

use text::date;
use write::{respond, send, write_chunk};

use super::args::{arity, step};
use crate::os::stream::Head;
use crate::vm::{err, ErrorKind, Fiber, Key, NativeFn, Obj, Res, Ret, Value, Vm};

/// More header lines than this is a 431 (a request) or an error (a response).
const MAX_HEADERS: usize = 100;

/// Header names interned (one buffer shared by every message), sorted.
const COMMON_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "authorization",
    "cache-control",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "host",
    "if-modified-since",
    "if-none-match",
    "keep-alive",
    "last-modified",
    "location",
    "origin",
    "pragma",
    "referer",
    "sec-websocket-accept",
    "sec-websocket-extensions",
    "sec-websocket-key",
    "sec-websocket-protocol",
    "sec-websocket-version",
    "server",
    "set-cookie",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "x-forwarded-for",
];

pub fn register(vm: &mut Vm) {
    vm.define_hidden("http.read_request", NativeFn::Full(read_request));
    vm.define_hidden("http.read_response", NativeFn::Full(read_response));
    vm.define_hidden("http.chunk_size", NativeFn::Full(chunk_size));
    vm.define_hidden("http.wait_request", NativeFn::Full(wait_request));
    vm.define_hidden("http.send", NativeFn::Full(send));
    vm.define_hidden("http.respond", NativeFn::Full(respond));
    vm.define_hidden("http.write_chunk", NativeFn::Full(write_chunk));
    vm.define_hidden("http.date", NativeFn::Full(date));
}

use super::stream_methods::conn_arg as conn;

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
        let chunked_last = te.last().is_some_and(|t| t.eq_ignore_ascii_case("chunked"));
        // A request's body is decoded only when chunked is its one coding
        // (RFC 9112 6.1: others are 501; chunked not last is 400).
        if request && chunked_last && te.len() > 1 {
            return Err((501, format!("unsupported Transfer-Encoding {}", te.join(", "))));
        }
        if chunked_last {
            return Ok(Framing { chunked: true, length: None, keep_alive });
        }
        if request {
            let status = if te.iter().any(|t| t.eq_ignore_ascii_case("chunked")) { 400 } else { 501 };
            return Err((status, format!("unsupported Transfer-Encoding {}", te.join(", "))));
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
        // Interned names live as long as the program: only the common ones
        // are shared, so a client sending fresh names cannot grow memory.
        let key = match COMMON_HEADERS.binary_search(&k.as_str()) {
            Ok(_) => Key::Str(vm.intern(k)),
            Err(_) => Key::Str(crate::vm::str::Str::from(k.as_str())),
        };
        let joined = match headers.get(&key).and_then(|old| vm.heap.as_str(*old)) {
            Some(old) => format!("{}, {v}", old.s),
            None => v.clone(),
        };
        let v = vm.heap.string(joined);
        headers.insert(key, v);
    }
    let headers = Value::Obj(vm.heap.alloc(Obj::Map(headers)));
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
    Value::Obj(vm.heap.alloc(Obj::Map(m)))
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
        Ok(request(vm, parsed))
    })
}

/// A parsed request head as `__http_read_request` answers it: the message
/// map, or `{error: status, message}` for a request the server must refuse.
fn request(vm: &mut Vm, parsed: Result<Parsed, Refusal>) -> Value {
    let framed = parsed.and_then(|mut p| {
        let hosts = p.headers.iter().filter(|(k, _)| k == "host").count();
        if p.version == 1 && hosts == 0 {
            return Err((400, "HTTP/1.1 request without Host".to_string()));
        }
        if hosts > 1 {
            return Err((400, "more than one Host header".to_string()));
        }
        let (path, query, authority) = target_parts(&p.first.0, &p.first.1)?;
        if let Some(a) = authority {
            // RFC 9112 3.2.2: the absolute form's host replaces Host.
            p.headers.retain(|(k, _)| k != "host");
            p.headers.push(("host".to_string(), a));
        }
        framing(&p, true).map(|f| (p, f, path, query))
    });
    match framed {
        Ok((p, f, path, query)) => {
            let (method, target) = &p.first;
            let fields = [
                ("method", vm.heap.string(method.clone())),
                ("target", vm.heap.string(target.clone())),
                ("path", vm.heap.string(path)),
                ("query", vm.heap.string(query)),
            ];
            message(vm, &fields, &p, &f)
        }
        Err((status, why)) => {
            let why = vm.heap.string(why);
            crate::natives::fs::record(&mut vm.heap, &[("error", Value::Int(status)), ("message", why)])
        }
    }
}

/// The path and query of a request target (RFC 9112 3.2): the origin form
/// split at `?`; the absolute form (`http://host/p?q`, sent to proxies)
/// parsed by `std/url`, with its authority, which replaces Host; `*` for
/// `OPTIONS *`; nothing for `CONNECT`'s authority form (see `target`).
fn target_parts(method: &str, target: &str) -> Result<(String, String, Option<String>), Refusal> {
    if target.starts_with('/') {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        return Ok((path.to_string(), query.to_string(), None));
    }
    match (method, target) {
        ("OPTIONS", "*") => Ok(("*".to_string(), String::new(), None)),
        ("CONNECT", _) => Ok((String::new(), String::new(), None)),
        _ => match crate::natives::url::absolute_target(target) {
            Some((path, query, authority)) => Ok((path, query, Some(authority))),
            None => Err((400, format!("bad request target {target:?}"))),
        },
    }
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
        response(vm, p, no_body).or_else(|why| err(ErrorKind::Io, format!("bad response from {name}: {why}")))
    })
}

/// A parsed response head as `__http_read_response` answers it (`no_body`:
/// the request was HEAD), or why its framing is bad.
fn response(vm: &mut Vm, p: Parsed, no_body: bool) -> Result<Value, String> {
    let status: i64 = p.first.0.parse().unwrap_or(0);
    let mut f = framing(&p, false).map_err(|(_, why)| why);
    if no_body || (100..200).contains(&status) || status == 204 || status == 304 {
        f = Ok(Framing { chunked: false, length: Some(0), keep_alive: f.as_ref().is_ok_and(|f| f.keep_alive) });
    }
    let f = f?;
    let fields = [("status", Value::Int(status)), ("reason", vm.heap.string(p.first.1.clone()))];
    Ok(message(vm, &fields, &p, &f))
}

/// `__http_wait_request(conn)`: waits until the next request on a kept-alive
/// connection begins (true) or the client closes it (false).
fn wait_request(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("wait_request", args, 1, 1)?;
    let c = conn(vm, "wait_request", args[0])?;
    step(vm, c.wait_data(), |_, more| Ok(Value::Bool(more)))
}

/// `__http_chunk_size(conn)`: reads a chunk-size line of a chunked body and
/// gives the size (0: the last chunk; its trailer lines follow), or -1 for a
/// line that is not one (std/http's server answers 400).
fn chunk_size(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("chunk_size", args, 1, 1)?;
    let c = conn(vm, "chunk_size", args[0])?;
    // The 4 KiB line limit binds long before any cap could.
    let r = c.read_line(Some(4096), usize::MAX, chunk_line);
    let r = r.map_err(|f| match f {
        crate::os::stream::Fail::Io(msg) => msg,
        crate::os::stream::Fail::Over => unreachable!("no cap"),
    });
    let name = c.name.clone();
    step(vm, r, |_, size| match size {
        Some(Some(n)) => Ok(Value::Int(n)),
        Some(None) => Ok(Value::Int(-1)),
        None => err(ErrorKind::Io, format!("{name} closed in the middle of a chunked body")),
    })
}

/// A chunk-size line's size (its extensions after `;` ignored), or None.
fn chunk_line(line: &[u8]) -> Option<i64> {
    let hex = line.split(|b| *b == b';').next().unwrap_or(b"");
    let hex = std::str::from_utf8(hex).unwrap_or("").trim();
    i64::from_str_radix(hex, 16).ok().filter(|n| *n >= 0 && !hex.starts_with('+'))
}

/// The `http` fuzz target's path (docs/fuzzing.md): `data` up to its first
/// blank line as a request head and as a response head, through the parser,
/// the framing and target rules and the maps `__http_read_request` and
/// `__http_read_response` make; each of its lines as a chunk-size line.
pub fn fuzz(vm: &mut Vm, data: &[u8]) {
    let end = data.windows(4).position(|w| w == b"\r\n\r\n").map_or(data.len(), |i| i + 4);
    let head = &data[..end];
    request(vm, parse(head, true));
    if let Ok(p) = parse(head, false) {
        let _ = response(vm, p, false);
    }
    for line in data.split(|b| *b == b'\n') {
        let _ = chunk_line(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_headers_are_sorted() {
        assert!(COMMON_HEADERS.windows(2).all(|w| w[0] < w[1]));
    }

    /// Names a client makes up are not interned: a server's memory does not
    /// grow with every fresh name (issue 37), while common ones stay shared.
    #[test]
    fn only_common_header_names_are_interned() {
        let mut vm = crate::natives::vm();
        let f = Framing { chunked: false, length: Some(0), keep_alive: true };
        let mut before = 0;
        for i in 0..1000 {
            if i == 1 {
                before = vm.heap.strings.name_count(); // the message's own field names
            }
            let headers = vec![("host".to_string(), "x".to_string()), (format!("x-made-up-{i}"), "1".to_string())];
            let p = Parsed { first: ("GET".into(), "/".into()), version: 1, headers };
            let m = message(&mut vm, &[], &p, &f);
            let Value::Obj(h) = m else { panic!("a map") };
            let key = Key::Str(vm.intern("headers"));
            let Obj::Map(m) = vm.heap.get(h) else { panic!("a map") };
            let Some(Value::Obj(hs)) = m.get(&key).copied() else { panic!("headers") };
            let Obj::Map(hs) = vm.heap.get(hs) else { panic!("a map") };
            assert!(hs.get(&Key::Str(crate::vm::str::Str::from(format!("x-made-up-{i}").as_str()))).is_some());
        }
        assert_eq!(vm.heap.strings.name_count(), before);
    }
}
