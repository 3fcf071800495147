//! std/http on loopback through the real `csp` binary: the client against the
//! server, and raw sockets against the server for what a client library would
//! never send (garbage, slow heads, chunked uploads, huge heads).

mod common;

/// `src` after a prelude with a server on a free port (`base` is its URL,
/// `addr` its address, `srv` its task) whose handler has a few routes, and
/// `raw(text)` for requests no client library would send.
fn with_server(opts: &str, src: &str) -> (i32, String, String) {
    let prelude = r#"
import "std/http"
import "std/net"
let l = net.listen("127.0.0.1:0")
let addr = l.addr()
let base = "http://${addr}"
// The reply's lines to `text` sent raw on a new connection.
fn raw(text) {
    let c = net.connect(addr)
    c.write(text)
    let reply = c.read_text()
    c.close()
    return reply.split("\r\n")
}
let seen = {}
fn handler(req) {
    seen[req.remote] = true
    if req.path == "/hello" { return "hello ${req.method}" }
    if req.path == "/json" { return http.json({q: http.query(req.query), agent: req.headers["user-agent"]}) }
    if req.path == "/echo" { return {status: 201, headers: {"X-Got": req.headers["content-type"]}, body: req.bytes()} }
    if req.path == "/upload" {
        let n = 0
        let parts = 0
        while true {
            let b = req.read(1000)
            if b == nil { break }
            n += len(b)
            parts += 1
        }
        return "got ${n} bytes"
    }
    if req.path == "/stream" { return {body: fn(w) { for i in 0..3 { w.write("line ${i}\n") } }} }
    if req.path == "/redirect" { return {status: 302, headers: {Location: "/json?from=redirect"}} }
    if req.path == "/see-other" { return {status: 303, headers: {location: "/hello"}} }
    if req.path == "/slow" {
        sleep(400)
        return "slow"
    }
    if req.path == "/boom" { throw error("kaboom") }
    if req.path == "/nothing" { return nil }
    return {status: 404, body: "no ${req.path}\n"}
}
let srv = go http.serve(l, handler, OPTS)
"#
    .replace("OPTS", opts);
    common::run_sh("http", "", &format!("{}{prelude}{src}\nsrv.cancel()\n", common::FDS))
}

fn ok(opts: &str, src: &str) -> String {
    let (code, out, err) = with_server(opts, src);
    assert_eq!(code, 0, "exit {code}\nstdout:\n{out}\nstderr:\n{err}");
    out
}

#[test]
fn requests_and_responses() {
    let out = ok(
        "{}",
        r#"
let r = http.get(base + "/hello")
print(r.status, r.reason, r.text(), r.headers["content-type"], r.headers["content-length"], r.version)
print(http.get(base + "/json?a=1&b=x%20y&c").json())
r = http.post(base + "/echo", "some text")
print(r.status, r.text(), r.headers["x-got"])
r = http.post(base + "/echo", {list: [1, 2.5, nil]})
print(r.text(), r.headers["x-got"])
r = http.post(base + "/echo", bytes([0, 255]))
print(r.bytes(), r.headers["x-got"])
r = http.request("PUT", base + "/echo", {body: "put", headers: {"Content-Type": "text/x-mine"}})
print(r.status, r.text(), r.headers["x-got"])
r = http.get(base + "/stream")
print(r.headers["transfer-encoding"], r.text().split("\n"))
r = http.request("HEAD", base + "/hello")
print(r.status, r.headers["content-length"], len(r.bytes()))
r = http.get(base + "/nothing")
print(r.status, r.headers["content-length"], r.text() == "")
r = http.get(base + "/missing")
print(r.status, r.reason, r.text())
"#,
    );
    assert_eq!(
        out,
        "200 OK hello GET text/plain; charset=utf-8 9 1.1\n\
         {\"q\": {\"a\": \"1\", \"b\": \"x y\", \"c\": \"\"}, \"agent\": \"csp\"}\n\
         201 some text text/plain; charset=utf-8\n\
         {\"list\":[1,2.5,null]} application/json\n\
         b\"\\x00\\xff\" application/octet-stream\n\
         201 put text/x-mine\n\
         chunked [\"line 0\", \"line 1\", \"line 2\", \"\"]\n\
         200 10 0\n\
         200 0 true\n\
         404 Not Found no /missing\n\n"
    );
}

#[test]
fn keep_alive_redirects_and_handler_errors() {
    let (code, out, err) = with_server(
        "{}",
        r#"
for i in 0..5 { http.get(base + "/hello") }
print("one connection for five requests:", len(seen), len(http.pool[base]))
let r = http.get(base + "/redirect")
print(r.status, r.url, r.json().q)
r = http.post(base + "/see-other", "x")
print(r.status, r.text())
r = http.get(base + "/redirect", {follow: false})
print(r.status, r.headers.location)
r = http.get(base + "/boom")
print(r.status, r.text())
print(http.get(base + "/hello").text())
"#,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "one connection for five requests: 1 1\n\
         200 http://127.0.0.1:PORT/json?from=redirect {\"from\": \"redirect\"}\n\
         200 hello GET\n\
         302 /json?from=redirect\n\
         500 Internal Server Error\n\n\
         hello GET\n"
            .replace("PORT", out.split("127.0.0.1:").nth(1).unwrap_or("").split('/').next().unwrap_or(""))
    );
    assert!(err.contains("http: GET /boom: kaboom"), "{err}");
}

#[test]
fn client_timeouts_and_refused_connections() {
    let out = ok(
        "{}",
        r#"
import "std/net"
try { http.get(base + "/slow", {timeout: 100}) } catch e { print(e.kind, e.message) }
print(http.get(base + "/slow", {timeout: 2000}).text())
let closed = net.listen("127.0.0.1:0")
let gone = closed.addr()
closed.close()
try { http.get("http://${gone}/") } catch e { print(e.kind, e.message.contains("Connection refused")) }
try { http.get("ftp://x/") } catch e { print(e.message) }
"#,
    );
    assert_eq!(out, "timeout timeout after 100 ms\nslow\nio true\nunsupported URL scheme ftp in ftp://x/\n");
}

/// What a browser or curl would not send: raw bytes on a socket.
#[test]
fn raw_requests_chunked_uploads_and_bad_input() {
    let out = ok(
        "{max_head: 2048, max_body: 5000}",
        r#"
fn status(text) { return raw(text)[0] }
// a chunked upload read in pieces by the handler
let r = raw("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n")
print(r[0], r[-1])
print(status("GARBAGE\r\n\r\n"))
print(status("GET / HTTP/1.1\r\n\r\n"))
print(status("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(3000) + "\r\n\r\n"))
print(status("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 9000\r\n\r\n" + "a".repeat(9000)))
print(status("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc"))
print(status("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"))
// HTTP/1.0: closed after the response unless asked to keep alive
r = raw("GET /hello HTTP/1.0\r\n\r\n")
print(r[0], "connection: close" in r, r[-1])
// two pipelined requests on one connection, answered in order
let c = net.connect(addr)
c.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nHEAD /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
let all = c.read_text()
print(len(all.split("HTTP/1.1 200 OK")) - 1, all.ends_with("\r\n\r\n"))
// the server still serves well-behaved clients
print(http.get(base + "/hello").text())
"#,
    );
    assert_eq!(
        out,
        "HTTP/1.1 200 OK got 8 bytes\n\
         HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 431 Request Header Fields Too Large\n\
         HTTP/1.1 413 Content Too Large\n\
         HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 200 OK true hello GET\n\
         2 true\n\
         hello GET\n"
    );
}

/// Framing a server must refuse (RFC 9112), and an absolute-form target: two
/// Host headers, transfer codings it cannot decode, a broken chunked body
/// (400, not the handler's 500, and the connection closes).
#[test]
fn conflicting_hosts_codings_and_broken_chunks_are_refused() {
    let out = ok(
        "{}",
        r#"
print(raw("GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")[0])
print(raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")[0])
print(raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n")[0])
print(raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n")[0])
// a bad chunk size, then a request that must not be read as the next one
let r = raw("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
print(r[0], len(r.join("\n").split("HTTP/1.1 ")) - 1)
// chunk data longer than its size
print(raw("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n")[0])
// the absolute form: its path is the path, its authority the Host
let a = raw("GET http://example.test/json?x=1 HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n")
print(a[0], a[-1])
"#,
    );
    assert_eq!(
        out,
        "HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 501 Not Implemented\n\
         HTTP/1.1 501 Not Implemented\n\
         HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 400 Bad Request 1\n\
         HTTP/1.1 400 Bad Request\n\
         HTTP/1.1 200 OK {\"q\":{\"x\":\"1\"},\"agent\":null}\n"
    );
}

/// A client that sends its head a byte at a time (slowloris) or goes quiet
/// is disconnected after `head_timeout`; others are served meanwhile; and no
/// descriptor is left behind.
#[test]
fn slow_and_vanishing_clients_cost_only_their_connection() {
    let out = ok(
        "{head_timeout: 300, idle_timeout: 300}",
        r#"
let before = fds()
let slow = net.connect(addr)
let dribble = go fn() {
    // The server may close it (head_timeout) a tick before `quiet`: a write
    // after that fails, and the dribbler stops, as a real client would.
    for ch in "GET /hello HTTP/1.1\r\nHost: x\r\n" {
        try { slow.write(ch) } catch e { return }
        sleep(40)
    }
}()
let quiet = net.connect(addr)
quiet.write("GET /hello HTTP/1.1\r\nHost: x\r\n")
let gone = net.connect(addr)
gone.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
gone.close()
let served = 0
for i in 0..5 {
    if http.get(base + "/hello", {keep_alive: false}).text() == "hello GET" { served += 1 }
    sleep(20)
}
print("served while slow clients wait:", served)
print("quiet one closed:", quiet.read() == nil)
dribble.cancel()
print("slow one closed:", slow.read_text() == "")
slow.close()
quiet.close()
sleep(100)
print(fds() - before)
"#,
    );
    assert_eq!(out, "served while slow clients wait: 5\nquiet one closed: true\nslow one closed: true\n0\n");
}

/// A slowloris after one good request on a kept-alive connection is cut at
/// the head timeout, counted from its next request's first byte, not after
/// the idle timeout; an idle kept-alive connection waits the idle timeout.
#[test]
fn slowloris_after_a_kept_alive_request_meets_the_head_timeout() {
    let out = ok(
        "{head_timeout: 300, idle_timeout: 5000}",
        r#"
let c = net.connect(addr)
c.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
let head = c.read_line()
while c.read_line() != "" {}
print(head, c.read_exact(9).decode())
let began = now()
let dribble = go fn() {
    for ch in "GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(100) {
        try { c.write(ch) } catch e { return }
        sleep(50)
    }
}()
// Cut: the end of the stream, or a reset when the server closed with the
// dribbled bytes unread (the kernel then answers with RST).
let cut = false
try { cut = c.read() == nil } catch e { cut = e.kind == "io" }
let took = now() - began
dribble.cancel()
print("cut:", cut, took > 250, took < 3000)
let idle = net.connect(addr)
idle.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
idle.read_line()
sleep(700)
idle.write("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
print("idle one still served:", "hello GET" in idle.read_text())
"#,
    );
    assert_eq!(out, "HTTP/1.1 200 OK hello GET\ncut: true true true\nidle one still served: true\n");
}

/// A body sent a byte at a time is cut at `body_timeout`, counted from the
/// head's end, whether the handler reads it (`/upload`) or the server drains
/// it after the response (`/hello`); a body that comes in time is served.
#[test]
fn a_slow_body_meets_the_body_timeout() {
    let out = ok(
        "{head_timeout: 5000, idle_timeout: 5000, body_timeout: 400}",
        r#"
fn dribbled(path) {
    let c = net.connect(addr)
    c.write("POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
    let began = now()
    let dribble = go fn() {
        for i in 0..1000 {
            try { c.write("a") } catch e { return }
            sleep(50)
        }
    }()
    // Read to the end (the drained one first gets its response).
    let cut = false
    try { c.read_text(); cut = true } catch e { cut = e.kind == "io" }
    let took = now() - began
    dribble.cancel()
    c.close()
    return [cut, took > 300, took < 3000]
}
print("handler reading:", dribbled("/upload"))
print("server draining:", dribbled("/hello"))
print(http.post(base + "/upload", "x".repeat(5000)).text())
"#,
    );
    assert_eq!(out, "handler reading: [true, true, true]\nserver draining: [true, true, true]\ngot 5000 bytes\n");
}

/// Cancelling the serving fiber stops accepting at once, closes idle
/// connections, and lets a request in flight finish.
#[test]
fn graceful_shutdown() {
    let out = ok(
        "{grace: 2000}",
        r#"
let idle = net.connect(addr)
let inflight = go fn() { return http.get(base + "/slow", {keep_alive: false}).text() }()
sleep(100)
srv.cancel()
sleep(50)
try { net.connect(addr) } catch e { print("new connections refused:", e.kind) }
print("idle connection closed:", idle.read() == nil)
print("in flight finished:", wait inflight)
"#,
    );
    assert_eq!(out, "new connections refused: io\nidle connection closed: true\nin flight finished: slow\n");
}

/// A thousand clients at once, each request answered exactly once.
#[test]
fn a_thousand_concurrent_clients() {
    let out = ok(
        "{}",
        r#"
let got = {}
wait {
    for i in 0..1000 {
        go fn() {
            let r = http.get(base + "/json?n=${i}", {keep_alive: false})
            let n = r.json().q.n
            got[n] = (got[n] == nil ? 0 : got[n]) + 1
        }()
    }
}
let once = 0
for k, v in got { if v == 1 { once += 1 } }
print(len(got), once)
"#,
    );
    assert_eq!(out, "1000 1000\n");
}

/// A pooled connection that the server closed while it sat idle is noticed
/// when reused, and the request goes out again on a new connection.
#[test]
fn pooled_connection_closed_by_the_server_is_retried() {
    let out = ok(
        "{idle_timeout: 100}",
        r#"
print(http.get(base + "/hello").text(), len(http.pool[base]))
sleep(400)
print(http.post(base + "/echo", "again").text(), len(seen))
"#,
    );
    assert_eq!(out, "hello GET 1\nagain 2\n");
}

/// Out of descriptors, the server backs off and goes on accepting (as Go's
/// does on EMFILE): a normal client queued behind 60 idle connections to a
/// server limited to 32 descriptors is served once they close, not dropped.
#[test]
fn a_server_out_of_descriptors_serves_a_client_once_others_close() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    let script = common::Script::new(
        "emfile.csp",
        r#"
import "std/http"
import "std/net"
let l = net.listen("127.0.0.1:0")
print(l.addr())
http.serve(l, fn(req) { return "served" })
"#,
    );
    let mut server = std::process::Command::new("sh")
        .args(["-c", &format!("ulimit -n 32; exec {} run {}", env!("CARGO_BIN_EXE_csp"), script.path())])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(server.stdout.take().unwrap());
    let mut addr = String::new();
    out.read_line(&mut addr).unwrap();
    let addr = addr.trim().to_string();
    let hogs: Vec<TcpStream> = (0..60).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let client = std::thread::spawn({
        let addr = addr.clone();
        move || {
            let mut c = TcpStream::connect(&addr).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
            let mut reply = String::new();
            c.read_to_string(&mut reply).unwrap();
            reply
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let closed = Instant::now();
    drop(hogs);
    let reply = client.join().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(reply.starts_with("HTTP/1.1 200") && reply.ends_with("served"), "{reply:?}");
    assert!(closed.elapsed() < Duration::from_secs(5), "served {:?} after the others closed", closed.elapsed());
}
