//! How a program with worker isolates ends (docs/isolates.md): fibers that
//! modules and jobs leave running on a worker are cancelled at the end, their
//! `finally` blocks run; SIGTERM reaches workers that compute without pause;
//! signals stay the main isolate's.

mod common;

use common::run_sh;
use std::io::Read;
use std::process::{Command, Stdio};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

#[test]
fn fibers_left_on_a_worker_are_cancelled_at_the_end_and_their_cleanup_runs() {
    let dir = std::env::temp_dir().join(format!("csp_iso_end_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A module whose top level starts a fiber blocked for ever, and a job
    // that leaves a fiber ticking behind it.
    let module = r#"
let quit = chan()
go {
    try { <-quit } finally { print("module fiber cleanup") }
}
fn work(x) {
    go {
        try { while true { sleep(10) } } finally { print("job's fiber cleanup") }
    }
    return x * 2
}
"#;
    std::fs::write(dir.join("bg.csp"), module).unwrap();
    let main = dir.join("main.csp");
    std::fs::write(
        &main,
        "import \"std/isolate\"\nimport \"./bg.csp\" as bg\nprint(wait isolate.run(bg.work, 21))\nprint(\"main done\")\n",
    )
    .unwrap();
    let began = std::time::Instant::now();
    let out = Command::new(CSP).args(["--isolates", "1", "run"]).arg(&main).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<&str> = stdout.lines().collect();
    // The main isolate's own copy of the module ends first, then the worker's.
    assert_eq!(lines[..3], ["42", "main done", "module fiber cleanup"], "{stdout}");
    lines[3..].sort();
    assert_eq!(lines[3..], ["job's fiber cleanup", "module fiber cleanup"], "{stdout}");
    assert!(began.elapsed() < std::time::Duration::from_secs(4), "{:?}", began.elapsed());
}

/// A worker computing without pause looks for signals between slices: it
/// must leave them to the main isolate (it took them and dropped them).
#[test]
fn sigterm_reaches_workers_that_compute_without_pause() {
    let script = common::Script::new(
        "iso_busy_term.csp",
        "import \"std/isolate\"\n\
         fn spin(x) { try { while true {} } finally { print(\"cleanup ${x}\") } }\n\
         let t = go isolate.map(spin, [1, 2])\nsleep(200)\nprint(\"ready\")\nwait t\n",
    );
    for _ in 0..3 {
        let mut child = Command::new(CSP)
            .args(["--isolates", "2", "run", script.path()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 6];
        stdout.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"ready\n");
        let began = std::time::Instant::now();
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(143), "{rest}");
        assert!(began.elapsed() < std::time::Duration::from_secs(3), "{:?}", began.elapsed());
        let mut lines: Vec<&str> = rest.lines().collect();
        lines.sort();
        assert_eq!(lines, ["cleanup 1", "cleanup 2"]);
    }
}

#[test]
fn os_signals_belongs_to_the_main_isolate() {
    let (code, _, err) = run_sh(
        "iso_signals",
        "",
        "import \"std/isolate\"\nimport \"std/os\"\nfn listen() { return os.signals(\"SIGUSR1\") }\nwait isolate.run(listen)\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("os.signals() works in the main isolate only: send its channel to a worker"), "{err}");
}
