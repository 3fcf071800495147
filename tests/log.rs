//! std/log through the real `csp` binary: the default line on stderr with
//! the local time, and lines from many fibers (and from two processes) at
//! once that never interleave, to a pipe, a file and stderr.

mod common;

use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// The default line: local time (RFC 3339, milliseconds, the zone's
/// offset), the level padded to five, the message, the fields.
#[test]
fn default_lines_go_to_stderr_with_the_local_time() {
    let script = common::Script::new(
        "log_default.csp",
        "import \"std/log\"\nlog.info(\"hello\", {a: 1})\nlog.debug(\"hidden\")\nprint(\"out\")\n",
    );
    let re = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}([+-]\d\d:\d\d) INFO  hello a=1\n$").unwrap();
    for (tz, offset) in [("UTC", "+00:00"), ("Asia/Kolkata", "+05:30"), ("America/St_Johns", "-0")] {
        let out = Command::new(CSP).arg("run").arg(script.path()).env("TZ", tz).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let caps = re.captures(&err).unwrap_or_else(|| panic!("TZ={tz}: {err:?}"));
        assert!(caps[1].starts_with(offset), "TZ={tz}: {err:?}");
    }
}

/// Checks that `text` is `n` whole JSON lines whose `msg` and `pad` fields
/// are as the writer made them.
fn whole_lines(text: &str, n: usize, what: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), n, "{what}: {} lines, not {n}", lines.len());
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{what}: {e} in {line:.200}"));
        let msg = v["msg"].as_str().unwrap();
        let (fiber, _) = msg.split_once('/').unwrap();
        let pad = v["pad"].as_str().unwrap();
        assert_eq!(pad, fiber.repeat(pad.len() / fiber.len()), "{what}: a line was cut into");
    }
}

/// 40 fibers log 25 lines each of ~20 KB (a pipe takes 64 KB: writes park
/// part way) to a child's stdin pipe, a file and stderr at once.
#[test]
fn lines_from_many_fibers_never_interleave() {
    let dir = std::env::temp_dir().join(format!("csp_log_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("app.log");
    let copy = dir.join("piped.log");
    let src = format!(
        r#"
import "std/log"
import "std/fs"
import "std/proc"
let cat = proc.spawn(["sh", "-c", "cat > {copy}"], {{stdin: "pipe", stdout: "null"}})
let f = fs.open("{file}", "w")
let outs = [cat.stdin, f, "stderr"]
let loggers = [log.new({{output: o, format: "json"}}) for o in outs]
wait {{
    for i in 0..40 {{
        go fn() {{
            let tag = "f${{i}}-"
            let pad = tag.repeat(20000 / len(tag))
            for j in 0..25 {{
                for l in loggers {{ l.info("${{tag}}/${{j}}", {{pad: pad}}) }}
            }}
        }}()
    }}
}}
f.close()
cat.stdin.close()
print(cat.wait().ok)
"#,
        copy = copy.display(),
        file = file.display()
    );
    let (code, out, err) = common::run("log_fibers", &src);
    assert_eq!((code, out.as_str()), (0, "true\n"), "{err:.500}");
    whole_lines(&err, 1000, "stderr");
    whole_lines(&std::fs::read_to_string(&file).unwrap(), 1000, "file");
    whole_lines(&std::fs::read_to_string(&copy).unwrap(), 1000, "pipe");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two processes, each with fibers, append their stderr to one file: each
/// line is one write, so lines stay whole across processes too.
#[test]
fn lines_from_two_processes_stay_whole() {
    let script = common::Script::new(
        "log_procs.csp",
        r#"
import "std/log"
log.configure({format: "json"})
wait {
    for i in 0..4 {
        go fn() {
            let tag = "p${args()[0]}f${i}-"
            let pad = tag.repeat(2000 / len(tag))
            for j in 0..300 { log.warn("${tag}/${j}", {pad: pad}) }
        }()
    }
}
"#,
    );
    let file = std::env::temp_dir().join(format!("csp_log2_{}.log", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let sh = format!("\"$0\" run {s} 1 2>>{f} & \"$0\" run {s} 2 2>>{f} & wait", s = script.path(), f = file.display());
    let st = Command::new("/bin/sh").arg("-c").arg(sh).arg(CSP).status().unwrap();
    assert!(st.success());
    whole_lines(&std::fs::read_to_string(&file).unwrap(), 2400, "two processes");
    std::fs::remove_file(&file).unwrap();
}

/// The race the per-output lock closes: a line's write parks part way (the
/// socket is full), room is made, and another line is logged before the
/// reactor sends the rest of the first. Without the lock its bytes land in
/// the middle of the first line.
#[test]
fn a_line_logged_while_another_is_half_written_waits_for_it() {
    let out = common::ok(
        "log_race",
        r#"
import "std/log"
import "std/net"
let l = net.listen("127.0.0.1:0")
let conn = net.connect(l.addr())
let server = l.accept()
let lg = log.new({output: conn, format: "json", time: false})
// Nobody reads yet: A's 16 MB line fills the socket's buffers and A parks.
let a = go lg.info("A", {pad: "a".repeat(16000000)})
sleep(100)
let parts = [server.read(65536)]
let reader = go fn() {
    while true {
        let b = server.read(65536)
        if b == nil { break }
        parts.push(b)
    }
}()
// There is room again, and A's rest is still waiting to be sent.
lg.info("B")
wait a
conn.close()
wait reader
let lines = bytes(parts).decode().split("\n")
print([json_decode(x).msg for x in lines if x != ""])
"#,
    );
    assert_eq!(out, "[\"A\", \"B\"]\n");
}
