//! std/compress against real peers: the `gzip`/`gunzip` programs and
//! Python's `gzip` and `zlib`, over files, pipes and a TCP socket; a gzip
//! bomb under `--max-memory`; cancelling a reader blocked on a pipe.
//!
//! They need `gzip` (Debian's base system has it) and `python3`; without one a
//! test says what it skipped and passes, unless `CI` is set: then it fails.

mod common;
use common::{have, ok, Script};

fn tools(what: &str, list: &[&str]) -> bool {
    list.iter().all(|t| have(t, what, &format!("install it (Debian: apt-get install {t})")))
}

/// Text with repeats and variety: lines that differ, so deflate has work.
const TEXT: &str = r#"
fn text(n) {
    let out = []
    for i in range(n) { out.push("line ${i}: ${i * 7919 % 1000} of the log\n") }
    return out.join("")
}
"#;

#[test]
fn gzip_program_reads_what_csp_writes_and_csp_reads_what_it_writes() {
    if !tools("the gzip program tests", &["gzip"]) {
        return;
    }
    let src = format!(
        r#"
import "std/compress"
import "std/fs"
import "std/proc"
{TEXT}
let d = fs.temp_dir()
let t = text(20000)
// csp writes a file through a stream; gzip checks and unpacks it.
let w = compress.open(d + "/a.txt.gz", "w", "gzip", {{level: 9}})
for line in t.splitlines() {{ w.write(line + "\n") }}
w.close()
print(proc.run(["gzip", "-t", d + "/a.txt.gz"]).ok, proc.output(["gunzip", "-c", d + "/a.txt.gz"]) == t)
// Appending makes a second gzip member; gunzip reads both.
let a = compress.open(d + "/a.txt.gz", "a")
a.write("appended\n")
a.close()
let back = proc.output(["gunzip", "-c", d + "/a.txt.gz"])
print(back == t + "appended\n")
// And csp reads the two members as gunzip does.
print(compress.gunzip(fs.read_bytes(d + "/a.txt.gz")).decode() == back)
// gzip compresses a file at each level; csp reads it whole, by line and by chunk.
fs.write(d + "/b.txt", t)
for level in ["-1", "-6", "-9"] {{
    proc.output(["gzip", level, "-k", "-f", "-n", d + "/b.txt"])
    let whole = compress.gunzip(fs.read_bytes(d + "/b.txt.gz")).decode() == t
    let lines = []
    let r = compress.open(d + "/b.txt.gz")
    for l in r.lines() {{ lines.push(l) }}
    r.close()
    let chunks = []
    let r2 = compress.open(d + "/b.txt.gz")
    while true {{
        let b = r2.read(1000)
        if b == nil {{ break }}
        chunks.push(b.decode())
    }}
    print(level, whole, lines == t.splitlines(), chunks.join("") == t)
}}
// gzip's own file names and times in the header are skipped.
proc.output(["gzip", "-k", "-f", "-N", d + "/b.txt"])
print(compress.open(d + "/b.txt.gz").read_text() == t)
fs.remove_all(d)
"#
    );
    let out = ok("compress_gzip_files", &src);
    assert_eq!(out, "true true\ntrue\ntrue\n-1 true true true\n-6 true true true\n-9 true true true\ntrue\n");
}

#[test]
fn streams_through_pipes_to_and_from_gzip() {
    if !tools("the gzip pipe tests", &["gzip"]) {
        return;
    }
    let src = format!(
        r#"
import "std/compress"
import "std/proc"
{TEXT}
let t = text(30000)
// Plain text into `gzip -c`; its compressed stdout read through a reader,
// while another fiber writes (the pipe fills both ways).
let g = proc.spawn(["gzip", "-c"], {{stdin: "pipe"}})
let writer = go fn() {{
    g.stdin.write(t)
    g.stdin.close()
}}()
let r = compress.reader(g.stdout)
let n = 0
let first = r.read_line()
while r.read_line() != nil {{ n += 1 }}
wait writer
print(first, n + 1, g.wait().ok)
// A writer into `gunzip -c`'s stdin; its plain stdout read as text.
let u = proc.spawn(["gunzip", "-c"], {{stdin: "pipe"}})
let feeder = go fn() {{
    let w = compress.writer(u.stdin)
    for line in t.splitlines() {{ w.write(line + "\n") }}
    w.close()
}}()
let got = u.stdout.read_text()
wait feeder
print(got == t, u.wait().ok)
// zlib's framing through a pipe too (the bytes pass through `cat`).
let c = proc.spawn(["cat"], {{stdin: "pipe"}})
go fn() {{
    let w = compress.writer(c.stdin, "deflate")
    w.write(t)
    w.close()
}}()
print(compress.reader(c.stdout, "deflate").read_text() == t)
"#
    );
    let out = ok("compress_gzip_pipes", &src);
    assert_eq!(out, "line 0: 0 of the log 30000 true\ntrue true\ntrue\n");
}

/// Python compresses in every framing and level; csp decompresses, and the
/// other way round (Python checks and prints what it found).
#[test]
fn python_zlib_and_gzip_agree_with_csp() {
    if !tools("the Python gzip/zlib tests", &["python3"]) {
        return;
    }
    let py = Script::new(
        "peer.py",
        r#"
import gzip, sys, zlib, os
d, mode = sys.argv[1], sys.argv[2]
data = open(os.path.join(d, "plain"), "rb").read()
def raw(level):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()
if mode == "make":
    for level in (0, 1, 6, 9):
        open(os.path.join(d, f"py.gz.{level}"), "wb").write(gzip.compress(data, compresslevel=level, mtime=0))
        open(os.path.join(d, f"py.zlib.{level}"), "wb").write(zlib.compress(data, level))
        open(os.path.join(d, f"py.raw.{level}"), "wb").write(raw(level))
else:
    for level in (0, 1, 6, 9):
        g = gzip.decompress(open(os.path.join(d, f"csp.gz.{level}"), "rb").read())
        z = zlib.decompress(open(os.path.join(d, f"csp.zlib.{level}"), "rb").read())
        r = zlib.decompress(open(os.path.join(d, f"csp.raw.{level}"), "rb").read(), -15)
        print(level, g == data, z == data, r == data)
"#,
    );
    let src = format!(
        r#"
import "std/compress"
import "std/fs"
import "std/proc"
{TEXT}
let d = fs.temp_dir()
let t = bytes(text(5000)) + bytes(range(256) * 40)
fs.write(d + "/plain", t)
proc.output(["python3", "{py}", d, "make"])
for level in [0, 1, 6, 9] {{
    let g = compress.gunzip(fs.read_bytes(d + "/py.gz.${{level}}")) == t
    let z = compress.inflate(fs.read_bytes(d + "/py.zlib.${{level}}")) == t
    let r = compress.inflate_raw(fs.read_bytes(d + "/py.raw.${{level}}")) == t
    // The same files through the stream readers.
    let s = compress.open(d + "/py.zlib.${{level}}", "r", "deflate").read() == t
    print(level, g, z, r, s)
    fs.write(d + "/csp.gz.${{level}}", compress.gzip(t, {{level: level}}))
    fs.write(d + "/csp.zlib.${{level}}", compress.deflate(t, {{level: level}}))
    fs.write(d + "/csp.raw.${{level}}", compress.deflate_raw(t, {{level: level}}))
}}
print(proc.output(["python3", "{py}", d, "check"]))
fs.remove_all(d)
"#,
        py = py.path()
    );
    let out = ok("compress_python", &src);
    let want = "0 true true true true\n1 true true true true\n6 true true true true\n9 true true true true\n";
    let py_says = "0 True True True\n1 True True True\n6 True True True\n9 True True True\n\n";
    assert_eq!(out, format!("{want}{py_says}"));
}

/// A TCP conversation in gzip both ways: Python sends lines, flushing after
/// each so that they arrive at once; csp answers each through a compressing
/// writer that flushes too, and Python reads the answers as they come.
#[test]
fn a_socket_carries_gzip_both_ways_with_flushes() {
    if !tools("the Python socket test", &["python3"]) {
        return;
    }
    let py = Script::new(
        "client.py",
        r#"
import socket, sys, zlib
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
enc = zlib.compressobj(6, zlib.DEFLATED, 31)   # gzip framing
dec = zlib.decompressobj(31)
got = b""
for i in range(50):
    s.sendall(enc.compress(f"ping {i}\n".encode()) + enc.flush(zlib.Z_SYNC_FLUSH))
    # The answer must arrive before the next question: nothing waits for the end.
    while b"\n" not in got:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed early")
        got += dec.decompress(chunk)
    line, got = got.split(b"\n", 1)
    assert line == f"pong {i}".encode(), line
s.sendall(enc.flush(zlib.Z_FINISH))
s.shutdown(socket.SHUT_WR)
rest = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    rest += chunk
got += dec.decompress(rest)
assert dec.eof, "the gzip stream from csp did not end"
print("client ok", got.decode().strip())
"#,
    );
    let src = format!(
        r#"
import "std/compress"
import "std/net"
import "std/proc"
let l = net.listen("127.0.0.1:0")
let port = l.addr().split(":")[-1]
let client = proc.spawn(["python3", "{py}", port])
let c = l.accept()
let r = compress.reader(c)
let w = compress.writer(c)
let n = 0
while true {{
    let line = r.read_line()
    if line == nil {{ break }}
    w.write("pong " + line.split(" ")[1] + "\n")
    w.flush()
    n += 1
}}
w.write("bye\n")
w.close()
print(n, client.stdout.read_text().trim(), client.wait().ok)
"#,
        py = py.path()
    );
    let out = ok("compress_socket", &src);
    assert_eq!(out, "50 client ok bye true\n");
}

/// A gzip bomb (300 MB of zeros in 300 KB, made by Python) gives a catchable
/// `memory` error under `--max-memory`, whole or streamed, and the program
/// goes on; `max` stops it sooner with a `limit` error.
#[test]
fn a_gzip_bomb_is_a_catchable_error() {
    if !tools("the gzip bomb test", &["python3"]) {
        return;
    }
    let bomb = Script::new("bomb.gz", "");
    let made = std::process::Command::new("python3")
        .args(["-c", "import gzip, sys; open(sys.argv[1], 'wb').write(gzip.compress(bytes(300 << 20), 9))"])
        .arg(bomb.path())
        .status()
        .unwrap();
    assert!(made.success());
    assert!(std::fs::metadata(bomb.path()).unwrap().len() < 1 << 20);
    let src = format!(
        r#"
import "std/compress"
import "std/fs"
let z = fs.read_bytes("{bomb}")
try {{ compress.gunzip(z) }} catch e {{ print(e.kind) }}
try {{ compress.gunzip(z, {{max: 1000000}}) }} catch e {{ print(e.kind, e.message) }}
try {{ compress.open("{bomb}").read() }} catch e {{ print(e.kind) }}
try {{ compress.open("{bomb}").read_line() }} catch e {{ print(e.kind) }}
// Read a piece at a time, it is just a lot of zeros.
let r = compress.open("{bomb}")
print(len(r.read(1000)), r.read_exact(5) == bytes(5))
print("still running")
"#,
        bomb = bomb.path()
    );
    let script = Script::new("bomb.csp", &src);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_csp"))
        .args(["run", "--max-memory", "64M", script.path()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        text,
        "memory\nlimit compress.gunzip(): the data decompresses to more than 1000000 bytes (its max option)\n\
         memory\nmemory\n1000 true\nstill running\n"
    );
}

/// A reader waiting for compressed data that does not come (a child that
/// writes nothing) parks only its fiber, and cancelling it ends the wait.
#[test]
fn a_blocked_reader_is_cancelled() {
    let out = ok(
        "compress_cancel",
        r#"
import "std/compress"
import "std/proc"
let p = proc.spawn(["sleep", "30"])
let t = go fn() { return compress.reader(p.stdout).read_line() }()
let ticks = 0
for i in range(20) {
    sleep(2)
    ticks += 1
}
let start = now()
t.cancel()
try { wait t } catch e { print(e.kind, ticks, now() - start < 1000) }
p.kill()
print(p.wait().signal)
"#,
    );
    assert_eq!(out, "cancelled 20 true\nSIGTERM\n");
}
