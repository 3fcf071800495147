//! TCP on loopback through the real `csp` binary: an echo server in fibers,
//! hundreds of concurrent clients, refused connections, half-close, addresses,
//! bytes, and cancellation of a fiber blocked in accept or read (no descriptor
//! left behind).

mod common;

/// `src` after a prelude with an echo server on a free port (`l`, `addr`)
/// and `fds()`, run to exit 0; its stdout.
fn ok(src: &str) -> String {
    let prelude = r#"
import "std/net"
let l = net.listen("127.0.0.1:0")
let addr = l.addr()
let server = go fn() {
    while true {
        let c = l.accept()
        go fn() {
            for line in c { c.write("echo: ${line}\n") }
            c.close()
        }()
    }
}()
"#;
    common::ok("net", &format!("{}{prelude}{src}\nserver.cancel()\n", common::FDS))
}

#[test]
fn echo_half_close_and_addresses() {
    let out = ok(r#"
let c = net.connect(addr)
c.write("hello\n")
c.write("world\n".encode())
print(c.read_line(), c.read_line())
print(c.peer_addr() == addr, c.local_addr() != addr)
c.set_nodelay(true)
c.shutdown()
print(c.read_line())
c.close()
"#);
    assert_eq!(out, "echo: hello echo: world\ntrue true\nnil\n");
}

#[test]
fn many_clients_at_once() {
    let out = ok(r#"
let before = fds()
let got = []
wait {
    for i in 0..300 {
        go fn() {
            let k = net.connect(addr)
            k.write("n${i}\n")
            got.push(k.read_line())
            k.close()
        }()
    }
}
got.sort()
print(len(got), got[0], got[299])
sleep(50)
print(fds() - before <= 0)
"#);
    assert_eq!(out, "300 echo: n0 echo: n99\ntrue\n");
}

#[test]
fn errors_are_io_errors() {
    let out = ok(r#"
try { net.connect("127.0.0.1:1") } catch e { print(e.kind, e.message) }
try { net.connect("127.0.0.1") } catch e { print(e.kind) }
try { net.listen(addr) } catch e { print(e.kind, e.message.contains("Address already in use")) }
try { net.connect(42) } catch e { print(e.kind) }
"#);
    assert_eq!(out, "io cannot connect to 127.0.0.1:1: Connection refused\nvalue\nio true\ntype\n");
}

/// Cancelling fibers blocked in accept and in a read ends their waits; closing
/// the listener and connections leaves no descriptor behind.
#[test]
fn cancellation_mid_accept_and_mid_read() {
    let out = ok(r#"
let before = fds()
let l2 = net.listen("127.0.0.1:0")
let waiting = go fn() { l2.accept() }()
let conn = net.connect(addr)
let reading = go fn() { conn.read_line() }()
sleep(50)
waiting.cancel()
reading.cancel()
for t in [waiting, reading] { try { wait t } catch e { print(e.kind) } }
l2.close()
conn.close()
sleep(50)
print(fds() - before)
"#);
    assert_eq!(out, "cancelled\ncancelled\n0\n");
}

#[test]
fn udp_datagrams() {
    let out = ok(r#"
let a = net.udp("127.0.0.1:0")
let b = net.udp("127.0.0.1:0")
let got = go fn() {
    let m = a.recv()
    a.send(m.data + " back".encode(), m.from)
    return m.data.decode()
}()
b.send("ping", a.addr())
let reply = b.recv()
print(wait got, reply.data.decode(), reply.from == a.addr())
print(net.resolve("localhost:80").len() > 0)
let waiting = go fn() { b.recv() }()
sleep(20)
waiting.cancel()
try { wait waiting } catch e { print(e.kind) }
try { a.send("x", "nohost:1") } catch e { print(e.kind) }
a.close()
b.close()
try { a.recv() } catch e { print(e.kind, e.message.ends_with("is closed")) }
"#);
    assert_eq!(out, "ping ping back true\ntrue\ncancelled\nvalue\nio true\n");
}

#[test]
fn read_exactly_n_bytes() {
    let out = ok(r#"
let c = net.connect(addr)
c.write("abcdef\n")
print(c.read_exact(5), c.read_exact(3))
c.shutdown()
try { c.read_exact(100) } catch e { print(e.kind, e.message.ends_with("ended after 5 of the 100 bytes asked for")) }
// What was there stays to be read.
print(c.read_exact(1), c.read())
print(c.read_exact(1))
"#);
    assert_eq!(out, "b\"echo:\" b\" ab\"\nio true\nb\"c\" b\"def\\n\"\nnil\n");
}

/// A deadline is async.timeout around the operation (the connection stays
/// usable); `select` over a socket goes through a reader fiber and a channel.
#[test]
fn deadlines_and_select() {
    let out = ok(r#"
import "std/async"
let l3 = net.listen("127.0.0.1:0")
go fn() { let s = l3.accept(); sleep(200); s.write("late\n"); sleep(100); s.close() }()
let c = net.connect(l3.addr())
try { async.timeout(50, fn() => c.read_line()) } catch e { print(e.kind) }
print(c.read_line())
let lines = chan(16)
go fn() { for line in c { lines <- line } close(lines) }()
select {
    case line, ok = <-lines { print("line", line, ok) }
    case <-after(30) { print("idle") }
}
let _, ok = <-lines
print(ok)
l3.close()
"#);
    assert_eq!(out, "timeout\nlate\nidle\nfalse\n");
}
