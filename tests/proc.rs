//! Child processes and streams, through the real `csp` binary: real children,
//! real pipes, and the descriptors of the csp process counted in /proc.

mod common;

/// `src` with `import "std/proc"` and `fds()` before it, run to exit 0; its stdout.
fn ok(src: &str) -> String {
    common::ok("proc", &format!("import \"std/proc\"\n{}{src}", common::FDS))
}

#[test]
fn run_collects_output_and_status() {
    let out = ok(r#"
let r = proc.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
print(r.code, r.ok, r.signal, r.stdout.trim(), r.stderr.trim())
print(proc.run(["echo", "a b", "c"]).stdout.trim())
print(proc.run(["cat"], {input: "fed in"}).stdout)
print(proc.run(["pwd"], {cwd: "/"}).stdout.trim())
print(proc.run(["sh", "-c", "echo $CSP_X"], {env: {CSP_X: "set"}}).stdout.trim())
print(proc.run("echo one | tr a-z A-Z", {shell: true}).stdout.trim())
print(proc.output(["echo", "hi"]).trim())
"#);
    assert_eq!(out, "3 false nil out err\na b c\nfed in\n/\nset\nONE\nhi\n");
}

/// A missing command, a non-zero exit and a kill by signal are distinct outcomes.
#[test]
fn failures_are_distinct() {
    let out = ok(r#"
try { proc.run(["no-such-command-csp"]) } catch e { print(e.kind, e.message) }
try { proc.output(["sh", "-c", "echo bad >&2; exit 2"]) } catch e { print(e.kind, e.message) }
let p = proc.spawn(["sleep", "10"])
p.kill()
print(p.wait())
let q = proc.spawn(["sleep", "10"])
q.kill("SIGKILL")
print(q.wait().signal)
try { q.kill("SIGNOPE") } catch e { print(e.kind) }
try { proc.spawn("ls -l") } catch e { print(e.kind) }
try { proc.run(["sleep", "5"], {timeout: 50}) } catch e { print(e.kind, e.message) }
try { proc.run("ls", ["-l"]) } catch e { print(e.kind, e.message) }
"#);
    assert_eq!(
        out,
        "io command not found: no-such-command-csp\n\
         io sh -c echo bad >&2; exit 2 exited with 2: bad\n\
         {\"code\": nil, \"signal\": \"SIGTERM\", \"ok\": false}\n\
         SIGKILL\nvalue\ntype\ntimeout timeout after 50 ms\n\
         type proc.run() options are a map, not list (the command and its arguments are one list)\n"
    );
}

#[test]
fn streaming_a_child() {
    let out = ok(r#"
let p = proc.spawn(["sh", "-c", "for i in 1 2 3; do echo line $i; done; printf tail"])
let got = []
for line in p.stdout { got.push(line) }
print(got, p.wait().ok)
// Write to its stdin while reading its stdout, in two fibers.
let c = proc.spawn(["tr", "a-z", "A-Z"], {stdin: "pipe"})
go fn() { for i in 0..3 { c.stdin.write("row ${i}\n") } c.stdin.close() }()
print(c.stdout.read_line(), c.stdout.read_line(), c.stdout.read_text())
c.wait()
// Chunks: read(n) gives at most n bytes.
let d = proc.spawn(["printf", "abcdef"])
print(len(d.stdout.read(4)) <= 4, d.wait().ok)
"#);
    assert_eq!(out, "[\"line 1\", \"line 2\", \"line 3\", \"tail\"] true\nROW 0 ROW 1 ROW 2\n\ntrue true\n");
}

/// A child killed mid-stream ends its reader's stream; a pipe whose child
/// exited still gives what was written; a write to a pipe nobody reads fails.
#[test]
fn broken_pipes() {
    let out = ok(r#"
let p = proc.spawn(["sh", "-c", "echo first; exec sleep 10"])
print(p.stdout.read_line())
p.kill("SIGKILL")
print(p.stdout.read_line(), p.wait().signal)
let q = proc.spawn(["sh", "-c", "echo done"])
q.wait()
print(q.stdout.read_line(), q.stdout.read_line())
let r = proc.spawn(["true"], {stdin: "pipe"})
r.wait()
try { r.stdin.write("x".repeat(100000)) } catch e { print(e.kind, e.message.contains("Broken pipe")) }
let bad = proc.spawn(["printf", "\\377\\n"])
try { bad.stdout.read_line() } catch e { print(e.kind) }
"#);
    assert_eq!(out, "first\nnil SIGKILL\ndone nil\nio true\nvalue\n");
}

/// Cancelling a fiber blocked reading a child's output or waiting for it kills
/// the child and closes its pipes: no process and no descriptor is left.
#[test]
fn cancellation_kills_and_closes() {
    let out = ok(r#"
let before = fds()
let pids = []
let tasks = []
for i in 0..20 {
    tasks.push(go fn() {
        let p = proc.spawn(["sleep", "30"])
        pids.push(p.pid)
        if i % 2 == 0 { p.stdout.read_line() } else { p.wait() }
    }())
}
sleep(100)
for t in tasks { t.cancel() }
for t in tasks { try { wait t } catch e { assert(e.kind == "cancelled") } }
sleep(100)
let alive = pids.filter(fn(pid) => proc.run(["sh", "-c", "kill -0 ${pid}"], {stderr: "pipe"}).ok)
print(len(pids), len(alive), fds() - before)
"#);
    assert_eq!(out, "20 0 0\n");
}

/// 200 commands, at most 16 at once: every one is waited for, no descriptor leaks.
#[test]
fn many_children_in_parallel() {
    let out = ok(r#"
import "std/async"
let before = fds()
let codes = async.pmap(range(200), 16, fn(i) => proc.run(["sh", "-c", "exit ${i % 3}"]).code)
print(len(codes), codes[0], codes[1], codes[2], codes[199], fds() - before)
"#);
    assert_eq!(out, "200 0 1 2 1 0\n");
}

#[test]
fn files_stream_in_both_directions() {
    let dir = std::env::temp_dir().join(format!("csp_proc_files_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let out = ok(&format!(
        r#"
let f = fs.open("{d}/a.txt", "w")
for i in 0..100000 {{ f.write("line ${{i}}\n") }}
f.close()
let n = 0
let last = nil
for line in fs.open("{d}/a.txt") {{ n += 1; last = line }}
print(n, last)
let g = fs.open("{d}/a.txt", "a")
g.write("more")
g.close()
let h = fs.open("{d}/a.txt")
h.read_line()
print(h.read_line(), len(h.read_text()))
try {{ fs.open("{d}/missing.txt") }} catch e {{ print(e.kind, e.message.contains("No such file")) }}
try {{ fs.open("{d}") }} catch e {{ print(e.kind, e.message.contains("directory")) }}
try {{ fs.open("{d}/a.txt", "x") }} catch e {{ print(e.kind, e.message.contains("exists")) }}
try {{ fs.open("{d}/a.txt", "rw") }} catch e {{ print(e.kind) }}
try {{ fs.open("{d}/a.txt").write("x") }} catch e {{ print(e.kind, e.message.contains("not open for writing")) }}
"#
    ));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out, "100000 line 99999\nline 1 1088880\nio true\nio true\nio true\nvalue\nio true\n");
}

/// Environment set with os.setenv reaches children started afterwards.
#[test]
fn children_inherit_the_environment() {
    let out = ok(r#"
import "std/os"
os.setenv("CSP_PROC_TEST", "inherited")
print(proc.output(["sh", "-c", "echo $CSP_PROC_TEST"]).trim())
print(proc.run(["/bin/sh", "-c", "test -z \"$CSP_PROC_TEST\" && echo none"], {clear_env: true}).stdout.trim())
"#);
    assert_eq!(out, "inherited\nnone\n");
}

/// `bytes: true` gives output that is not UTF-8 as bytes (text reads of it are
/// a `value` error); `os.executable()` starts csp again.
#[test]
fn bytes_output_and_the_executable() {
    let out = ok(r#"
import "std/os"
let r = proc.run(["sh", "-c", "printf '\\377\\000a'; printf '\\376' >&2"], {bytes: true})
print(r.stdout, r.stderr, r.ok)
print(proc.output(["printf", "\\351t\\351"], {bytes: true}))
print(proc.run(["true"], {bytes: true}).stdout)
try { proc.run(["printf", "\\377"]) } catch e { print(e.kind) }
try { proc.output(["sh", "-c", "printf '\\377bad' >&2; exit 1"], {bytes: true}) } catch e { print(e.kind, e.message) }
print(os.executable().starts_with("/"), os.executable() == os.executable())
let script = fs.temp_file("exe")
fs.write(script, "print(40 + 2)")
print(proc.output([os.executable(), "run", script]).trim())
fs.remove(script)
"#);
    assert_eq!(
        out,
        "b\"\\xff\\x00a\" b\"\\xfe\" true\nb\"\\xe9t\\xe9\"\nb\"\"\nvalue\n\
         io sh -c printf '\\377bad' >&2; exit 1 exited with 1: \u{fffd}bad\ntrue true\n42\n"
    );
}
