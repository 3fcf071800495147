//! The `csp` command starts csp through the embedding API
//! (docs/embedding.md, "The command line"): a flag and the `Options` field it
//! sets give the same run.

use csp::embed::{Caps, Options, Runtime};
use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

/// Random numbers, and `select`'s choice among ready cases: what `--seed` fixes.
const SEEDED: &str = r#"
print([random(1000000) for _ in 0..8])
let a = chan(20)
let b = chan(20)
for i in 0..20 { a <- i; b <- i }
let picks = ""
for _ in 0..20 {
    select {
        case <-a { picks += "a" }
        case <-b { picks += "b" }
    }
}
print(picks)
"#;

/// `src` in a file of its own, for the `csp` command to run.
fn script(name: &str, src: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("csp-embed-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, src).unwrap();
    path
}

fn seeded(seed: u64) -> String {
    let mut rt = Runtime::new(Options { seed: Some(seed), caps: Caps::all(), ..Options::default() });
    rt.eval("seeded.csp", SEEDED).unwrap();
    rt.take_output()
}

#[test]
fn a_seed_repeats_a_run_as_the_command_s_seed_does() {
    let first = seeded(7);
    assert_eq!(first, seeded(7), "the same seed, the same run");
    assert_ne!(first, seeded(8), "another seed, another run");
    let path = script("seeded.csp", SEEDED);
    let out = Command::new(CSP).args(["run", "--seed", "7"]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), first, "`csp run --seed 7` is `Options::seed` 7");
}

#[test]
fn run_program_gives_the_command_s_exit_code_and_report() {
    let src = "print(args())\nlet m = {}\nif len(args()) > 1 { exit(3) }\nprint(m.nope.x)\n";
    let path = script("ends.csp", src);
    let name = path.to_string_lossy().into_owned();
    for args in [vec!["a"], vec!["a", "b"]] {
        let options =
            Options { args: args.iter().map(|s| s.to_string()).collect(), caps: Caps::all(), ..Options::default() };
        let mut rt = Runtime::new(options);
        let got = rt.run_program(&name, src, false);
        let out = Command::new(CSP).env("NO_COLOR", "1").arg("run").arg(&path).args(&args).output().unwrap();
        assert_eq!(Some(got.exit_code), out.status.code(), "{args:?}");
        assert_eq!(got.stderr, String::from_utf8_lossy(&out.stderr), "{args:?}");
        assert_eq!(rt.take_output(), String::from_utf8_lossy(&out.stdout), "{args:?}");
    }
}
