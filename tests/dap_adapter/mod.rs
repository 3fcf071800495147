//! `csp dap` driven at the protocol level for tests/dap.rs: requests
//! written Content-Length framed, messages read on a thread.

#![allow(dead_code)] // helpers a test crate may not use

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// `csp dap` as a child, its messages read on a thread.
pub struct Adapter {
    pub child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Events read while waiting for something else.
    pub seen: Vec<Value>,
    seq: i64,
}

impl Adapter {
    pub fn start() -> Adapter {
        let mut child =
            Command::new(CSP).arg("dap").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("csp dap starts");
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, messages) = channel();
        std::thread::spawn(move || loop {
            let mut length = 0;
            loop {
                let mut line = String::new();
                if out.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                match line.trim().strip_prefix("Content-Length:") {
                    Some(n) => length = n.trim().parse().unwrap(),
                    None if line.trim().is_empty() => break,
                    None => panic!("not a header: {line:?}"),
                }
            }
            let mut body = vec![0; length];
            out.read_exact(&mut body).unwrap();
            if tx.send(serde_json::from_slice(&body).expect("the adapter writes JSON")).is_err() {
                return;
            }
        });
        Adapter { child, stdin, messages, seen: Vec::new(), seq: 0 }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send_body(&mut self, body: &str) {
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    /// Sends a request; its seq.
    pub fn request(&mut self, command: &str, args: Value) -> i64 {
        self.seq += 1;
        let msg = json!({"seq": self.seq, "type": "request", "command": command, "arguments": args});
        self.send_body(&msg.to_string());
        self.seq
    }

    pub fn next(&mut self) -> Value {
        self.messages.recv_timeout(Duration::from_secs(30)).expect("a message from the adapter within 30 s")
    }

    /// The response to request `seq` (events meanwhile are kept).
    pub fn response(&mut self, seq: i64) -> Value {
        loop {
            let m = self.next();
            if m["type"] == "response" && m["request_seq"] == seq {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// Sends a request and expects it to succeed: its body.
    pub fn ok(&mut self, command: &str, args: Value) -> Value {
        let seq = self.request(command, args);
        let r = self.response(seq);
        assert_eq!(r["success"], true, "{command} failed: {r}");
        r["body"].clone()
    }

    /// Sends a request and expects it to fail: its message.
    pub fn fails(&mut self, command: &str, args: Value) -> String {
        let seq = self.request(command, args);
        let r = self.response(seq);
        assert_eq!(r["success"], false, "{command} should fail: {r}");
        r["message"].as_str().unwrap().to_string()
    }

    /// The next event `name` (earlier others are kept).
    pub fn event(&mut self, name: &str) -> Value {
        if let Some(i) = self.seen.iter().position(|m| m["type"] == "event" && m["event"] == name) {
            return self.seen.remove(i)["body"].clone();
        }
        loop {
            let m = self.next();
            if m["type"] == "event" && m["event"] == name {
                return m["body"].clone();
            }
            self.seen.push(m);
        }
    }

    /// Program output of `category` seen so far, and up to the program's end.
    pub fn output_until_exit(&mut self, category: &str) -> (String, i64) {
        let code = self.event("exited")["exitCode"].as_i64().unwrap();
        let text = self
            .seen
            .iter()
            .filter(|m| m["event"] == "output" && m["body"]["category"] == category)
            .map(|m| m["body"]["output"].as_str().unwrap())
            .collect();
        (text, code)
    }

    /// initialize, then launch `src` (written to a file) with `extra`
    /// arguments, breakpoints `bps` (DAP `SourceBreakpoint`s), and exception
    /// `filters`.
    pub fn launch(tag: &str, src: &str, extra: Value, bps: Value, filters: &[&str]) -> (Adapter, String) {
        let mut a = Adapter::start();
        let caps = a.ok("initialize", json!({"adapterID": "csp"}));
        assert_eq!(caps["supportsConfigurationDoneRequest"], true);
        let path = std::env::temp_dir().join(format!("csp_dap_{tag}_{}.csp", std::process::id()));
        std::fs::write(&path, src).unwrap();
        let path = path.to_string_lossy().into_owned();
        let mut args = json!({"program": path});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        a.ok("launch", args);
        a.event("initialized");
        a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": bps}));
        a.ok("setExceptionBreakpoints", json!({"filters": filters}));
        a.ok("configurationDone", json!({}));
        (a, path)
    }

    /// The stopped event's reason and the top frame's line and id.
    pub fn stopped(&mut self) -> (String, i64, i64, i64) {
        let ev = self.event("stopped");
        let thread = ev["threadId"].as_i64().unwrap();
        let st = self.ok("stackTrace", json!({"threadId": thread}));
        let top = &st["stackFrames"][0];
        (ev["reason"].as_str().unwrap().to_string(), top["line"].as_i64().unwrap(), top["id"].as_i64().unwrap(), thread)
    }

    /// The locals of frame `frame` as name → value text.
    pub fn locals(&mut self, frame: i64) -> Vec<(String, String)> {
        let scopes = self.ok("scopes", json!({"frameId": frame}));
        let r = scopes["scopes"][0]["variablesReference"].clone();
        let vars = self.ok("variables", json!({"variablesReference": r}));
        let vars = vars["variables"].as_array().unwrap().iter();
        vars.map(|v| (v["name"].as_str().unwrap().to_string(), v["value"].as_str().unwrap().to_string())).collect()
    }

    pub fn local(&mut self, frame: i64, name: &str) -> String {
        let all = self.locals(frame);
        all.into_iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no local {name}")).1
    }

    pub fn evaluate(&mut self, frame: i64, expr: &str) -> String {
        let r = self.ok("evaluate", json!({"expression": expr, "frameId": frame}));
        r["result"].as_str().unwrap().to_string()
    }

    /// disconnect; the adapter exits 0.
    pub fn disconnect(mut self) {
        self.ok("disconnect", json!({}));
        let status = self.child.wait().unwrap();
        assert!(status.success(), "csp dap exited with {status}");
    }
}
