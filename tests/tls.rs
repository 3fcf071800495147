//! TLS on loopback through the real `csp` binary, with a CA and a server
//! certificate for localhost/127.0.0.1 made by rcgen in a temporary directory:
//! lines and megabytes both ways at once, untrusted issuers and wrong names,
//! bad PEM files, STARTTLS, and cancellation mid-handshake, mid-read and
//! mid-write (no descriptor left behind).

mod common;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use std::path::PathBuf;

/// A directory with `ca.pem`, `cert.pem` and `key.pem` (the server's, issued
/// by that CA for localhost and 127.0.0.1) and `other_ca.pem` (an unrelated CA).
struct Certs(PathBuf);

impl Certs {
    fn new(tag: &str) -> Certs {
        let dir = std::env::temp_dir().join(format!("csp_tls_{tag}_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = |name: &str| {
            let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(rcgen::DnType::CommonName, name);
            CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
        };
        let issuer = ca("csp test CA");
        let key = KeyPair::generate().unwrap();
        let params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap();
        let write = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
        write("ca.pem", issuer.pem());
        write("cert.pem", cert.pem());
        write("key.pem", key.serialize_pem());
        write("other_ca.pem", ca("someone else").pem());
        Certs(dir)
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `src` after a prelude with a TLS server on a free port (`l`, `addr`), its
/// handshake and read failures on the channel `failures`, `dir` (the
/// certificates), `trusted` (client options) and `fds()`, run to exit 0.
/// A connection's first line picks what the server does: "echo" echoes
/// lines, "stream" echoes bytes as they come until the client's end.
fn ok(tag: &str, src: &str) -> String {
    ok_with(&Certs::new(tag), src)
}

fn ok_with(certs: &Certs, src: &str) -> String {
    let prelude = r#"
import "std/net"
let failures = chan(16)
let l = net.listen("127.0.0.1:0", {tls: {cert: dir + "/cert.pem", key: dir + "/key.pem"}})
let addr = l.addr()
let trusted = {tls: {ca: dir + "/ca.pem"}}
let server = go fn() {
    while true {
        let c = l.accept()
        go fn() {
            try {
                if c.read_line() == "stream" {
                    while true {
                        let chunk = c.read(65536)
                        if chunk == nil { break }
                        c.write(chunk)
                    }
                } else {
                    for line in c { c.write("echo: ${line}\n") }
                }
            } catch e {
                failures <- e.message
            }
            c.close()
        }()
    }
}()
"#;
    let dir = format!("let dir = {:?}\n", certs.0.to_str().unwrap());
    common::ok("tls", &format!("{}{dir}{prelude}{src}\nserver.cancel()\n", common::FDS))
}

#[test]
fn lines_and_megabytes_both_ways() {
    let out = ok(
        "echo",
        r#"
// A client that never starts its handshake holds up no one (the server's
// handshake runs in the connection's fiber, on its first read).
let idle = net.connect(addr)
let c = net.connect(addr, trusted)
c.write("echo\nhello\n")
c.write("world\n".encode())
print(c.read_line(), c.read_line())
print(c.peer_addr() == addr, c.local_addr() != addr)
c.set_nodelay(true)
c.shutdown()
print(c.read_line())
c.close()

// 5 MB each way at once: a writer fiber and a reader on one connection.
let payload = "0123456789abcdef".repeat(320000).encode()
let s = net.connect("localhost:" + addr.split(":")[1], {tls: {ca: dir + "/ca.pem"}})
s.write("stream\n")
let writer = go fn() { s.write(payload); s.write(payload); s.shutdown() }()
let got = s.read()
wait writer
print(len(got), got == payload + payload)
s.close()
idle.close()
print(<-failures)
"#,
    );
    let idle = "TLS handshake with 127.0.0.1:";
    assert!(out.starts_with("echo: hello echo: world\ntrue true\nnil\n10240000 true\n"), "{out}");
    assert!(out.contains(idle) && out.ends_with("failed: the connection was closed\n"), "{out}");
}

#[test]
fn untrusted_or_misnamed_certificates_fail_the_handshake() {
    let out = ok(
        "trust",
        r#"
fn fails(opts) {
    try { net.connect(addr, opts); print("connected") } catch e { print(e.kind, e.message.replace(addr, "ADDR")) }
}
fails({tls: {ca: dir + "/other_ca.pem"}})
print(<-failures)
fails({tls: {ca: dir + "/ca.pem", server_name: "example.com"}})
<-failures
// The system's roots do not know the test CA.
try { net.connect(addr, {tls: true}) } catch e { print(e.kind, e.message.contains("UnknownIssuer") || e.message.contains("root certificates")) }
<-failures
// Plain TCP to the TLS server, TLS to a plain one.
let p = net.connect(addr)
p.write("hello\n")
print(<-failures)
p.close()
let plain = net.listen("127.0.0.1:0")
go fn() { let k = plain.accept(); k.write("220 hello\n"); sleep(1000) }()
try { net.connect(plain.addr(), trusted) } catch e { print(e.kind, e.message.replace(plain.addr(), "PLAIN")) }
"#,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "io TLS handshake with ADDR failed: invalid peer certificate: UnknownIssuer");
    assert!(
        lines[1].starts_with("TLS handshake with 127.0.0.1:") && lines[1].ends_with("received fatal alert: UnknownCA"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("io TLS handshake with ADDR failed: invalid peer certificate: ")
            && lines[2].contains("example.com"),
        "{out}"
    );
    assert_eq!(lines[3], "io true");
    assert!(
        lines[4].starts_with("TLS handshake with 127.0.0.1:") && lines[4].contains("failed: received corrupt message"),
        "{out}"
    );
    assert_eq!(lines[5], "io TLS handshake with PLAIN failed: received corrupt message of type InvalidContentType");
    assert_eq!(lines.len(), 6, "{out}");
}

#[test]
fn bad_options_and_pem_files() {
    let out = ok(
        "pem",
        r#"
try { net.connect(addr, {tls: {ca: dir + "/nope.pem"}}) } catch e { print(e.kind, e.message.replace(dir, "DIR")) }
try { net.connect(addr, {tls: {ca: dir + "/key.pem"}}) } catch e { print(e.kind, e.message.replace(dir, "DIR")) }
try { net.listen("127.0.0.1:0", {tls: {cert: dir + "/ca.pem", key: dir + "/ca.pem"}}) } catch e { print(e.kind, e.message.replace(dir, "DIR")) }
try { net.listen("127.0.0.1:0", {tls: {cert: dir + "/cert.pem"}}) } catch e { print(e.kind, e.message) }
try { net.connect(addr, {tls: 3}) } catch e { print(e.kind, e.message) }
try { net.connect(addr, {tls: {ca: dir + "/ca.pem", server_name: "bad name!"}}) } catch e { print(e.kind, e.message) }
"#,
    );
    assert_eq!(
        out,
        "io cannot read DIR/nope.pem: No such file or directory\n\
         io DIR/key.pem has no certificate (PEM \"CERTIFICATE\")\n\
         io DIR/ca.pem has no private key (PEM \"PRIVATE KEY\")\n\
         value listen() tls option needs {cert: path, key: path}\n\
         type connect() tls option needs true or {ca: path, server_name: name}, not int\n\
         value \"bad name!\" is not a valid TLS server name\n"
    );
}

/// STARTTLS: a plain connection upgraded on both ends with `net.tls`.
#[test]
fn starttls_upgrades_a_plain_connection() {
    let out = ok(
        "starttls",
        r#"
let plain = net.listen("127.0.0.1:0")
go fn() {
    let k = plain.accept()
    print("server got", k.read_line())
    k.write("OK\n")
    net.tls(k, {cert: dir + "/cert.pem", key: dir + "/key.pem"})
    for line in k { k.write("secret: ${line}\n") }
    k.close()
}()
let c = net.connect(plain.addr())
c.write("STARTTLS\n")
print(c.read_line())
net.tls(c, {ca: dir + "/ca.pem", server_name: "localhost"})
c.write("hi\n")
print(c.read_line())
c.close()
"#,
    );
    assert_eq!(out, "server got STARTTLS\nOK\nsecret: hi\n");
}

/// Cancelling a fiber blocked in a TLS handshake, read or write ends its wait;
/// closing leaves no descriptor behind, and the connection stays usable
/// after a cancelled read.
#[test]
fn cancellation_mid_handshake_read_and_write() {
    let out = ok(
        "cancel",
        r#"
import "std/async"
sleep(50)
let before = fds()
// A server that accepts and never answers: the handshake waits.
let mute = net.listen("127.0.0.1:0")
let held = chan(4)
go fn() { held <- mute.accept() }()
try { net.connect(mute.addr(), {tls: {ca: dir + "/ca.pem"}, timeout: 100}) } catch e { print(e.kind) }
let c = net.connect(addr, trusted)
c.write("echo\n")
let reading = go fn() { c.read_line() }()
sleep(50)
reading.cancel()
try { wait reading } catch e { print(e.kind) }
c.write("still\n")
print(c.read_line())
// A write the peer never reads: cancelled while the reactor drains it.
let quiet = net.listen("127.0.0.1:0", {tls: {cert: dir + "/cert.pem", key: dir + "/key.pem"}})
go fn() { let k = quiet.accept(); k.write("hi\n"); held <- k }()
let s = net.connect(quiet.addr(), trusted)
print(s.read_line())
let big = "x".repeat(8000000)
try { async.timeout(100, fn() => s.write(big)) } catch e { print(e.kind) }
s.close()
c.close()
(<-held).close()
(<-held).close()
mute.close()
quiet.close()
sleep(100)
print(fds() - before)
"#,
    );
    assert_eq!(out, "timeout\ncancelled\necho: still\nhi\ntimeout\n0\n");
}

/// A write cancelled half-way keeps the session intact: the rest of its
/// records go out before what is written next.
#[test]
fn a_cancelled_write_leaves_the_session_intact() {
    let out = ok(
        "rest",
        r#"
import "std/async"
let start = chan()
let slow = net.listen("127.0.0.1:0", {tls: {cert: dir + "/cert.pem", key: dir + "/key.pem"}})
let reader = go fn() {
    let k = slow.accept()
    k.write("hi\n")
    <-start
    let got = k.read_exact(8000000)
    let tail = k.read_line()
    k.close()
    return "${len(got)} ${tail}"
}()
let s = net.connect(slow.addr(), trusted)
print(s.read_line())
try { async.timeout(100, fn() => s.write("x".repeat(8000000))) } catch e { print(e.kind) }
start <- true
s.write("tail\n")
print(wait reader)
s.close()
slow.close()
"#,
    );
    assert_eq!(out, "hi\ntimeout\n8000000 tail\n");
}

/// The socket closed between records is the end of the stream (as Go and
/// browsers take it); closed in the middle of a record, an error. The server
/// here is rustls itself, cutting a record in half.
#[test]
fn a_record_cut_short_is_an_error() {
    use rustls::pki_types::pem::PemObject;
    use std::io::Write;
    let certs = Certs::new("cut");
    let chain = rustls::pki_types::CertificateDer::pem_file_iter(certs.0.join("cert.pem")).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::from_pem_file(certs.0.join("key.pem")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(rustls::crypto::ring::default_provider().into())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain.map(Result::unwrap).collect(), key)
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        for cut in [false, true] {
            let (sock, _) = listener.accept().unwrap();
            let conn = rustls::ServerConnection::new(std::sync::Arc::new(config.clone())).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, sock);
            tls.write_all(b"hello\n").unwrap();
            tls.conn.writer().write_all(b"the rest\n").unwrap();
            let mut record = Vec::new();
            tls.conn.write_tls(&mut record).unwrap();
            let end = if cut { record.len() / 2 } else { record.len() };
            tls.sock.write_all(&record[..end]).unwrap();
        }
    });
    let out = ok_with(
        &certs,
        &format!(
            r#"
for i in 0..2 {{
    let c = net.connect("{addr}", {{tls: {{ca: dir + "/ca.pem"}}}})
    print(c.read_line())
    try {{ print(c.read_line(), c.read_line()) }} catch e {{ print(e.kind, e.message) }}
    c.close()
}}
"#
        ),
    );
    server.join().unwrap();
    assert_eq!(
        out,
        format!("hello\nthe rest nil\nhello\nio connection to {addr} ended in the middle of a TLS record\n")
    );
}

/// HTTPS: std/http serving with the test certificate, and its client
/// trusting the test CA (keep-alive over TLS, a JSON round trip, a name that
/// the certificate does not cover).
#[test]
fn https_server_and_client() {
    let certs = Certs::new("https");
    let src = r#"
import "std/http"
import "std/net"
let tls = {cert: dir + "/cert.pem", key: dir + "/key.pem"}
let l = net.listen("127.0.0.1:0", {tls: tls})
let port = l.addr().split(":")[1]
let srv = go http.serve(l, fn(req) => http.json({path: req.path, body: req.text()}))
let opts = {ca: dir + "/ca.pem"}
for host in ["localhost", "127.0.0.1"] {
    let r = http.post("https://${host}:${port}/x", "hi", opts)
    print(r.status, r.json())
}
print(http.get("https://localhost:${port}/again", opts).json().path, http.pool.keys())
try { http.get("https://localhost:${port}/") } catch e { print(e.kind, "UnknownIssuer" in e.message) }
try { http.get("http://localhost:${port}/", {timeout: 2000}) } catch e { print(e.kind) }
srv.cancel()
"#;
    let dir = format!("let dir = {:?}\n", certs.0.to_str().unwrap());
    let out = common::ok("https", &format!("{dir}{src}"));
    let port = out.split("localhost:").nth(1).unwrap_or("").split(' ').next().unwrap_or("");
    assert_eq!(
        out.replace(port, "PORT").replace(certs.0.to_str().unwrap(), "DIR"),
        "200 {\"path\": \"/x\", \"body\": \"hi\"}\n200 {\"path\": \"/x\", \"body\": \"hi\"}\n/again [\"https://localhost:PORT ca=DIR/ca.pem\", \"https://127.0.0.1:PORT ca=DIR/ca.pem\"]\nio true\nio\n"
    );
}

/// `http.serve(listener, handler, {tls})` serves HTTPS on a plain listener
/// (the only way to serve on port 0), to csp's client and to curl, and never
/// plain HTTP; a listener that has TLS already refuses a second certificate.
#[test]
fn https_on_a_plain_listener() {
    let certs = Certs::new("https_listener");
    let curl = std::process::Command::new("curl").arg("--version").output().is_ok();
    if !curl {
        let install = "install curl (Debian: apt-get install curl)";
        assert!(std::env::var_os("CI").is_none(), "curl is missing but CI is set: {install}");
        eprintln!("https_on_a_plain_listener: curl not found, testing with csp's client only; {install}");
    }
    let src = r#"
import "std/http"
import "std/net"
import "std/proc"
let tls = {cert: dir + "/cert.pem", key: dir + "/key.pem"}
let l = net.listen("127.0.0.1:0")
let port = l.addr().split(":")[1]
let srv = go http.serve(l, fn(req) => "secure ${req.path}", {tls: tls, on_error: fn(e, req) {}})
let r = http.get("https://localhost:${port}/a", {ca: dir + "/ca.pem"})
print(r.status, r.text())
if curl {
    print(proc.output(["curl", "-sS", "--cacert", dir + "/ca.pem", "https://localhost:${port}/b"]))
    print(proc.run(["curl", "-sS", "--max-time", "2", "http://localhost:${port}/c"]).ok)
} else {
    print("secure /b")
    print(false)
}
try { http.get("http://localhost:${port}/d", {timeout: 2000}) } catch e { print(e.kind) }
srv.cancel()
let t = net.listen("127.0.0.1:0", {tls: tls})
try { http.serve(t, fn(req) => "x", {tls: tls}) } catch e { print(e.kind, e.message) }
"#;
    let dir = format!("let dir = {:?}\nlet curl = {curl}\n", certs.0.to_str().unwrap());
    let out = common::ok("https_listener", &format!("{dir}{src}"));
    assert_eq!(
        out,
        "200 secure /a\nsecure /b\nfalse\nio\nvalue the listener already serves TLS: give its certificate once, to net.listen or to http.serve\n"
    );
}
