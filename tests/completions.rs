//! `csp completions bash|zsh|fish`: the table behind the scripts matches
//! `csp --help`, each script parses in its shell, and bash's offers the right
//! words. zsh and fish are optional: without them a test prints what it
//! skipped and passes, unless the environment variable `CI` is set.

use csp::completions::{COMMANDS, OPTIONS};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn csp(args: &[&str]) -> Output {
    Command::new(CSP).args(args).output().unwrap()
}

fn script(shell: &str) -> String {
    let out = csp(&["completions", shell]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A temp dir holding the script for `shell`, `a.csp`, `notes.txt` and `sub/`;
/// removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(shell: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("csp_completions_{shell}_{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("a.csp"), "").unwrap();
        std::fs::write(d.join("notes.txt"), "").unwrap();
        std::fs::write(d.join("completions"), script(shell)).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn shell(sh: &str, args: &[&str], dir: &Path) -> String {
    let out = Command::new(sh).args(args).current_dir(dir).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{sh} {args:?}: {text}");
    text
}

fn have(sh: &str) -> bool {
    if Command::new(sh).arg("-c").arg("true").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("`{sh}` is not installed but CI is set: apt-get install {sh}");
    }
    eprintln!("skipped the {sh} completions test: `{sh}` not found (Debian: apt-get install {sh})");
    false
}

#[test]
fn the_table_has_every_command_and_option_of_the_help() {
    let help = String::from_utf8(csp(&["--help"]).stdout).unwrap();
    let mut flags: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
    flags.extend(COMMANDS.iter().flat_map(|c| c.flags.iter().map(|f| f.0)));
    for word in help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        if word.starts_with("--") && word.len() > 2 {
            assert!(flags.contains(&word), "{word} is in `csp --help` but not in src/completions.rs");
        }
    }
    for o in OPTIONS {
        assert!(help.contains(o.name), "{} is completed but not in `csp --help`", o.name);
    }
    for line in help.lines() {
        let Some(rest) = line.strip_prefix("  csp ").filter(|r| !r.starts_with(' ')) else { continue };
        let word = rest.split_whitespace().next().unwrap_or("");
        if word.chars().all(|c| c.is_ascii_lowercase()) && !word.is_empty() {
            assert!(COMMANDS.iter().any(|c| c.name == word), "`csp {word}` is not in src/completions.rs");
        }
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    for args in [&["completions", "tcsh"][..], &["completions"], &["completions", "bash", "zsh"]] {
        let out = csp(args);
        assert_eq!(out.status.code(), Some(64), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("bash, zsh or fish"));
    }
}

/// What bash's `_csp` offers for the words of `line` (the last one being
/// completed).
fn bash_candidates(dir: &Path, line: &[&str]) -> Vec<String> {
    let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let sim = format!(
        "source ./completions; COMP_WORDS=({}); COMP_CWORD={}; _csp; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words.join(" "),
        line.len() - 1
    );
    let mut out: Vec<String> =
        shell("bash", &["-c", &sim], dir).lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
    out.sort();
    out
}

#[test]
fn bash_script_parses_registers_and_offers_commands_options_and_files() {
    let dir = Dir::new("bash");
    shell("bash", &["-n", "completions"], &dir.0);
    let spec = shell("bash", &["-c", "source ./completions; complete -p csp"], &dir.0);
    assert!(spec.contains("-F _csp") && spec.trim_end().ends_with(" csp"), "{spec}");

    let mut top: Vec<String> = COMMANDS.iter().map(|c| c.name.to_string()).collect();
    top.extend(["a.csp".to_string(), "sub".to_string()]);
    top.sort();
    assert_eq!(bash_candidates(&dir.0, &["csp", ""]), top);

    let mut opts: Vec<String> = OPTIONS.iter().map(|o| o.name.to_string()).collect();
    opts.sort();
    assert_eq!(bash_candidates(&dir.0, &["csp", "run", "--"]), opts);
    assert_eq!(bash_candidates(&dir.0, &["csp", "run", "--max-f"]), ["--max-fibers"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "--seed", "5", "run", ""]), ["a.csp", "sub"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "run", "a.csp", "n"]), ["notes.txt"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "--trace", "n"]), ["notes.txt"]);
    assert!(bash_candidates(&dir.0, &["csp", "--seed", ""]).is_empty());
    assert_eq!(bash_candidates(&dir.0, &["csp", "fmt", "--"]), ["--check"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "test", "--b"]), ["--bench", "--benchtime"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "run", "--cov"]), ["--coverage", "--coverage-std"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "completions", ""]), ["bash", "fish", "zsh"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "ch"]), ["check"]);
    // The package commands and `build` (docs/packages.md, docs/build.md).
    assert_eq!(bash_candidates(&dir.0, &["csp", "bu"]), ["build"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "build", "--"]), ["--offline", "--output"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "build", ""]), ["a.csp", "sub"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "add", "--"]), ["--offline", "--rev", "--sha256"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "fetch", "--"]), ["--offline"]);
    assert_eq!(bash_candidates(&dir.0, &["csp", "up"]), ["update"]);
}

#[test]
fn zsh_script_parses() {
    if !have("zsh") {
        return;
    }
    let dir = Dir::new("zsh");
    shell("zsh", &["-n", "completions"], &dir.0);
    // Sourced in an interactive-style session it registers itself.
    let out = shell(
        "zsh",
        &["-fc", "autoload -U compinit && compinit -u && source ./completions && print ${_comps[csp]}"],
        &dir.0,
    );
    assert_eq!(out.trim(), "_csp");
}

#[test]
fn fish_script_parses_and_offers_commands_options_and_files() {
    if !have("fish") {
        return;
    }
    let dir = Dir::new("fish");
    shell("fish", &["-n", "completions"], &dir.0);
    let complete = |line: &str| {
        let out = shell("fish", &["--no-config", "-c", &format!("source ./completions; complete -C '{line}'")], &dir.0);
        out.lines().map(|l| l.split('\t').next().unwrap().to_string()).collect::<Vec<_>>()
    };
    let top = complete("csp ");
    for c in COMMANDS {
        assert!(top.contains(&c.name.to_string()), "{top:?}");
    }
    assert!(top.contains(&"a.csp".to_string()) && !top.contains(&"notes.txt".to_string()), "{top:?}");
    let opts = complete("csp run --");
    for o in OPTIONS {
        assert!(opts.contains(&o.name.to_string()), "{opts:?}");
    }
    assert_eq!(complete("csp completions "), ["bash", "fish", "zsh"]);
    assert_eq!(complete("csp run su"), ["sub/"]);
    assert!(complete("csp fmt --").contains(&"--check".to_string()));
}
