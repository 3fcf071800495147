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
    common::ok_sh("net", "", &format!("{}{prelude}{src}\nserver.cancel()\n", common::FDS))
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

/// A line past the limit (64 KiB on a socket, or `read_line(max)`) is an io
/// error naming the stream, its bytes staying to be read; files have no limit.
#[test]
fn line_limits() {
    let out = ok(r#"
import "std/fs"
let l2 = net.listen("127.0.0.1:0")
let c = net.connect(l2.addr())
let s = l2.accept()
let peer = c.local_addr()
s.write("short\n")
print(s.peer_addr() == peer, c.read_line(5), "|")
s.write("x".repeat(20) + "\n")
try { c.read_line(10) } catch e { print(e.kind, e.message == "a line from connection to ${l2.addr()} is longer than 10 bytes") }
print(len(c.read_line()))
s.write("y".repeat(70000) + "\n")
try { c.read_line() } catch e { print(e.kind, e.message.ends_with("is longer than 65536 bytes")) }
print(len(c.read_line(100000)))
try { c.read_line(0) } catch e { print(e.kind) }
// A line of exactly the limit, its \r arriving before its \n.
s.write("abcde\r")
let t = go fn() { return c.read_line(5) }()
sleep(20)
s.write("\n")
print(wait t)
c.close()
s.close()
l2.close()
let path = "/tmp/csp_line_limit_${now()}"
fs.write(path, "z".repeat(100000) + "\n")
let f = fs.open(path)
print(len(f.read_line()))
f.close()
fs.remove(path)
"#);
    assert_eq!(out, "true short |\nio true\n20\nio true\n70000\nvalue\nabcde\n100000\n");
}

/// 1,000 clients at once against one server in the same process: every request
/// is answered exactly once, with its own reply.
#[test]
fn thousand_concurrent_clients() {
    let out = ok(r#"
let l2 = net.listen("127.0.0.1:0", {backlog: 1024})
let served = {}
let srv = go fn() {
    while true {
        let c = l2.accept()
        go fn() {
            try {
                let req = c.read_line()
                served[req] = served.get(req, 0) + 1
                c.write("re ${req}\n")
            } finally { c.close() }
        }()
    }
}()
let replies = {}
wait {
    for i in 0..1000 {
        go fn() {
            let k = net.connect(l2.addr())
            try {
                k.write("q${i}\n")
                let r = k.read_line()
                if r != "re q${i}" { print("wrong reply", i, r) }
                replies[r] = true
            } finally { k.close() }
        }()
    }
}
let twice = served.values().filter(fn(n) => n != 1)
print(len(replies), len(served), len(twice))
srv.cancel()
l2.close()
"#);
    assert_eq!(out, "1000 1000 0\n");
}

/// Out of descriptors (soft and hard limit 64): `fs.open`, `connect` and
/// `accept` fail with catchable io errors; a server loop that catches them
/// serves the waiting clients once descriptors are free again.
#[test]
fn too_many_open_files() {
    let src = r#"
import "std/net"
import "std/fs"
let l = net.listen("127.0.0.1:0")
let clients = []
for i in 0..5 { clients.push(net.connect(l.addr())) }
let files = []
while true {
    try { files.push(fs.open("/proc/self/stat")) } catch e {
        print(e.kind, e.message.ends_with("Too many open files"))
        break
    }
}
try { net.connect(l.addr()) } catch e { print(e.kind, e.message == "cannot connect to ${l.addr()}: Too many open files") }
let failures = 0
let srv = go fn() {
    while true {
        let c = nil
        try { c = l.accept() } catch e {
            if failures == 0 { print(e.kind, e.message == "cannot accept on ${l.addr()}: Too many open files") }
            failures += 1
            sleep(5)
            continue
        }
        go fn() { c.write("hi ${c.read_line()}\n"); c.close() }()
    }
}()
sleep(50)
for i in 0..8 { files.pop().close() }
for i in 0..5 {
    clients[i].write("${i}\n")
    print(clients[i].read_line())
}
print(failures > 0)
srv.cancel()
"#;
    let out = common::ok_sh("net", "ulimit -n 64;", src);
    assert_eq!(out, "io true\nio true\nio true\nhi 0\nhi 1\nhi 2\nhi 3\nhi 4\ntrue\n");
}

/// The soft descriptor limit is raised to the hard one at start-up.
#[test]
fn descriptor_limit_is_raised() {
    let src = r#"
import "std/fs"
for line in fs.read("/proc/self/limits").split("\n") {
    if line.starts_with("Max open files") {
        let f = line.split(" ").filter(fn(w) => w != "")
        print(f[3] == f[4] || f[4] == "unlimited", f[3] != "64")
    }
}
"#;
    let out = common::ok_sh("net", "ulimit -Sn 64;", src);
    assert_eq!(out, "true true\n");
}

/// A peer that closes with data unread sends a reset: a fiber blocked in a
/// read gets an io error; a fiber writing megabytes to a peer that closes gets
/// an io error (never a SIGPIPE death). No descriptor is left behind.
#[test]
fn reset_by_peer_and_closed_mid_write() {
    let out = ok(r#"
let before = fds()
let l2 = net.listen("127.0.0.1:0")
let c = net.connect(l2.addr())
let s = l2.accept()
c.write("unread\n")
sleep(20)
let reading = go fn() { c.read_line() }()
sleep(20)
s.close()
try { wait reading } catch e { print(e.kind, e.message == "cannot read connection to ${l2.addr()}: Connection reset by peer") }
c.close()

let c2 = net.connect(l2.addr())
let s2 = l2.accept()
let writing = go fn() { c2.write(bytes(50000000)) }()
print(s2.read(10).len())
s2.close()
try { wait writing } catch e { print(e.kind, e.message.starts_with("cannot write to connection to ${l2.addr()}: ")) }
c2.close()
l2.close()
sleep(20)
print(fds() - before)
"#);
    assert_eq!(out, "io true\n10\nio true\n0\n");
}

/// Cancelling a fiber blocked in a write (the peer never reads) or in a
/// connect (the listener's backlog of 1 is full and it never accepts) ends its
/// wait; no descriptor is left behind.
#[test]
fn cancellation_mid_write_and_mid_connect() {
    let out = ok(r#"
import "std/async"
let before = fds()
let l2 = net.listen("127.0.0.1:0", {backlog: 1})
let c = net.connect(l2.addr())
let s = l2.accept()
let writing = go fn() { c.write(bytes(50000000)) }()
sleep(50)
writing.cancel()
try { wait writing } catch e { print(e.kind) }
// The connection still works for what the kernel took.
print(s.read(3))
c.close()
s.close()

let queued = []
let hung = false
for i in 0..20 {
    try { queued.push(async.timeout(300, fn() => net.connect(l2.addr()))) } catch e {
        print(e.kind)
        hung = true
        break
    }
}
print(hung, len(queued) >= 1)
for q in queued { q.close() }
l2.close()
sleep(20)
print(fds() - before)
"#);
    assert_eq!(out, "cancelled\nb\"\\x00\\x00\\x00\"\ntimeout\ntrue true\n0\n");
}

/// A client that sends garbage (not text, an endless line) or disconnects in
/// the middle of a line costs the server only that connection.
#[test]
fn bad_clients_cost_only_their_connection() {
    let out = ok(r#"
let l2 = net.listen("127.0.0.1:0")
let errors = chan(10)
let srv = go fn() {
    while true {
        let c = l2.accept()
        go fn() {
            try {
                for line in c { c.write("ok ${line}\n") }
            } catch e { errors <- e.kind } finally { c.close() }
        }()
    }
}()
let a = net.connect(l2.addr())
a.write(bytes([0xff, 0xfe, 10]))
print(<-errors)
let b = net.connect(l2.addr())
b.write("z".repeat(70000))
print(<-errors)
let d = net.connect(l2.addr())
d.write("half a li")
d.close()
sleep(20)
let good = net.connect(l2.addr())
good.write("fine\n")
print(good.read_line())
for k in [a, b, good] { k.close() }
srv.cancel()
l2.close()
"#);
    assert_eq!(out, "value\nio\nok fine\n");
}

/// The reactor keeps a descriptor registered from its first wait until it
/// closes. Connections dropped without `close` are closed by the collector,
/// and the kernel hands their numbers to new connections: each must be
/// waited on afresh (a stale registration would leave a read hanging).
#[test]
fn descriptor_numbers_reused_after_collection() {
    let out = ok(r#"
for round in 0..40 {
    for i in 0..25 {
        let k = net.connect(addr)
        k.write("n${i}\n")
        if k.read_line() != "echo: n${i}" { print("wrong reply") }
    }
}
print("all answered")
"#);
    assert_eq!(out, "all answered\n");
}

/// A connection its client resets while it waits to be accepted is skipped:
/// `accept` returns the next one (docs/net.md). The reset is an abortive
/// close (SO_LINGER 0) from this test, before csp accepts anything.
#[test]
fn a_connection_reset_before_accept_is_skipped() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::AsRawFd;
    let script = common::Script::new(
        "reset.csp",
        r#"import "std/net"
let l = net.listen("127.0.0.1:0")
print(l.addr())
read_line()
let c = l.accept()
print(c.read_line())
"#,
    );
    let mut csp = std::process::Command::new(env!("CARGO_BIN_EXE_csp"))
        .args(["run", script.path()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(csp.stdout.take().unwrap());
    let mut addr = String::new();
    out.read_line(&mut addr).unwrap();
    let reset = std::net::TcpStream::connect(addr.trim()).unwrap();
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt on a socket this test owns, with a value of the size given.
    let r = unsafe {
        libc::setsockopt(
            reset.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
    drop(reset);
    let mut good = std::net::TcpStream::connect(addr.trim()).unwrap();
    good.write_all(b"the good one\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    csp.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let status = csp.wait().unwrap();
    assert_eq!((rest.as_str(), status.code()), ("the good one\n", Some(0)));
}
