//! `--profile FILE` (docs/profiling.md): the file is a pprof profile that Go's
//! own `go tool pprof` reads: the hot function on top with its file and
//! lines, fibers as labels, blocked time as its own sample type; `csp test`
//! writes one profile for all its files; a path that cannot be written is a
//! bad command line.
//!
//! They need Go (`apt-get install golang-go`). Without it a test prints what
//! it skipped and passes, unless the environment variable `CI` is set: then
//! it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A temp dir removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("csp_profile_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True when `go version` runs; otherwise says what was skipped (or, under
/// CI, fails).
fn have_go(what: &str) -> bool {
    if matches!(Command::new("go").arg("version").output(), Ok(o) if o.status.success()) {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "`go` is not installed but CI is set, so {what} cannot be skipped");
    eprintln!("skipped {what}: `go` not found (apt-get install golang-go)");
    false
}

/// `csp ARGS` in `dir`.
fn csp(dir: &Path, args: &[&str]) -> Output {
    Command::new(CSP).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
}

/// `go tool pprof ARGS FILE`'s report.
fn pprof(dir: &Path, args: &[&str], file: &str) -> String {
    let out = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .arg(file)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .expect("go tool pprof");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "pprof {args:?} failed:\n{}{text}", String::from_utf8_lossy(&out.stderr));
    text
}

/// The function names of a `-top` report, hottest first.
fn top(report: &str) -> Vec<String> {
    let rows = report.lines().skip_while(|l| !l.trim_start().starts_with("flat")).skip(1);
    rows.map(|l| l.split_whitespace().skip(5).collect::<Vec<_>>().join(" ")).filter(|f| !f.is_empty()).collect()
}

const HOT: &str = r#"fn hot(n) {
    let s = 0
    for i in range(n) {
        s += i * i % 7
    }
    return s
}

fn cold(n) {
    let s = 0
    for i in range(n) {
        s += i
    }
    return s
}

fn worker(c) {
    c <- hot(1500000)
}

let c = chan()
go worker(c)
print(cold(30000))
print(<-c)
"#;

/// Runs HOT under `--profile` (with `extra` options); the profile's name.
fn profiled(dir: &Dir, extra: &[&str]) -> &'static str {
    dir.write("main.csp", HOT);
    let mut args = vec!["run", "--profile", "cpu.pb.gz"];
    args.extend_from_slice(extra);
    args.push("main.csp");
    let out = csp(&dir.0, &args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    "cpu.pb.gz"
}

#[test]
fn pprof_names_the_hot_function_with_its_file_and_lines() {
    if !have_go("reading a profile with go tool pprof") {
        return;
    }
    let dir = Dir::new("hot");
    let file = profiled(&dir, &[]);
    let report = pprof(&dir.0, &["-top"], file);
    assert!(report.contains("Type: cpu"), "{report}");
    assert_eq!(top(&report).first().map(String::as_str), Some("hot"), "{report}");
    // The loop's line, and the call into it from the fiber's function.
    let lines = pprof(&dir.0, &["-top", "-lines"], file);
    assert!(lines.lines().any(|l| l.ends_with(" hot main.csp:3")), "{lines}");
    assert!(lines.contains(" worker main.csp:18"), "{lines}");
    let raw = pprof(&dir.0, &["-raw"], file);
    assert!(raw.contains("Period: 10000000"), "the default rate is 100 Hz:\n{raw}");
    assert!(raw.contains("samples/count cpu/nanoseconds[dflt] blocked/nanoseconds"), "{raw}");
}

#[test]
fn fibers_are_labels() {
    if !have_go("reading a profile's labels with go tool pprof") {
        return;
    }
    let dir = Dir::new("labels");
    let file = profiled(&dir, &[]);
    let tags = pprof(&dir.0, &["-tags"], file);
    assert!(tags.contains("go worker at main.csp:22:4"), "{tags}");
    let traces = pprof(&dir.0, &["-traces"], file);
    let hot = traces.split("-----------+").find(|t| t.contains("hot")).expect("a stack with hot");
    assert!(hot.contains("fiber:  go worker at main.csp:22:4") && hot.contains("worker"), "{traces}");
}

#[test]
fn blocked_time_is_its_own_sample_type_at_the_blocking_stack() {
    if !have_go("reading blocked time with go tool pprof") {
        return;
    }
    let dir = Dir::new("blocked");
    dir.write(
        "main.csp",
        "fn consumer(c) {\n    return <-c\n}\n\nlet c = chan()\ngo fn() {\n    sleep(300)\n    c <- 1\n}()\nprint(consumer(c))\n",
    );
    let out = csp(&dir.0, &["run", "--profile", "b.pb.gz", "main.csp"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let recv = pprof(&dir.0, &["-sample_index=blocked", "-tagfocus=wait=recv", "-top", "-lines"], "b.pb.gz");
    // The line it blocked in.
    assert_eq!(top(&recv).first().map(String::as_str), Some("consumer main.csp:2"), "{recv}");
    // About 300 ms, not the CPU time spent (nothing): a period either way,
    // and the clock thread may run late on a busy machine.
    let ms: f64 = recv
        .lines()
        .find(|l| l.contains("consumer"))
        .and_then(|l| l.split("ms").next())
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!((150.0..=450.0).contains(&ms), "{recv}");
    let sleep = pprof(&dir.0, &["-sample_index=blocked", "-tagfocus=wait=sleep", "-top"], "b.pb.gz");
    assert!(top(&sleep).first().is_some_and(|f| f == "<fn at main.csp:6>"), "{sleep}");
    // The CPU view leaves the waiting out.
    let cpu = pprof(&dir.0, &["-top"], "b.pb.gz");
    assert!(!top(&cpu).iter().any(|f| f == "consumer"), "{cpu}");
}

#[test]
fn profile_hz_sets_the_period() {
    if !have_go("reading a profile's period with go tool pprof") {
        return;
    }
    let dir = Dir::new("hz");
    let file = profiled(&dir, &["--profile-hz", "1000"]);
    let raw = pprof(&dir.0, &["-raw"], file);
    assert!(raw.contains("Period: 1000000\n"), "{raw}");
    let report = pprof(&dir.0, &["-top"], file);
    assert_eq!(top(&report).first().map(String::as_str), Some("hot"), "{report}");
}

#[test]
fn csp_test_writes_one_profile_of_all_its_files() {
    if !have_go("reading csp test's profile with go tool pprof") {
        return;
    }
    let dir = Dir::new("test");
    let spin = |name: &str| {
        format!("fn {name}(until) {{\n    let s = 0\n    for i in 0..1000000000 {{\n        s += i % 3\n        if i % 1000 == 0 && now() > until {{ break }}\n    }}\n    return s\n}}\n\nfn test_{name}() {{\n    assert({name}(now() + 200) > 0)\n}}\n")
    };
    dir.write("a_test.csp", &spin("spin_a"));
    dir.write("b_test.csp", &spin("spin_b"));
    let out = csp(&dir.0, &["test", "--profile", "t.pb.gz", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let report = pprof(&dir.0, &["-top", "-lines"], "t.pb.gz");
    assert!(report.contains("spin_a a_test.csp:3") && report.contains("spin_b b_test.csp:3"), "{report}");
    let tags = pprof(&dir.0, &["-tags"], "t.pb.gz");
    assert!(tags.contains("go test_spin_a at ") && tags.contains("go test_spin_b at "), "{tags}");
}

#[test]
fn a_profile_that_cannot_be_written_is_a_command_line_error() {
    let dir = Dir::new("bad");
    dir.write("main.csp", "print(1)\n");
    let out = csp(&dir.0, &["run", "--profile", "no/such/dir/p.pb.gz", "main.csp"]);
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("csp: cannot write profile no/such/dir/p.pb.gz: No such file or directory"), "{err}");
    assert!(out.stdout.is_empty(), "the program must not run");
    for (args, says) in [
        (&["check", "--profile", "p", "main.csp"][..], "--profile is for `csp run` and `csp test`"),
        (&["--profile", "p"], "--profile is for `csp run` and `csp test`"),
        (&["run", "--profile-hz", "50", "main.csp"], "--profile-hz is for --profile FILE"),
        (&["run", "--profile", "p", "--profile-hz", "0", "main.csp"], "--profile-hz needs a rate"),
        (&["run", "--profile", "p", "--explore", "3", "main.csp"], "profile one schedule with --explore-seed S"),
    ] {
        let out = csp(&dir.0, args);
        assert_eq!(out.status.code(), Some(64), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn locks_and_io_are_blocked_time_too() {
    if !have_go("reading blocked time with go tool pprof") {
        return;
    }
    let dir = Dir::new("lock_io");
    let src = r#"import "std/proc"

let m = mutex()
let held = chan()

fn holder() {
    lock m {
        held <- true
        sleep(300)
    }
}

fn waiter() {
    lock m {}
}

fn child() {
    return proc.spawn(["sleep", "0.3"]).wait().code
}

go holder()
<-held
let w = go waiter()
print(child())
wait w
"#;
    dir.write("main.csp", src);
    let out = csp(&dir.0, &["run", "--profile", "b.pb.gz", "main.csp"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lock = pprof(&dir.0, &["-sample_index=blocked", "-tagfocus=wait=^lock$", "-top"], "b.pb.gz");
    assert_eq!(top(&lock).first().map(String::as_str), Some("waiter"), "{lock}");
    let io = pprof(&dir.0, &["-sample_index=blocked", "-tagfocus=wait=^io$", "-top"], "b.pb.gz");
    assert_eq!(top(&io).first().map(String::as_str), Some("child"), "{io}");
}

#[test]
fn the_profile_is_written_however_the_program_ends() {
    if !have_go("reading a profile with go tool pprof") {
        return;
    }
    let dir = Dir::new("ends");
    // A fifth of a second of CPU whatever the build: a fixed count of
    // iterations took less than two 10 ms periods in a release build.
    let spin = "fn spin(until) {\n    let s = 0\n    for i in 0..1000000000 {\n        s += i % 3\n        if i % 1000 == 0 && now() > until { break }\n    }\n    return s\n}\nspin(now() + 200)\n";
    for (end, code) in [("exit(3)\n", 3), ("throw \"boom\"\n", 1), ("let c = chan()\n<-c\n", 3)] {
        dir.write("main.csp", &format!("{spin}{end}"));
        let out = csp(&dir.0, &["run", "--profile", "p.pb.gz", "main.csp"]);
        assert_eq!(out.status.code(), Some(code), "{end}: {}", String::from_utf8_lossy(&out.stderr));
        let report = pprof(&dir.0, &["-top"], "p.pb.gz");
        assert_eq!(top(&report).first().map(String::as_str), Some("spin"), "{end}: {report}");
    }
}

#[test]
fn a_profile_can_go_to_dev_null() {
    // To measure the profiler's cost without keeping its files (docs/profiling.md).
    let dir = Dir::new("null");
    dir.write("main.csp", "print(1)\n");
    let out = csp(&dir.0, &["run", "--profile", "/dev/null", "main.csp"]);
    assert_eq!((out.status.code(), &out.stdout[..], &out.stderr[..]), (Some(0), &b"1\n"[..], &b""[..]));
}

/// `GET path` from a local HTTP server; None until it answers.
fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    Some(body)
}

#[test]
fn the_web_ui_draws_the_flame_graph() {
    if !have_go("serving a profile's flame graph with go tool pprof -http") {
        return;
    }
    let dir = Dir::new("http");
    let file = profiled(&dir, &[]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new("go")
        .args(["tool", "pprof", "-no_browser", &format!("-http=127.0.0.1:{port}"), file])
        .current_dir(&dir.0)
        .env("HOME", &dir.0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("go tool pprof -http");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let page = loop {
        if let Some(page) = http_get(port, "/ui/flamegraph") {
            break page;
        }
        assert!(std::time::Instant::now() < deadline, "go tool pprof -http did not answer");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let _ = server.kill();
    let _ = server.wait();
    assert!(page.starts_with("HTTP/1.0 200"), "{}", &page[..page.len().min(300)]);
    // The graph's frames are in the page as JSON (its quotes escaped, or
    // not, by pprof's version): the hot function, called from the fiber's.
    for name in ["hot", "worker"] {
        let (escaped, plain) = (format!("\\u0022{name}\\u0022"), format!("\"{name}\""));
        assert!(page.contains(&escaped) || page.contains(&plain), "no {name} frame in the flame graph");
    }
}

#[test]
fn compiling_before_the_first_slice_is_startup() {
    if !have_go("reading a profile with go tool pprof") {
        return;
    }
    let dir = Dir::new("startup");
    let mut src: String = (0..1500).map(|i| format!("fn f{i}(x) {{\n    return [x + {i}, {{a: x}}]\n}}\n")).collect();
    src.push_str("print(f7(1)[0])\n");
    dir.write("main.csp", &src);
    let out = csp(&dir.0, &["run", "--profile", "p.pb.gz", "--profile-hz", "1000", "main.csp"]);
    assert_eq!(out.stdout, b"8\n", "{}", String::from_utf8_lossy(&out.stderr));
    let report = pprof(&dir.0, &["-top"], "p.pb.gz");
    assert_eq!(top(&report).first().map(String::as_str), Some("[startup]"), "{report}");
}

#[test]
fn trace_and_profile_together() {
    let dir = Dir::new("both");
    dir.write("main.csp", "let c = chan()\ngo fn() { c <- 1 }()\nprint(<-c)\n");
    let out = csp(&dir.0, &["run", "--trace", "t.json", "--profile", "p.pb.gz", "main.csp"]);
    assert_eq!(out.stdout, b"1\n", "{}", String::from_utf8_lossy(&out.stderr));
    let trace = std::fs::read_to_string(dir.0.join("t.json")).unwrap();
    assert!(trace.starts_with("{\"traceEvents\":[") && trace.trim_end().ends_with("]}"), "{trace}");
    let profile = std::fs::read(dir.0.join("p.pb.gz")).unwrap();
    assert_eq!(profile[..2], [0x1f, 0x8b], "gzip's magic number");
}
