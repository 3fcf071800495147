//! `csp build` (docs/build.md): an executable that runs its program with the
//! modules and packages embedded, moved away from the sources (deleted).

use std::path::PathBuf;
use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("csp_build_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn write(&self, rel: &str, text: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.env("NO_COLOR", "1").output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

const MAIN: &str = r#"import "std/flag"
import "./lib/util.csp"
import "shout"
import "shout/extra/pad"

let p = flag.parser("Greets.")
p.bool("loud", "shout it")
p.rest("who", "whom to greet")
let opts = p.parse()
let who = opts.who.join(" ")
let text = util.greeting(who)
print(opts.loud ? shout.up(text) : pad.pad(text))
if who == "fail" { exit(3) }
if who == "boom" { util.explode() }
"#;

#[test]
fn a_built_app_runs_without_csp_or_its_sources() {
    let src = Dir::new("src");
    let out = Dir::new("out");
    let home = Dir::new("home");
    src.write("app/main.csp", MAIN);
    src.write(
        "app/lib/util.csp",
        "fn greeting(w) { return \"hello, ${w}\" }\n\nfn explode() {\n    throw error(\"it blew up\")\n}\n",
    );
    src.write("app/csp.toml", "[dependencies]\nshout = { path = \"../shout\" }\n");
    src.write("shout/lib.csp", "fn up(s) { return s.upper() + \"!\" }\n");
    src.write("shout/extra/pad.csp", "fn pad(s) { return \"[${s}]\" }\n");
    let app = out.0.join("greeter");
    let (code, o, e) = run(Command::new(CSP)
        .args(["build", "main.csp", "-o"])
        .arg(&app)
        .current_dir(src.0.join("app"))
        .env("CSP_HOME", &home.0));
    assert_eq!(code, 0, "{o}{e}");
    drop(src);
    drop(home);
    let app_cmd = || {
        let mut c = Command::new(&app);
        c.current_dir(&out.0).env_remove("CSP_HOME");
        c
    };
    assert_eq!(run(app_cmd().args(["--loud", "world"])), (0, "HELLO, WORLD!\n".into(), String::new()));
    assert_eq!(run(app_cmd().args(["a", "b"])), (0, "[hello, a b]\n".into(), String::new()));
    let (code, o, _) = run(app_cmd().arg("fail"));
    assert_eq!((code, o.as_str()), (3, "[hello, fail]\n"));
    // std/flag's usage errors: exit 2, named after the program.
    let (code, _, e) = run(app_cmd().arg("--nope"));
    assert_eq!(code, 2, "{e}");
    // An uncaught error's report names the module's file and line, as `csp run` does.
    let (code, _, e) = run(app_cmd().arg("boom"));
    assert_eq!(code, 1, "{e}");
    assert!(e.contains("it blew up") && e.contains("lib/util.csp:4:"), "{e}");
    assert!(e.contains("main.csp:14:"), "{e}");
    // The executable runs from anywhere, also through a symbolic link.
    let link = out.0.join("link");
    std::os::unix::fs::symlink(&app, &link).unwrap();
    assert_eq!(run(Command::new(&link).arg("x").current_dir("/")).1, "[hello, x]\n");
}

#[test]
fn build_reports_bad_input() {
    let d = Dir::new("bad");
    d.write("broken.csp", "let x = \nprint(\n");
    d.write("nopkg.csp", "import \"absent\"\n");
    let csp = || {
        let mut c = Command::new(CSP);
        c.current_dir(&d.0).env("CSP_HOME", d.0.join("home"));
        c
    };
    let (code, _, e) = run(csp().args(["build", "broken.csp", "-o", "b"]));
    assert_eq!(code, 2, "{e}");
    assert!(!d.0.join("b").exists());
    let (code, _, e) = run(csp().args(["build", "nopkg.csp", "-o", "b"]));
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("no package 'absent'"), "{e}");
    let (code, _, e) = run(csp().args(["build", "missing.csp", "-o", "b"]));
    assert_eq!(code, 64, "{e}");
    let (code, _, e) = run(csp().args(["build"]));
    assert_eq!(code, 64, "{e}");
    let (code, _, e) = run(csp().args(["build", "x.csp", "--bogus"]));
    assert_eq!(code, 64, "{e}");
    // Without -o the executable is named after the script.
    d.write("hi.csp", "print(\"hi\")\n");
    assert_eq!(run(csp().args(["build", "hi.csp"])).0, 0);
    assert_eq!(run(&mut Command::new(d.0.join("hi"))), (0, "hi\n".into(), String::new()));
    // A payload damaged after the build is reported, not run as a plain csp.
    let mut bin = std::fs::read(d.0.join("hi")).unwrap();
    let n = bin.len();
    bin[n - 30] ^= 0xff;
    std::fs::write(d.0.join("hi"), bin).unwrap();
    let (code, _, e) = run(&mut Command::new(d.0.join("hi")));
    assert_eq!(code, 70, "{e}");
    assert!(e.contains("damaged"), "{e}");
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("git is installed");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_git_package_travels_inside_the_app() {
    let d = Dir::new("git");
    d.write("repo/lib.csp", "import \"./more.csp\"\nfn twice(x) { return more.check(x) * 2 }\n");
    d.write("repo/more.csp", "fn check(x) {\n    if x < 0 { throw error(\"negative\") }\n    return x\n}\n");
    let repo = d.0.join("repo");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "-qm", "c"],
    );
    d.write("app/main.csp", "import \"twice\"\nprint(twice.twice(int(args()[0])))\n");
    let csp = |args: &[&str]| {
        let mut c = Command::new(CSP);
        c.args(args).current_dir(d.0.join("app")).env("CSP_HOME", d.0.join("home"));
        run(&mut c)
    };
    let url = format!("file://{}", repo.display());
    assert_eq!(csp(&["add", "twice", &url]).0, 0);
    assert_eq!(csp(&["run", "main.csp", "4"]).1, "8\n");
    let app = d.0.join("app.bin");
    assert_eq!(csp(&["build", "--offline", "main.csp", "-o", app.to_str().unwrap()]).0, 0);
    for gone in ["repo", "home", "app"] {
        std::fs::remove_dir_all(d.0.join(gone)).unwrap();
    }
    assert_eq!(run(Command::new(&app).arg("21").current_dir("/")), (0, "42\n".into(), String::new()));
    // The package's own module is named in the report, as `csp run` names it.
    let (code, _, e) = run(Command::new(&app).arg("-1"));
    assert_eq!(code, 1, "{e}");
    assert!(e.contains("negative") && e.contains("more.csp:2:") && e.contains("main.csp:2:"), "{e}");
}
