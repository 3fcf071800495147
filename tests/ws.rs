//! std/ws against an independent peer: Python's `websockets` package (PyPI,
//! 13 or later), both ways: csp's client talking to a Python server, and a
//! Python client talking to csp's server (std/http upgraded). Text, binary,
//! fragments, ping/pong, close codes and reasons, the size limit (1009), text
//! that is not UTF-8 (1007) and reserved bits (1002).
//!
//! Everything runs on 127.0.0.1 with ephemeral ports; the csp side runs under
//! `timeout -s KILL 60` and the Python side under asyncio timeouts, so a hang
//! fails the test. Without python3 or its `websockets` package a test says
//! what it skipped and passes, unless `CI` is set: then it fails (`.ci/run`
//! installs the package with pip).

mod common;
use common::{ok_sh, Script};
use std::process::Command;

/// Whether Python's `websockets` (with its asyncio API, version 13 or later) is there.
fn have_websockets(what: &str) -> bool {
    let found = Command::new("python3")
        .args(["-c", "import websockets.asyncio.client, websockets.asyncio.server"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return true;
    }
    let install = "python3 -m pip install 'websockets>=13'";
    if std::env::var_os("CI").is_some() {
        panic!("Python's websockets package is missing but CI is set, so {what} cannot be skipped: {install}");
    }
    eprintln!("skipped {what}: Python's websockets package not found; {install}");
    false
}

/// A Python WebSocket server: prints its port, serves for at most 30 s.
/// Text is echoed with "py: " before it, binary reversed; a few messages are
/// commands (close with a code, ping the client, send fragments, send a
/// message too big for the csp client).
const PY_SERVER: &str = r#"
import asyncio, sys
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

async def handler(ws):
    try:
        async for m in ws:
            if m == "close-me":
                await ws.close(4001, "bye from python")
                break
            if m == "ping-me":
                await asyncio.wait_for(await ws.ping(b"py"), 10)
                await ws.send("ponged")
            elif m == "frag-me":
                await ws.send(["fr", "ag", "ment", "é"])
            elif m == "big-one":
                await ws.send(b"z" * 5000)
            elif isinstance(m, str):
                await ws.send("py: " + m)
            else:
                await ws.send(bytes(reversed(m)))
    except ConnectionClosed:
        pass
    # What the handshake ended with, for the csp side to print.
    print("server saw", ws.close_code, ws.close_reason, flush=True)

async def main():
    async with serve(handler, "127.0.0.1", 0, max_size=1000) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.sleep(30)

asyncio.run(main())
"#;

#[test]
fn csp_client_talks_to_a_python_server() {
    if !have_websockets("the csp client / Python server test") {
        return;
    }
    let py = Script::new("ws_server.py", PY_SERVER);
    let src = format!(
        r#"
import "std/ws"
import "std/proc"
let p = proc.spawn(["python3", "{py}"])
let port = p.stdout.read_line()
let url = "ws://127.0.0.1:${{port}}/chat?room=1"
// Fragments of 3 bytes on the way out: Python joins them (the é too).
let c = ws.connect(url, {{fragment: 3, max_message: 2000}})
c.send("hello wörld ✓")
print(c.recv())
c.send(bytes([1, 2, 3, 4, 5]))
print(c.recv())
c.send("frag-me")
print(c.recv())
// Python pings; csp answers while it reads.
c.send("ping-me")
print(c.recv())
// csp pings; the pong is read by the next recv.
let pc = c.ping()
c.send("after ping")
print(c.recv(), <-pc >= 0)
// The server closes with a code and reason: recv gives nil.
c.send("close-me")
print(c.recv(), c.close_code, c.close_reason, c.recv())
print(p.stdout.read_line())
try {{ c.send("late") }} catch e {{ print(e.kind) }}

// csp closes: Python sees the code and reason.
let c2 = ws.connect(url)
c2.send("a")
print(c2.recv())
c2.close(4000, "csp is done")
print(c2.close_code, p.stdout.read_line())

// A message over Python's max_size (1000 bytes): Python fails the connection with 1009.
let c3 = ws.connect(url)
c3.send("x" * 1001)
print(c3.recv(), c3.close_code)
// (Python closes the socket after its close frame without reading csp's answer: it saw 1006.)
print(p.stdout.read_line().starts_with("server saw"))

// A message over csp's max_message: a limit error, and Python sees 1009.
let c4 = ws.connect(url, {{max_message: 4000}})
c4.send("big-one")
try {{ c4.recv() }} catch e {{ print(e.kind, e.message) }}
print(c4.close_code, p.stdout.read_line())
p.kill()
"#,
        py = py.path()
    );
    let out = ok_sh("ws_client_python", "", &src);
    assert_eq!(
        out,
        "py: hello wörld ✓\n\
         b\"\\x05\\x04\\x03\\x02\\x01\"\n\
         fragmenté\n\
         ponged\n\
         py: after ping true\n\
         nil 4001 bye from python nil\n\
         server saw 4001 \n\
         closed\n\
         py: a\n\
         4000 server saw 4000 csp is done\n\
         nil 1009\n\
         true\n\
         limit ws: a message longer than 4000 bytes (the max_message option) (closed with 1009)\n\
         1009 server saw 1009 a message longer than 4000 bytes (the max_message option)\n"
    );
}

/// A Python client: each block one connection; prints what it got.
const PY_CLIENT: &str = r#"
import asyncio, sys
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

async def raw(ws, frame):
    # A frame the library would not send itself, written as it is (masked
    # with a zero key, so the payload goes as it is).
    ws.transport.write(frame)
    try:
        await ws.recv()
        print("no close")
    except ConnectionClosed as e:
        print("closed by csp", e.rcvd.code, e.rcvd.reason)

async def main(url):
    async with connect(url + "/echo?x=1", max_size=None) as ws:
        await ws.send("hello")
        print(await ws.recv())
        await ws.send(b"\x01\x02")
        print(await ws.recv())
        await ws.send(["fr", "ag", "ments ", "é"])
        print(await ws.recv())
        print("pong", await asyncio.wait_for(await ws.ping(b"hi"), 10) >= 0)
        await ws.send("big")
        m = await ws.recv()
        print(len(m), m == "x" * 100000)
        await ws.send("where")
        print(await ws.recv())
    print("client closed", ws.close_code, ws.close_reason)
    async with connect(url) as ws:
        await ws.send("bye")
        try:
            await ws.recv()
        except ConnectionClosed as e:
            print("server closed", e.rcvd.code, e.rcvd.reason)
    async with connect(url, max_size=None) as ws:
        await ws.send("y" * 70000)
        try:
            await ws.recv()
        except ConnectionClosed as e:
            print("too big", e.rcvd.code)
    async with connect(url) as ws:
        await raw(ws, b"\x81\x85\0\0\0\0ok \xff\xfe")
    async with connect(url) as ws:
        await raw(ws, b"\xa1\x81\0\0\0\0x")  # RSV2
    async with connect(url) as ws:
        await raw(ws, b"\x80\x81\0\0\0\0x")  # a continuation of nothing
    # Not a WebSocket request: 426.
    r, w = await asyncio.open_connection(*url[5:].split(":"))
    w.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    print((await r.readline()).decode().strip())

asyncio.run(asyncio.wait_for(main(sys.argv[1]), 30))
"#;

#[test]
fn python_client_talks_to_a_csp_server() {
    if !have_websockets("the Python client / csp server test") {
        return;
    }
    let py = Script::new("ws_client.py", PY_CLIENT);
    let src = format!(
        r#"
import "std/http"
import "std/net"
import "std/ws"
import "std/proc"

let l = net.listen("127.0.0.1:0")
let errors = []
let app = ws.handler(fn(conn) {{
    try {{
        serve(conn)
    }} catch e {{
        // The client's faults, which ws.handler would not report.
        errors.push("${{e.kind}}: ${{e.message}}")
    }}
}}, {{max_message: 65536, fragment: 1000}})
fn serve(conn) {{
    for m in conn.messages() {{
        if m == "big" {{
            conn.send("x" * 100000)
        }} else if m == "bye" {{
            conn.close(4002, "server says bye")
        }} else if m == "where" {{
            conn.send("${{conn.path}} ${{conn.query}}")
        }} else {{
            conn.send(type(m) == "string" ? "echo: " + m : m)
        }}
    }}
}}
let server = go http.serve(l, app)
print(proc.output(["python3", "{py}", "ws://${{l.addr()}}"]))
for e in errors {{ print(e) }}
server.cancel()
"#,
        py = py.path()
    );
    let out = ok_sh("ws_server_python", "", &src);
    assert_eq!(
        out,
        "echo: hello\n\
         b'\\x01\\x02'\n\
         echo: fragments é\n\
         pong True\n\
         100000 True\n\
         /echo x=1\n\
         client closed 1000 \n\
         server closed 4002 server says bye\n\
         too big 1009\n\
         closed by csp 1007 a text message that is not UTF-8 (invalid UTF-8 at byte offset 3 (0xff))\n\
         closed by csp 1002 a frame with reserved bits set (no extension was agreed)\n\
         closed by csp 1002 a continuation frame with no message to continue\n\
         HTTP/1.1 426 Upgrade Required\n\
         \n\
         limit: ws: a message longer than 65536 bytes (the max_message option) (closed with 1009)\n\
         value: ws: a text message that is not UTF-8 (invalid UTF-8 at byte offset 3 (0xff)) (closed with 1007)\n\
         protocol: ws: a frame with reserved bits set (no extension was agreed) (closed with 1002)\n\
         protocol: ws: a continuation frame with no message to continue (closed with 1002)\n"
    );
}

/// A CA and a certificate for 127.0.0.1 issued by it, made by rcgen: the
/// directory holding `ca.pem`, `cert.pem` and `key.pem`.
fn certs(tag: &str) -> std::path::PathBuf {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let dir = std::env::temp_dir().join(format!("csp_ws_{tag}_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, "csp ws test CA");
    let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    std::fs::write(dir.join("ca.pem"), issuer.pem()).unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    dir
}

/// wss:// both ways: csp's server over TLS (http.serve's `tls`) with a Python
/// client, and csp's client against a Python server over TLS.
#[test]
fn wss_works_both_ways_with_python() {
    if !have_websockets("the wss test") {
        return;
    }
    let dir = certs("wss");
    let d = dir.display();
    let py = Script::new(
        "wss.py",
        r#"
import asyncio, ssl, sys
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

d = sys.argv[1]

async def echo(ws):
    async for m in ws:
        await ws.send("py tls: " + m)

async def main():
    if sys.argv[2] == "client":
        ctx = ssl.create_default_context(cafile=d + "/ca.pem")
        async with connect(sys.argv[3], ssl=ctx) as ws:
            await ws.send("over tls")
            print(await ws.recv())
        print("closed", ws.close_code)
        return
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d + "/cert.pem", d + "/key.pem")
    async with serve(echo, "127.0.0.1", 0, ssl=ctx) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.sleep(30)

asyncio.run(asyncio.wait_for(main(), 40))
"#,
    );
    let src = format!(
        r#"
import "std/http"
import "std/net"
import "std/ws"
import "std/proc"
let d = "{d}"
let l = net.listen("127.0.0.1:0")
let server = go http.serve(l, ws.handler(fn(conn) {{
    for m in conn.messages() {{ conn.send("csp tls: " + m) }}
}}), {{tls: {{cert: d + "/cert.pem", key: d + "/key.pem"}}}})
// A Python client to csp's wss server.
print(proc.output(["python3", "{py}", d, "client", "wss://127.0.0.1:${{l.addr().split(":")[1]}}/"]))
// csp's client to it too, trusting the test CA.
let c = ws.connect("wss://${{l.addr()}}/", {{ca: d + "/ca.pem"}})
c.send("me too")
print(c.recv())
c.close()
// And to a Python wss server.
let p = proc.spawn(["python3", "{py}", d, "server"])
let port = p.stdout.read_line()
let c2 = ws.connect("wss://127.0.0.1:${{port}}/", {{ca: d + "/ca.pem"}})
c2.send("hello")
print(c2.recv())
c2.close()
print(c2.close_code)
// Not trusting the CA: the handshake fails before any WebSocket.
try {{ ws.connect("wss://127.0.0.1:${{port}}/") }} catch e {{ print(e.kind) }}
p.kill()
server.cancel()
"#,
        py = py.path()
    );
    let out = ok_sh("ws_wss", "", &src);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out, "csp tls: over tls\nclosed 1000\n\ncsp tls: me too\npy tls: hello\n1000\nio\n");
}
