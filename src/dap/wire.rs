//! The Debug Adapter Protocol's framing: `Content-Length` headers, JSON
//! bodies; responses and events written whole under one lock, each with the
//! next sequence number, from either of the adapter's threads.

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

/// Bodies past this are refused (a client's message is a few kilobytes).
const MAX_BODY: usize = 64 << 20;

/// Why a message could not be read.
pub enum ReadError {
    /// The input ended.
    Closed,
    /// The header was unreadable: the rest of the stream cannot be trusted.
    Framing(String),
}

/// Reads one message's body (None: its header was bad but the stream may go on).
pub fn read_body(input: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => return Err(ReadError::Closed),
            Ok(_) => {}
            Err(e) => return Err(ReadError::Framing(format!("cannot read a header: {e}"))),
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            // Blank lines before a header are skipped; after one they end it.
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
                if length.is_none() {
                    return Err(ReadError::Framing(format!("bad Content-Length {:?}", value.trim())));
                }
            }
        } else {
            return Err(ReadError::Framing(format!("not a header line: {line:?}")));
        }
    }
    let Some(n) = length else { return Err(ReadError::Framing("a header without Content-Length".into())) };
    if n > MAX_BODY {
        return Err(ReadError::Framing(format!("a body of {n} bytes is too big")));
    }
    let mut body = vec![0; n];
    input.read_exact(&mut body).map_err(|_| ReadError::Closed)?;
    Ok(body)
}

/// The adapter's output: stdout in the program, a buffer in tests.
#[derive(Clone)]
pub struct Out {
    inner: Arc<Mutex<(u64, Box<dyn Write + Send>)>>,
}

impl Out {
    pub fn new(w: Box<dyn Write + Send>) -> Out {
        Out { inner: Arc::new(Mutex::new((1, w))) }
    }

    fn send(&self, mut msg: Value) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        msg["seq"] = json!(g.0);
        g.0 += 1;
        let body = msg.to_string();
        // A client that went away ends the session on the reading side.
        let _ = write!(g.1, "Content-Length: {}\r\n\r\n{body}", body.len());
        let _ = g.1.flush();
    }

    /// A successful response to `req` with `body`.
    pub fn ok(&self, req: &Request, body: Value) {
        self.send(json!({"type": "response", "request_seq": req.seq, "success": true,
            "command": req.command, "body": body}));
    }

    /// A failed response to `req`, saying why.
    pub fn fail(&self, req: &Request, message: &str) {
        self.fail_raw(req.seq, &req.command, message);
    }

    pub fn fail_raw(&self, seq: i64, command: &str, message: &str) {
        self.send(json!({"type": "response", "request_seq": seq, "success": false,
            "command": command, "message": message,
            "body": {"error": {"id": 1, "format": message, "showUser": true}}}));
    }

    pub fn event(&self, event: &str, body: Value) {
        self.send(json!({"type": "event", "event": event, "body": body}));
    }

    /// Program or adapter text in the client's console.
    pub fn output(&self, category: &str, text: &str) {
        self.event("output", json!({"category": category, "output": text}));
    }
}

/// A request as the adapter reads it.
#[derive(Clone, Debug)]
pub struct Request {
    pub seq: i64,
    pub command: String,
    pub args: Value,
}

impl Request {
    /// A message's request, or what is wrong with it.
    pub fn parse(body: &[u8]) -> Result<Request, (i64, String)> {
        let v: Value = serde_json::from_slice(body).map_err(|e| (0, format!("malformed message: {e}")))?;
        let seq = v.get("seq").and_then(Value::as_i64).unwrap_or(0);
        if v.get("type").and_then(Value::as_str) != Some("request") {
            return Err((seq, "not a request (only requests are expected)".into()));
        }
        let Some(command) = v.get("command").and_then(Value::as_str) else {
            return Err((seq, "a request without a command".into()));
        };
        let args = v.get("arguments").cloned().unwrap_or(Value::Null);
        Ok(Request { seq, command: command.to_string(), args })
    }

    /// Argument `name` as an integer.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.args.get(name).and_then(Value::as_i64)
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.args.get(name).and_then(Value::as_str)
    }
}
