//! Resources that move (docs/isolates.md): a listener, connection, file or
//! child process sent to another isolate belongs to it from then on; a use
//! left behind fails naming the crossing; a crossing that fails moves nothing.
//! Real sockets on loopback, real child processes, real worker threads (and
//! the worker on the main thread with `CSP_ISOLATES=1`).

mod common;

use common::{ok_sh, run_sh};

/// Both ways a worker runs: a thread of its own, and stepped on the main thread.
const SETTINGS: [&str; 2] = ["export CSP_ISOLATES=2;", "export CSP_ISOLATES=1;"];

#[test]
fn a_listener_moves_to_the_worker_that_serves_it_and_its_old_handle_fails() {
    let src = r#"
import "std/isolate"
import "std/net"

fn serve(l) {
    let c = l.accept()
    c.write("echo ${c.read_line()}\n")
    c.close()
    l.close()
    return "served"
}

let l = net.listen("127.0.0.1:0")
let addr = l.addr()
// A fiber here waiting to accept when the listener leaves: it wakes to the error.
let waiting = go { try { l.accept() } catch e { print("waiter:", e.kind) } }
yield
let t = isolate.run(serve, l)
wait waiting
print(type(l), str(l).ends_with("(moved)>"))
try { l.accept() } catch e { print(e.kind, e.message.contains("moved to another isolate (passed to isolate.run at")) }
let c = net.connect(addr)
c.write("hi\n")
print(c.read_line())
print(wait t)
"#;
    for sh in SETTINGS {
        let out = ok_sh("iso_listener", sh, src);
        assert_eq!(out, "waiter: value\nlistener true\nvalue true\necho hi\nserved\n", "{sh}");
    }
}

#[test]
fn connections_accepted_here_are_served_by_workers_through_a_shared_channel() {
    let src = r#"
import "std/isolate"
import "std/net"

fn worker(conns) {
    let n = 0
    for c in conns {
        c.write("${c.read_line().upper()}\n")
        c.close()
        n += 1
    }
    return n
}

let l = net.listen("127.0.0.1:0")
let conns = chan(0)
let workers = [isolate.run(worker, conns), isolate.run(worker, conns)]
let left = []
let acceptor = go {
    for i in 0..6 {
        let c = l.accept()
        conns <- c
        try { c.write("x") } catch e { left.push(e.message.contains("(sent on a shared channel)")) }
    }
    close(conns)
}
for i in 0..6 {
    let c = net.connect(l.addr())
    c.write("hello ${i}\n")
    print(c.read_line())
}
wait acceptor
print(left, sum(wait workers))
"#;
    for sh in SETTINGS {
        let out = ok_sh("iso_conns", sh, src);
        let want: String = (0..6).map(|i| format!("HELLO {i}\n")).collect();
        assert_eq!(out, format!("{want}[true, true, true, true, true, true] 6\n"), "{sh}");
    }
}

#[test]
fn a_child_process_moves_with_its_pipes_and_a_file_moves_mid_read_and_back() {
    let src = r#"
import "std/isolate"
import "std/proc"
import "std/fs"
import "std/os"

fn finish(p) {
    let out = p.stdout.read_text()
    return [out.trim(), p.wait().code]
}
let p = proc.spawn(["sh", "-c", "echo from-child; exit 3"], {stdout: "pipe"})
let out = p.stdout
let pid = p.pid
print(wait isolate.run(finish, p))
try { p.wait() } catch e { print(e.message.starts_with("<process ${pid}> moved") ) }
try { out.read_line() } catch e { print(e.message.starts_with("<stream stdout of sh -c echo from-child; exit 3> moved")) }

let path = fs.temp_dir() + "/csp_iso_file_${os.pid()}.txt"
fs.write(path, "one\ntwo\nthree\nfour\n")
let f = fs.open(path)
print(f.read_line())
fn next_and_back(f) { return [f.read_line(), f] }
let r = wait isolate.run(next_and_back, f)
let back = r[1]
print(r[0], back.read_line(), back is f, type(back))
for line in back { print(line) }
back.close()
fs.remove(path)
"#;
    for sh in SETTINGS {
        let out = ok_sh("iso_proc_file", sh, src);
        assert_eq!(out, "[\"from-child\", 3]\ntrue\ntrue\none\ntwo three false stream\nfour\n", "{sh}");
    }
}

/// A builtin given a resource that moved, as an argument rather than as the
/// receiver of a method, names the crossing too (not "needs a connection,
/// not stream").
#[test]
fn a_moved_resource_given_to_a_builtin_names_the_crossing() {
    let src = r#"
import "std/isolate"
import "std/net"

let l = net.listen("127.0.0.1:0")
go { let c = l.accept(); sleep(50); c.close() }
let c = net.connect(l.addr())
fn keep(c) { return 1 }
wait isolate.run(keep, c)
try { net.tls(c, {cert: "c.pem", key: "k.pem"}) } catch e { print(e.kind, e.message) }
"#;
    for sh in SETTINGS {
        let out = ok_sh("iso_moved_arg", sh, src);
        assert!(out.starts_with("value <stream connection to 127.0.0.1:"), "{sh}: {out}");
        assert!(out.contains("> moved to another isolate (passed to isolate.run at "), "{sh}: {out}");
        assert!(out.ends_with("it belongs to that isolate now and cannot be used here\n"), "{sh}: {out}");
    }
}

#[test]
fn a_crossing_that_fails_moves_nothing() {
    let src = r#"
import "std/isolate"
import "std/net"

let l = net.listen("127.0.0.1:0")
try { isolate.run(fn(x) => 1, [l, mutex()]) } catch e { print(e.message) }
let got = go { let c = l.accept(); print("accepted", type(c)); c.close() }
net.connect(l.addr()).close()
wait got
let ch = chan(1)
wait isolate.run(fn(c) => 0, ch)
try { ch <- [l, mutex()] } catch e { print(e.message) }
print(str(l).ends_with("(moved)>"))
l.close()
"#;
    let (code, out, err) = run_sh("iso_all_or_nothing", SETTINGS[0], src);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "isolate.run(): a mutex cannot cross to another isolate (at argument 1[1])\naccepted stream\n\
         send on a shared channel: a mutex cannot cross to another isolate (at the value[1])\nfalse\n"
    );
}

#[test]
fn twins_of_a_listener_and_http_serve_spread_connections_over_isolates() {
    let src = r#"
import "std/isolate"
import "std/net"
import "std/http"

try { net.listen("127.0.0.1:0").twin() } catch e { print(e.kind, e.message.ends_with("only such a listener can have twins")) }

// Each worker counts its own requests (the handler's global is per isolate).
let hits = 0
fn count(req) {
    hits += 1
    return "${hits}"
}
let l = net.listen("127.0.0.1:0", {reuse_port: true})
let addr = l.addr()
let server = go http.serve(l, count, {isolates: 2})
let most = 0
for i in 0..40 {
    let r = http.get("http://${addr}/", {keep_alive: false})
    most = max(most, int(r.text()))
}
print(most < 40, hits)
server.cancel()
try { wait server } catch e { print(e.kind) }
try { http.serve("127.0.0.1:0", count, {isolates: 0}) } catch e { print(e.message) }
"#;
    let (code, out, err) = run_sh("iso_http_twins", SETTINGS[0], src);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "io true\ntrue 0\ncancelled\nhttp.serve(): option isolates needs true or a count of at least 1, not 0\n"
    );
}

#[test]
fn a_resource_offered_in_a_send_that_does_not_happen_stays_with_the_sender() {
    let src = r#"
import "std/isolate"
import "std/net"

let l = net.listen("127.0.0.1:0")
let full = chan(1)
wait isolate.run(fn(c) => 0, full)
full <- "filler"
// Not sent: the default wins, and the listener stays here.
select {
    case full <- l { print("sent?") }
    default { print("default") }
}
print(str(l).ends_with("(moved)>"))
// Sent while parked: a receiver on the worker takes it.
let quick = chan()
let t = isolate.run(fn(c) { sleep(50); return str(<-c) }, quick)
let timeout = after(5000)
select {
    case quick <- l { print("sent") }
    case <-timeout { print("timeout") }
}
print(wait t, str(l).ends_with("(moved)>"))
// Parked, then another case wins: the resource comes back.
let l2 = net.listen("127.0.0.1:0")
let never = chan()
wait isolate.run(fn(c) => 0, never)
select {
    case never <- l2 { print("sent?") }
    case <-after(50) { print("timed out") }
}
print(str(l2).ends_with("(moved)>"))
let c = go { l2.accept().close(); print("accepted") }
net.connect(l2.addr()).close()
wait c
// A send cancelled while it waits: the resource comes back.
let l3 = net.listen("127.0.0.1:0")
let s = go { never <- l3 }
sleep(20)
s.cancel()
try { wait s } catch e { print(e.kind) }
print(str(l3).ends_with("(moved)>"))
// A sender waiting when the channel closes: the error, and the resource back.
let l4 = net.listen("127.0.0.1:0")
let gate = chan()
wait isolate.run(fn(c) => 0, gate)
let s4 = go { try { gate <- l4 } catch e { print(e.kind) } }
sleep(20)
close(gate)
wait s4
sleep(10)
print(str(l4).ends_with("(moved)>"))
"#;
    for sh in SETTINGS {
        let out = ok_sh("iso_unsent", sh, src);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 11, "{sh}: {out}");
        assert_eq!(lines[..3], ["default", "false", "sent"], "{sh}");
        assert!(lines[3].starts_with("<listener 127.0.0.1:") && lines[3].ends_with("> true"), "{sh}: {out}");
        assert_eq!(lines[4..], ["timed out", "false", "accepted", "cancelled", "false", "closed", "false"], "{sh}");
    }
}
