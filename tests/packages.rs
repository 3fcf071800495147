//! Packages (docs/packages.md) end to end through the `csp` binary: real git
//! repositories made in temporary folders (`file://` URLs), archives served by
//! a small HTTP server thread, and a `CSP_HOME` of each test's own.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// A temporary folder with `home/` (the test's CSP_HOME) and `app/` (its
/// project), removed on drop.
struct World {
    dir: PathBuf,
}

impl World {
    fn new(tag: &str) -> World {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "csp_pkg_{tag}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("app")).unwrap();
        World { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    fn app(&self) -> PathBuf {
        self.dir.join("app")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.join(rel)).unwrap_or_default()
    }

    /// `csp ARGS` in the project's folder, killed after two minutes.
    fn csp(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.cmd(args).output().unwrap();
        result(out)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("timeout");
        c.args(["-s", "KILL", "120", CSP]).args(args).current_dir(self.app());
        c.env("CSP_HOME", self.home()).env("NO_COLOR", "1");
        c
    }

    /// `csp ARGS`, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.csp(args);
        assert_eq!(code, 0, "csp {args:?} exited {code}:\n{out}\n{err}");
        out
    }

    /// A git repository `name` with `files`, committed and tagged `tag`; its `file://` URL.
    fn repo(&self, name: &str, files: &[(&str, &str)], tag: &str) -> String {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        self.commit(name, files, tag);
        format!("file://{}", dir.display())
    }

    /// Writes `files` into repository `name`, commits, and tags (moving the tag).
    fn commit(&self, name: &str, files: &[(&str, &str)], tag: &str) {
        let dir = self.dir.join(name);
        for (f, text) in files {
            self.write(&format!("{name}/{f}"), text);
        }
        git(&dir, &["add", "-A"]);
        let who = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"];
        git(&dir, &[&who[..], &["commit", "-q", "-m", "c"]].concat());
        if !tag.is_empty() {
            git(&dir, &["-c", "tag.gpgsign=false", "tag", "-f", tag]);
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn result(out: Output) -> (i32, String, String) {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("git is installed");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

const APP: &str = "import \"greet\"\nimport \"greet/sub/extra\"\nprint(greet.hello(\"you\"), extra.x)\n";

fn greet(version: &str) -> Vec<(&'static str, String)> {
    vec![
        ("lib.csp", format!("fn hello(n) {{ return \"hello ${{n}} from {version}\" }}\n")),
        ("sub/extra.csp", "let x = 42\n".to_string()),
    ]
}

fn files<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(a, b)| (*a, b.as_str())).collect()
}

/// The `commit = "..."` of package `name` in the lock.
fn locked_commit(lock: &str, name: &str) -> String {
    let at = lock.find(&format!("name = \"{name}\"")).unwrap_or_else(|| panic!("{name} not in\n{lock}"));
    let rest = &lock[at..];
    let c = rest.find("commit = \"").unwrap() + 10;
    rest[c..c + 40].to_string()
}

#[test]
fn add_pins_a_git_tag_and_runs_it() {
    let w = World::new("add");
    let url = w.repo("greet", &files(&greet("v1")), "v1");
    w.write("app/main.csp", APP);
    w.ok(&["add", "greet", &url, "--rev", "v1"]);
    let toml = w.read("app/csp.toml");
    assert!(toml.contains("greet = { git = ") && toml.contains("rev = \"v1\""), "{toml}");
    let lock = w.read("app/csp.lock");
    assert!(lock.contains("hash = \"sha256:") && lock.contains("required_by = [\"csp.toml\"]"), "{lock}");
    assert_eq!(locked_commit(&lock, "greet").len(), 40);
    assert_eq!(w.ok(&["run", "main.csp"]), "hello you from v1 42\n");
    // A script in a sub-folder finds the project by walking up.
    w.write("app/tools/t.csp", "import \"greet\"\nprint(greet.hello(\"t\"))\n");
    assert_eq!(w.ok(&["tools/t.csp"]), "hello t from v1\n");
}

#[test]
fn a_moved_tag_changes_nothing_until_update() {
    let w = World::new("moved");
    let url = w.repo("greet", &files(&greet("v1")), "v1");
    w.write("app/main.csp", APP);
    w.ok(&["add", "greet", &url, "--rev", "v1"]);
    let before = locked_commit(&w.read("app/csp.lock"), "greet");
    // The tag moves to a new commit; a cold cache fetches the locked one.
    w.commit("greet", &files(&greet("v2")), "v1");
    std::fs::remove_dir_all(w.home()).unwrap();
    w.ok(&["fetch"]);
    assert_eq!(w.ok(&["run", "main.csp"]), "hello you from v1 42\n");
    assert_eq!(locked_commit(&w.read("app/csp.lock"), "greet"), before);
    // `csp update` moves to where the tag is now.
    w.ok(&["update", "greet"]);
    assert_ne!(locked_commit(&w.read("app/csp.lock"), "greet"), before);
    assert_eq!(w.ok(&["run", "main.csp"]), "hello you from v2 42\n");
    let (code, _, err) = w.csp(&["update", "nope"]);
    assert_eq!((code, err.contains("no package 'nope'")), (1, true), "{err}");
}

#[test]
fn update_follows_a_branch() {
    let w = World::new("branch");
    let url = w.repo("greet", &files(&greet("one")), "");
    w.write("app/main.csp", APP);
    w.ok(&["add", "greet", &url, "--rev", "main"]);
    w.commit("greet", &files(&greet("two")), "");
    assert_eq!(w.ok(&["run", "main.csp"]), "hello you from one 42\n");
    w.ok(&["update"]);
    assert_eq!(w.ok(&["run", "main.csp"]), "hello you from two 42\n");
}

#[test]
fn transitive_dependencies_are_locked() {
    let w = World::new("trans");
    let b = w.repo("bpkg", &[("lib.csp", "fn twice(x) { return x * 2 }\n")], "v1");
    let a_toml = format!("[dependencies]\nbpkg = {{ git = \"{b}\", rev = \"v1\" }}\n");
    let a = w.repo(
        "apkg",
        &[("csp.toml", &a_toml), ("lib.csp", "import \"bpkg\"\nfn quad(x) { return bpkg.twice(bpkg.twice(x)) }\n")],
        "v1",
    );
    w.write("app/main.csp", "import \"apkg\"\nprint(apkg.quad(5))\n");
    w.ok(&["add", "apkg", &a, "--rev", "v1"]);
    let lock = w.read("app/csp.lock");
    assert!(lock.contains("name = \"bpkg\"") && lock.contains("required_by = [\"apkg\"]"), "{lock}");
    locked_commit(&lock, "bpkg");
    assert_eq!(w.ok(&["run", "main.csp"]), "20\n");
}

#[test]
fn two_revisions_of_one_package_are_an_error_naming_both() {
    let w = World::new("conflict");
    let b = w.repo("bpkg", &[("lib.csp", "let v = 1\n")], "v1");
    w.commit("bpkg", &[("lib.csp", "let v = 2\n")], "v2");
    let a_toml = format!("[dependencies]\nbpkg = {{ git = \"{b}\", rev = \"v1\" }}\n");
    let a = w.repo("apkg", &[("csp.toml", &a_toml), ("lib.csp", "import \"bpkg\"\nlet v = bpkg.v\n")], "v1");
    w.write(
        "app/csp.toml",
        &format!(
            "[dependencies]\napkg = {{ git = \"{a}\", rev = \"v1\" }}\nbpkg = {{ git = \"{b}\", rev = \"v2\" }}\n"
        ),
    );
    let (code, _, err) = w.csp(&["fetch"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("package 'bpkg' is required at two revisions"), "{err}");
    assert!(err.contains("at v2 by csp.toml") && err.contains("at v1 by apkg"), "{err}");
    assert!(!w.app().join("csp.lock").exists());
}

#[test]
fn a_tampered_cache_stops_the_run() {
    let w = World::new("tamper");
    let url = w.repo("greet", &files(&greet("v1")), "v1");
    w.write("app/main.csp", APP);
    w.ok(&["add", "greet", &url, "--rev", "v1"]);
    let commit = locked_commit(&w.read("app/csp.lock"), "greet");
    let cached = w.home().join("src").join(format!("git-{commit}")).join("lib.csp");
    std::fs::write(&cached, "fn hello(n) { return \"evil\" }\n").unwrap();
    let (code, out, err) = w.csp(&["run", "main.csp"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("package 'greet' in the cache") && err.contains("does not match csp.lock"), "{err}");
    assert!(err.contains("run `csp fetch`"), "{err}");
    // `csp fetch` puts the locked files back.
    w.ok(&["fetch"]);
    assert_eq!(w.ok(&["run", "main.csp"]), "hello you from v1 42\n");
}

#[test]
fn offline_runs_from_a_warm_cache_and_fails_clearly_on_a_cold_one() {
    let w = World::new("offline");
    let url = w.repo("greet", &files(&greet("v1")), "v1");
    w.write("app/main.csp", APP);
    w.ok(&["add", "greet", &url, "--rev", "v1"]);
    // Warm: the repository may even be gone.
    std::fs::remove_dir_all(w.dir.join("greet")).unwrap();
    assert_eq!(w.ok(&["--offline", "run", "main.csp"]), "hello you from v1 42\n");
    // Cold.
    std::fs::remove_dir_all(w.home()).unwrap();
    let (code, _, err) = w.csp(&["run", "--offline", "main.csp"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot load package 'greet'") && err.contains("not in the cache"), "{err}");
    assert!(err.contains("--offline"), "{err}");
    let (code, _, err) = w.csp(&["fetch", "--offline"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("greet") && err.contains("--offline"), "{err}");
}

#[test]
fn two_fetches_at_once_share_the_cache() {
    let w = World::new("race");
    let url = w.repo("greet", &files(&greet("v1")), "v1");
    let b = w.repo("bpkg", &[("lib.csp", "let v = 7\n")], "v1");
    w.write("app/main.csp", &format!("{APP}import \"bpkg\"\nprint(bpkg.v)\n"));
    w.ok(&["add", "greet", &url, "--rev", "v1"]);
    w.ok(&["add", "bpkg", &b, "--rev", "v1"]);
    for _ in 0..3 {
        std::fs::remove_dir_all(w.home()).unwrap();
        let kids: Vec<_> = (0..2).map(|_| w.cmd(&["fetch"]).spawn().unwrap()).collect();
        for k in kids {
            let (code, out, err) = result(k.wait_with_output().unwrap());
            assert_eq!(code, 0, "{out}{err}");
        }
        assert_eq!(w.ok(&["run", "main.csp"]), "hello you from v1 42\n7\n");
    }
}

#[test]
fn path_dependencies_need_no_network_nor_lock() {
    let w = World::new("path");
    w.write("app/vendor/util/lib.csp", "import \"util/more\"\nlet n = more.m + 1\n");
    w.write("app/vendor/util/more.csp", "let m = 1\n");
    w.write("app/csp.toml", "[dependencies]\nutil = { path = \"vendor/util\" }\n");
    w.write("app/main.csp", "import \"util\"\nprint(util.n)\n");
    assert_eq!(w.ok(&["run", "main.csp"]), "2\n");
    w.ok(&["fetch"]);
    assert!(w.read("app/csp.lock").contains("source = \"path\""));
    // `csp add` of a folder writes it relative to the project.
    w.write("other/lib.csp", "let o = 3\n");
    w.ok(&["add", "other", "../other"]);
    assert!(w.read("app/csp.toml").contains("other = { path = "), "{}", w.read("app/csp.toml"));
}

#[test]
fn bad_manifests_and_missing_packages_are_reported() {
    let w = World::new("bad");
    w.write("app/main.csp", "import \"nothere\"\nprint(1)\n");
    let (code, _, err) = w.csp(&["run", "main.csp"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no package 'nothere'") && err.contains("csp add nothere"), "{err}");
    w.write("app/csp.toml", "[dependencies]\nnothere = { git = \"x\" \n");
    let (code, _, err) = w.csp(&["run", "main.csp"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("csp.toml") && err.contains("line 2"), "{err}");
    w.write("app/csp.toml", "[dependencies]\nnothere = { svn = \"x\" }\n");
    let (code, _, err) = w.csp(&["fetch"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown key `svn`"), "{err}");
    // A git dependency the lock does not pin yet.
    w.write("app/csp.toml", "[dependencies]\nnothere = { git = \"file:///nonexistent\" }\n");
    let (code, _, err) = w.csp(&["run", "main.csp"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("csp.lock does not pin it") && err.contains("csp fetch"), "{err}");
    let (code, _, err) = w.csp(&["fetch"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("package 'nothere'") && err.contains("cannot clone"), "{err}");
    let (code, _, err) = w.csp(&["add", "Bad", "x"]);
    assert_eq!(code, 64, "{err}");
    let (code, _, err) = w.csp(&["add", "x"]);
    assert_eq!(code, 64, "{err}");
}

/// A one-file HTTP server on a thread: every GET gets the current body.
struct Server {
    port: u16,
    body: Arc<Mutex<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(body: Vec<u8>) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let body = Arc::new(Mutex::new(body));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (body.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut conn) = conn else { continue };
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let data = b.lock().unwrap().clone();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    data.len()
                );
                let _ = conn.write_all(head.as_bytes()).and_then(|_| conn.write_all(&data));
            }
        });
        Server { port, body, stop, thread: Some(thread) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A `.tar.gz` of `files` under a top folder `pkg-1.0/`, made with `tar`.
fn tarball(w: &World, files: &[(&str, &str)]) -> Vec<u8> {
    let src = w.dir.join("tarsrc");
    let _ = std::fs::remove_dir_all(&src);
    for (f, text) in files {
        w.write(&format!("tarsrc/pkg-1.0/{f}"), text);
    }
    let out = w.dir.join("pkg.tar.gz");
    let st = Command::new("tar").arg("-czf").arg(&out).arg("-C").arg(&src).arg("pkg-1.0").status().unwrap();
    assert!(st.success());
    std::fs::read(out).unwrap()
}

#[test]
fn archives_are_pinned_by_sha256() {
    let w = World::new("archive");
    let server = Server::start(tarball(&w, &[("lib.csp", "let v = \"from the archive\"\n")]));
    let url = format!("http://127.0.0.1:{}/pkg-1.0.tar.gz", server.port);
    w.write("app/main.csp", "import \"arch\"\nprint(arch.v)\n");
    w.ok(&["add", "arch", &url]);
    let toml = w.read("app/csp.toml");
    assert!(toml.contains("sha256 = \""), "{toml}");
    assert!(w.read("app/csp.lock").contains("source = \"archive\""));
    assert_eq!(w.ok(&["run", "main.csp"]), "from the archive\n");
    // The archive changes upstream: a cold cache refuses it.
    *server.body.lock().unwrap() = tarball(&w, &[("lib.csp", "let v = \"changed\"\n")]);
    std::fs::remove_dir_all(w.home()).unwrap();
    let (code, _, err) = w.csp(&["fetch"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("package 'arch'") && err.contains("the archive changed"), "{err}");
    let (code, out, err) = w.csp(&["run", "main.csp"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("the archive changed"), "{err}");
}
