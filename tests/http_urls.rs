//! std/http's URLs through std/url, on loopback with the real `csp` binary:
//! relative redirects resolved as RFC 3986 says, credentials dropped on a
//! redirect to another host, the client's request targets, and the server's
//! parsing of absolute-form targets.

mod common;

fn run(src: &str) -> String {
    let (code, out, err) = common::run_sh("http_urls", "", src);
    assert_eq!(code, 0, "exit {code}\nstdout:\n{out}\nstderr:\n{err}");
    out
}

/// A chain of redirects whose `Location`s are relative references of every
/// kind; the server records the target of each request it gets.
#[test]
fn relative_redirects_resolve_against_the_current_url() {
    let out = run(r#"
import "std/http"
import "std/net"
let l = net.listen("127.0.0.1:0")
let hops = []
let srv = go http.serve(l, fn(req) {
    hops.push(req.target)
    let host = req.headers.host
    let to = {
        "/docs/guide/start": "next",
        "/docs/guide/next": "../a",
        "/docs/a": "/abs/x?drop=me",
        "/abs/x?drop=me": "//${host}/scheme-relative",
        "/scheme-relative": "?q=1",
        "/scheme-relative?q=1": "../../../up/./here#frag",
        "/up/here": "g;x=1/../y",
        "/up/g;x=1/../y": "",
    }[req.target]
    if to != nil { return {status: 302, headers: {location: to}} }
    return "at ${req.target}"
})
let base = "http://${l.addr()}"
let r = http.get(base + "/docs/guide/start")
print(r.status, r.text(), r.url == base + "/up/y")
for h in hops { print(h) }
// A POST answered with a relative 302 turns into a GET of the resolved URL.
hops.clear()
r = http.post(base + "/docs/guide/next", "body")
print(r.status, r.text(), hops)
// follow: false hands back the Location as sent.
print(http.get(base + "/docs/guide/start", {follow: false}).headers.location)
srv.cancel()
"#);
    assert_eq!(
        out,
        "200 at /up/y true\n\
         /docs/guide/start\n\
         /docs/guide/next\n\
         /docs/a\n\
         /abs/x?drop=me\n\
         /scheme-relative\n\
         /scheme-relative?q=1\n\
         /up/here\n\
         /up/y\n\
         200 at /up/y [\"/docs/guide/next\", \"/docs/a\", \"/abs/x?drop=me\", \"/scheme-relative\", \"/scheme-relative?q=1\", \"/up/here\", \"/up/y\"]\n\
         next\n"
    );
}

/// `Authorization` and `Cookie` follow a redirect to the same host or a
/// subdomain, not to another host (127.0.0.2 is loopback too on Linux).
#[test]
fn credentials_stay_with_their_host_across_redirects() {
    let out = run(r#"
import "std/http"
import "std/net"
let other = net.listen("127.0.0.2:0")
let l = net.listen("127.0.0.1:0")
fn show(req) { return "${req.headers.host.split(":")[0]} auth=${req.headers.authorization} cookie=${req.headers.cookie} x=${req.headers["x-keep"]}" }
let s1 = go http.serve(other, show)
let s2 = go http.serve(l, fn(req) {
    if req.path == "/away" { return {status: 307, headers: {location: "http://${other.addr()}/there"}} }
    if req.path == "/stay" { return {status: 307, headers: {location: "/here"}} }
    return show(req)
})
let h = {headers: {Authorization: "Bearer secret", Cookie: "s=1", "X-Keep": "yes"}}
print(http.get("http://${l.addr()}/stay", h).text())
print(http.get("http://${l.addr()}/away", h).text())
s1.cancel()
s2.cancel()
"#);
    assert_eq!(
        out,
        "127.0.0.1 auth=Bearer secret cookie=s=1 x=yes\n\
         127.0.0.2 auth=nil cookie=nil x=yes\n"
    );
}

/// A `Location` that is not a URL at all is an error of the request, and
/// one naming another scheme is refused.
#[test]
fn bad_locations_fail_the_request() {
    let out = run(r#"
import "std/http"
import "std/net"
let l = net.listen("127.0.0.1:0")
let srv = go http.serve(l, fn(req) {
    if req.path == "/bad" { return {status: 302, headers: {location: "http://[::1"}} }
    return {status: 302, headers: {location: "ftp://files/x"}}
})
try { http.get("http://${l.addr()}/bad") } catch e { print(e.kind, e.message.contains("cannot resolve")) }
try { http.get("http://${l.addr()}/ftp") } catch e { print(e.message) }
srv.cancel()
"#);
    assert_eq!(out, "value true\nunsupported URL scheme ftp in ftp://files/x\n");
}

/// What the client sends as the target: no fragment, characters a path may
/// not hold percent-encoded, dot segments resolved, the query kept as is.
#[test]
fn client_request_targets() {
    let out = run(r#"
import "std/http"
import "std/net"
let l = net.listen("127.0.0.1:0")
let srv = go http.serve(l, fn(req) => "${req.target} ${req.headers.host == l.addr()}")
let base = "http://${l.addr()}"
print(http.get(base + "/a b/./c/../d?x=1&y=%20z#frag").text())
print(http.get(base + "?only=query").text())
print(http.get("HTTP://" + l.addr()).text())
try { http.get("http://") } catch e { print(e.kind, e.message) }
try { http.get("no-scheme/x") } catch e { print(e.kind, e.message) }
srv.cancel()
"#);
    assert_eq!(
        out,
        "/a%20b/d?x=1&y=%20z true\n\
         /?only=query true\n\
         / true\n\
         value url.parse(): bad URL \"http://\": empty host\n\
         value url.parse(): bad URL \"no-scheme/x\": relative URL without a base\n"
    );
}

/// Targets in the absolute form (`GET http://host/p HTTP/1.1`, what proxies
/// get) are parsed: path and query as for `/p?q`, and the target's host
/// replaces `Host` (RFC 9112 3.2.2); a target that is neither form gets 400.
#[test]
fn server_parses_absolute_form_targets() {
    let out = run(r#"
import "std/http"
import "std/net"
let l = net.listen("127.0.0.1:0")
let srv = go http.serve(l, fn(req) => json_encode([req.target, req.path, req.query, req.headers.host]))
fn raw(text) {
    let c = net.connect(l.addr())
    c.write(text)
    let reply = c.read_text().split("\r\n")
    c.close()
    return "${reply[0]} ${reply[-1].trim()}"
}
print(raw("GET http://evil/hello HTTP/1.1\r\nHost: good\r\nConnection: close\r\n\r\n"))
print(raw("GET HTTP://Evil.Example:8080/a/../b%20c?x=1&y#f HTTP/1.1\r\nHost: good\r\nConnection: close\r\n\r\n"))
print(raw("GET https://evil HTTP/1.1\r\nHost: good\r\nConnection: close\r\n\r\n"))
print(raw("GET http://evil/x HTTP/1.0\r\n\r\n"))
print(raw("GET /plain/../x?q HTTP/1.1\r\nHost: good\r\nConnection: close\r\n\r\n"))
print(raw("OPTIONS * HTTP/1.1\r\nHost: good\r\nConnection: close\r\n\r\n"))
print(raw("GET hello HTTP/1.1\r\nHost: good\r\n\r\n"))
print(raw("GET ftp://evil/x HTTP/1.1\r\nHost: good\r\n\r\n"))
print(raw("GET http://[::1/x HTTP/1.1\r\nHost: good\r\n\r\n"))
srv.cancel()
"#);
    assert_eq!(
        out,
        "HTTP/1.1 200 OK [\"http://evil/hello\",\"/hello\",\"\",\"evil\"]\n\
         HTTP/1.1 200 OK [\"HTTP://Evil.Example:8080/a/../b%20c?x=1&y#f\",\"/b%20c\",\"x=1&y\",\"evil.example:8080\"]\n\
         HTTP/1.1 200 OK [\"https://evil\",\"/\",\"\",\"evil\"]\n\
         HTTP/1.1 200 OK [\"http://evil/x\",\"/x\",\"\",\"evil\"]\n\
         HTTP/1.1 200 OK [\"/plain/../x?q\",\"/plain/../x\",\"q\",\"good\"]\n\
         HTTP/1.1 200 OK [\"*\",\"*\",\"\",\"good\"]\n\
         HTTP/1.1 400 Bad Request bad request target \"hello\"\n\
         HTTP/1.1 400 Bad Request bad request target \"ftp://evil/x\"\n\
         HTTP/1.1 400 Bad Request bad request target \"http://[::1/x\"\n"
    );
}
