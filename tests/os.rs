//! std/fs, std/os, `eprint` and `exit` through the real `csp` binary, for what
//! the in-process golden tests cannot see: real stderr and its ordering with
//! stdout, exit statuses, permissions, bytes that are not UTF-8, the working
//! directory, the REPL, and cancelling a fiber blocked on the disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A temp directory of its own, removed (with its contents) on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let p = std::env::temp_dir().join(format!("csp_os_{}_{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    /// Writes `src` to `name.csp` inside; its path.
    fn script(&self, name: &str, src: &str) -> PathBuf {
        let p = self.0.join(format!("{name}.csp"));
        std::fs::write(&p, src).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Undo chmod 000 so the tree can be removed.
        for e in ["secret", "locked"] {
            let _ = set_mode(&self.0.join(e), 0o755);
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn set_mode(p: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
}

fn run(dir: &TempDir, src: &str) -> Output {
    let script = dir.script("main", src);
    Command::new(CSP).arg("run").arg(&script).current_dir(dir.path()).env("NO_COLOR", "1").output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// root reads and writes files whatever their mode: permission tests cannot fail.
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `run` as the unprivileged user `nobody` (65534), for permission tests when
/// the tests run as root (as in CI): a copy of the binary in the temp folder,
/// which that user can reach.
fn run_as_nobody(dir: &TempDir, src: &str) -> Output {
    use std::os::unix::process::CommandExt;
    let script = dir.script("main", src);
    let bin = dir.path().join("csp");
    std::fs::copy(CSP, &bin).unwrap();
    set_mode(dir.path(), 0o755).unwrap();
    let mut cmd = Command::new(&bin);
    cmd.arg("run").arg(&script).current_dir(dir.path()).env("NO_COLOR", "1");
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Another test thread forking while the copy was open for writing keeps
    // it open in that child until its exec: "Text file busy" for a moment.
    for _ in 0..100 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            r => return r.unwrap(),
        }
    }
    panic!("{} stayed busy", bin.display())
}

#[test]
fn eprint_goes_to_stderr() {
    let d = TempDir::new();
    let o = run(&d, "print(\"out\")\neprint(\"err\", 1, [\"x\"])\n");
    assert_eq!(out(&o), "out\n");
    assert_eq!(err(&o), "err 1 [\"x\"]\n");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn eprint_keeps_order_with_stdout() {
    let d = TempDir::new();
    let script = d.script("main", "print(\"1\")\neprint(\"2\")\nprint(\"3\")\neprint(\"4\")\n");
    // Both streams into one pipe, as on a terminal.
    let o = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{CSP} run {} 2>&1", script.display()))
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out(&o), "1\n2\n3\n4\n");
}

#[test]
fn exit_status_and_flushed_output() {
    let d = TempDir::new();
    let o = run(&d, "for i in 0..3 { print(i) }\ntry { exit(3) } finally { print(\"finally\") }\nprint(\"after\")\n");
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(out(&o), "0\n1\n2\n");
    assert_eq!(err(&o), "");
}

#[test]
fn exit_in_a_fiber_ends_the_program() {
    let d = TempDir::new();
    let src = "go { sleep(5)\n print(\"fiber\")\n exit(9) }\ngo { try { sleep(100000) } finally { print(\"no\") } }\nsleep(100000)\n";
    let o = run(&d, src);
    assert_eq!(o.status.code(), Some(9));
    assert_eq!(out(&o), "fiber\n");
}

#[test]
fn exit_ends_the_repl_with_its_status() {
    let d = TempDir::new();
    let mut child = Command::new(CSP)
        .env("NO_COLOR", "1")
        .env("HOME", d.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"print(\"hi\")\nexit(7)\nprint(\"no\")\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", err(&o));
    assert!(out(&o).contains("hi"), "{}", out(&o));
    assert!(!out(&o).contains("no"), "{}", out(&o));
}

#[test]
fn not_utf8_is_a_value_error() {
    let d = TempDir::new();
    std::fs::write(d.path().join("bin.dat"), b"ab\xffcd").unwrap();
    let o = run(&d, "import \"std/fs\"\ntry { fs.read(\"bin.dat\") } catch e { print(e.kind, e.message) }\n");
    assert_eq!(
        out(&o),
        "value cannot read bin.dat as text: not valid UTF-8 at byte 2 (use fs.read_bytes for binary data)\n"
    );
}

#[test]
fn permission_denied_names_the_path() {
    let d = TempDir::new();
    std::fs::write(d.path().join("secret"), "x").unwrap();
    set_mode(&d.path().join("secret"), 0).unwrap();
    std::fs::create_dir_all(d.path().join("locked/inner")).unwrap();
    set_mode(&d.path().join("locked"), 0).unwrap();
    let src = "import \"std/fs\"\n\
               for f in [fn() => fs.read(\"secret\"), fn() => fs.write(\"secret\", \"y\"), fn() => fs.walk(\".\"), fn() => fs.open(\"secret\")] {\n\
               try { f()\n print(\"ok\") } catch e { print(e.kind, e.message) }\n}\n";
    let o = if is_root() { run_as_nobody(&d, src) } else { run(&d, src) };
    assert_eq!(
        out(&o),
        "io cannot read secret: Permission denied\nio cannot write secret: Permission denied\n\
         io cannot list ./locked: Permission denied\nio cannot open secret: Permission denied\n"
    );
}

#[test]
fn chdir_moves_relative_paths() {
    let d = TempDir::new();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("sub/f.txt"), "inside").unwrap();
    let src = "import \"std/fs\"\nimport \"std/os\"\nimport \"std/path\"\n\
               let before = os.cwd()\nos.chdir(\"sub\")\n\
               print(fs.read(\"f.txt\"), os.cwd() == path.join(before, \"sub\"), path.abs(\"x\") == path.join(before, \"sub/x\"))\n";
    let o = run(&d, src);
    assert_eq!(out(&o), "inside true true\n", "{}", err(&o));
}

#[test]
fn setenv_reaches_the_process_environment() {
    let d = TempDir::new();
    let src = "import \"std/os\"\nos.setenv(\"CSP_CHILD_VAR\", \"42\")\nprint(os.env(\"CSP_CHILD_VAR\"), os.env(\"CSP_FROM_PARENT\"))\n";
    let script = d.script("main", src);
    let o = Command::new(CSP).arg("run").arg(&script).env("CSP_FROM_PARENT", "p").output().unwrap();
    assert_eq!(out(&o), "42 p\n");
}

/// A fiber blocked on a file that never opens (a FIFO with no writer) can be
/// cancelled, and the abandoned job does not keep the program from ending.
#[test]
fn cancelling_a_blocked_read() {
    let d = TempDir::new();
    let fifo = d.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    let src = "import \"std/fs\"\nlet t = go { fs.read(\"fifo\") }\nsleep(20)\nt.cancel()\n\
               try { wait t } catch e { print(e.message) }\nprint(\"done\")\n";
    let script = d.script("main", src);
    // A program that waits for the abandoned job would hang: `timeout` says 124.
    let o = Command::new("timeout").arg("10").arg(CSP).arg("run").arg(&script).current_dir(d.path()).output().unwrap();
    assert_eq!(out(&o), "cancelled\ndone\n", "{}", err(&o));
    assert_eq!(o.status.code(), Some(0));
}

/// Internal `__` names never reach the user: not in suggestions, module
/// errors, traces or printed values.
#[test]
fn internal_names_stay_hidden() {
    let d = TempDir::new();
    let o = run(&d, "import \"std/fs\"\nfs.reed(\"x\")\n");
    assert!(err(&o).contains("module 'fs' has no 'reed'"), "{}", err(&o));
    assert!(!err(&o).contains("__"), "{}", err(&o));
    let o = run(&d, "print(__fs_reed)\n");
    assert!(err(&o).contains("undefined name"), "{}", err(&o));
    assert!(!err(&o).contains("did you mean"), "{}", err(&o));
    let o = run(&d, "eprnt(1)\n");
    assert!(err(&o).contains("did you mean `eprint`?"), "{}", err(&o));
    let o = run(&d, "import \"std/fs\"\nfn load() { return fs.read(\"missing.txt\") }\nload()\n");
    assert!(err(&o).contains("cannot read missing.txt: No such file or directory"), "{}", err(&o));
    assert!(err(&o).contains("at load"), "{}", err(&o));
    assert!(!err(&o).contains("__"), "{}", err(&o));
    let o = run(&d, "import \"std/os\"\nprint(os.env)\n");
    assert_eq!(out(&o), "<fn os.env>\n");
}

#[test]
fn temp_names_are_fresh() {
    let d = TempDir::new();
    let src = "import \"std/fs\"\nlet a = fs.temp_dir(\"x\")\nlet b = fs.temp_dir(\"x\")\nprint(a != b)\n\
               fs.remove_all(a)\nfs.remove_all(b)\n";
    assert_eq!(out(&run(&d, src)), "true\n");
}
