//! Writing HTTP messages: heads from a start line and a headers map (no line
//! breaks in values: no header injection), a server's response in one write,
//! chunks.

use super::conn;
use crate::natives::args::{arity, step};
use crate::vm::{err, ErrorKind, Fiber, Key, Obj, Res, Ret, Value, Vm};

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
    let value = crate::display::display(&vm.heap, v);
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return err(ErrorKind::Value, format!("header {name} has a line break in its value"));
    }
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// Appends the lines of a headers map (or nothing for nil); whether it has a
/// Content-Type and a Content-Length (names in any case).
fn header_map(vm: &Vm, out: &mut Vec<u8>, headers: Value) -> Res<(bool, bool)> {
    let (mut has_type, mut has_length) = (false, false);
    if headers.truthy() {
        let Some(Obj::Map(m)) = (match headers {
            Value::Obj(h) => Some(vm.heap.get(h)),
            _ => None,
        }) else {
            return err(ErrorKind::Type, format!("headers are a map, not {}", vm.heap.type_name(headers)));
        };
        for (k, v) in m.iter() {
            let Key::Str(name) = k else {
                return err(ErrorKind::Type, "header names are strings".to_string());
            };
            has_type |= name.eq_ignore_ascii_case("content-type");
            has_length |= name.eq_ignore_ascii_case("content-length");
            header_lines(vm, out, name, *v)?;
        }
    }
    Ok((has_type, has_length))
}

/// `__http_send(conn, start_line, headers, body, head_only)`: writes a
/// message head (the start line, the headers map's lines, a Content-Length
/// for a body unless the map has one) and the body (a string, bytes or nil),
/// in one write. With `head_only` (the answer to HEAD) the body is left out.
pub(super) fn send(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("send", args, 5, 5)?;
    let c = conn(vm, "send", args[0])?;
    let start = crate::display::display(&vm.heap, args[1]);
    let body: Option<&[u8]> = match args[3] {
        Value::Nil => None,
        v => Some(crate::natives::bytes::data_arg(&vm.heap, "send", v)?),
    };
    let mut out = Vec::with_capacity(start.len() + 128 + body.map_or(0, <[u8]>::len));
    out.extend_from_slice(start.as_bytes());
    out.extend_from_slice(b"\r\n");
    let (_, has_length) = header_map(vm, &mut out, args[2])?;
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
pub(super) fn respond(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("respond", args, 5, 5)?;
    let c = conn(vm, "respond", args[0])?;
    let status = match args[1] {
        Value::Int(s) if (100..1000).contains(&s) => s,
        v => return err(ErrorKind::Value, format!("bad HTTP status {}", crate::display::display(&vm.heap, v))),
    };
    let flags = match args[4] {
        Value::Int(f) => f,
        _ => 0,
    };
    let body: Option<&[u8]> = match args[3] {
        Value::Nil => None,
        v => Some(crate::natives::bytes::data_arg(&vm.heap, "respond", v)?),
    };
    let mut out = Vec::with_capacity(160 + body.map_or(0, <[u8]>::len));
    out.extend_from_slice(format!("HTTP/1.1 {status} {}\r\n", reason(status)).as_bytes());
    let (has_type, has_length) = header_map(vm, &mut out, args[2])?;
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
    out.extend_from_slice(super::text::now_date().as_bytes());
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
        426 => "Upgrade Required",
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
pub(super) fn write_chunk(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("write_chunk", args, 2, 2)?;
    let c = conn(vm, "write_chunk", args[0])?;
    let data = crate::natives::bytes::data_arg(&vm.heap, "write", args[1])?;
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    let r = c.write(&out);
    step(vm, r, |_, ()| Ok(Value::Nil))
}
