//! `csp add NAME URL [--rev REV] [--sha256 HEX]`, `csp fetch`, `csp update [NAME]`.
//! Exit codes: 0 done, 1 failed (the message says what to do), 64 bad command line.

use super::manifest::{self, Source};
use super::{resolve, Mode};
use std::path::{Path, PathBuf};

/// Runs a package command; its exit code.
pub fn run(cmd: &str, args: &[String], offline: bool) -> i32 {
    let r = match cmd {
        "add" => add(args, offline),
        "fetch" if args.is_empty() => project().and_then(|root| done(&root, &Mode::Fetch, offline)),
        "fetch" => Err((64, "`csp fetch` takes no arguments".into())),
        "update" if args.len() <= 1 => {
            project().and_then(|root| done(&root, &Mode::Update(args.first().cloned()), offline))
        }
        _ => Err((64, "`csp update` takes at most one NAME".into())),
    };
    match r {
        Ok(()) => 0,
        Err((code, msg)) => {
            if code == 64 {
                crate::err_println!(
                    "csp: {msg}\nusage: csp add NAME URL [--rev REV] [--sha256 HEX] | csp fetch | csp update [NAME]"
                );
            } else {
                crate::err_println!("csp: {msg}");
            }
            code
        }
    }
}

type Res = Result<(), (i32, String)>;

fn fail(e: String) -> (i32, String) {
    (1, e)
}

/// The folder of the `csp.toml` at or above the working directory.
fn project() -> Result<PathBuf, (i32, String)> {
    manifest::find_root(Path::new("."))
        .ok_or_else(|| (1, "no csp.toml in this folder or above it (`csp add NAME URL` starts one)".to_string()))
}

/// Resolves, writes the lock, and says what is pinned.
fn done(root: &Path, mode: &Mode, offline: bool) -> Res {
    let before = super::lock::read(root).map_err(fail)?;
    let r = resolve(root, mode, offline).map_err(fail)?;
    let mut pkgs = r.lock.packages.clone();
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    for p in &pkgs {
        let at = if p.commit.is_empty() {
            p.source.describe()
        } else {
            format!("{} ({})", p.source.describe(), short(&p.commit))
        };
        match before.get(&p.name) {
            Some(old) if old.commit != p.commit => {
                crate::err_println!("   updated {} {} -> {}", p.name, short(&old.commit), at)
            }
            Some(_) => {}
            None => crate::err_println!("    locked {} {at}", p.name),
        }
    }
    Ok(())
}

fn short(commit: &str) -> &str {
    let c = commit.strip_prefix("sha256:").unwrap_or(commit);
    &c[..c.len().min(12)]
}

fn add(args: &[String], offline: bool) -> Res {
    let mut pos = Vec::new();
    let (mut rev, mut sha) = (None, None);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--rev" | "--sha256" if i + 1 < args.len() => {
                let slot = if args[i] == "--rev" { &mut rev } else { &mut sha };
                *slot = Some(args[i + 1].clone());
                i += 1;
            }
            "--rev" | "--sha256" => return Err((64, format!("{} needs a value", args[i]))),
            a if a.starts_with("--") => return Err((64, format!("unknown option '{a}' for `csp add`"))),
            a => pos.push(a.to_string()),
        }
        i += 1;
    }
    let [name, url] = pos.as_slice() else {
        return Err((64, "`csp add` needs a NAME and a URL (or a folder)".into()));
    };
    if !manifest::valid_name(name) {
        return Err((64, format!("'{name}' is not a package name (lowercase letters, digits, _ and -; not std)")));
    }
    let root = manifest::find_root(Path::new(".")).unwrap_or_else(|| PathBuf::from("."));
    let root = std::fs::canonicalize(&root).map_err(|e| fail(e.to_string()))?;
    let source = if url.starts_with("http") && (url.ends_with(".tar.gz") || url.ends_with(".tgz")) {
        if rev.is_some() {
            return Err((64, "--rev is for git; an archive is pinned by --sha256".into()));
        }
        let sha256 = match sha {
            Some(s) => s.to_ascii_lowercase(),
            None if offline => {
                return Err(fail("an archive's SHA-256 needs a download: give --sha256 or drop --offline".into()))
            }
            None => {
                let (got, _tmp) = super::fetch::download(url).map_err(fail)?;
                crate::err_println!("    sha256 of {url}: {got}");
                got
            }
        };
        Source::Archive { url: url.clone(), sha256 }
    } else if url.contains("://") || url.starts_with("git@") {
        if sha.is_some() {
            return Err((64, "--sha256 is for archives (.tar.gz); git is pinned by commit".into()));
        }
        Source::Git { url: url.clone(), rev: rev.unwrap_or_else(|| "HEAD".into()) }
    } else {
        if rev.is_some() || sha.is_some() {
            return Err((64, "a folder dependency takes neither --rev nor --sha256".into()));
        }
        let dir = std::fs::canonicalize(url).map_err(|e| fail(format!("no folder {url}: {e}")))?;
        let path = dir.strip_prefix(&root).map_or_else(|_| dir.clone(), Path::to_path_buf);
        Source::Path { path: path.to_string_lossy().into_owned() }
    };
    let file = root.join(manifest::MANIFEST);
    let old = std::fs::read_to_string(&file).unwrap_or_default();
    let new = manifest::with_dep(&old, name, &source).map_err(|e| fail(format!("{}: {e}", file.display())))?;
    std::fs::write(&file, &new).map_err(|e| fail(format!("cannot write {}: {e}", file.display())))?;
    let r = done(&root, &Mode::Fetch, offline);
    if r.is_err() {
        // Leave csp.toml as it was when the package cannot be had.
        let _ = if old.is_empty() { std::fs::remove_file(&file) } else { std::fs::write(&file, &old) };
    }
    r
}
