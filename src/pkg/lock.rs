//! `csp.lock`: every package of a project, direct or not, pinned to an exact
//! commit (or archive digest) and a hash of its files. Written by `csp add`,
//! `csp fetch` and `csp update`; read by every run.

use super::manifest::Source;
use std::path::Path;

pub const LOCK: &str = "csp.lock";

/// One pinned package.
#[derive(Clone, Debug, PartialEq)]
pub struct Locked {
    pub name: String,
    pub source: Source,
    /// The git commit, or `sha256:HEX` of an archive's bytes; empty for a path.
    pub commit: String,
    /// `sha256:HEX` of the package's files (see `fetch::tree_hash`); empty for a path.
    pub hash: String,
    /// Who asked for it: `csp.toml` for the project, else the packages' names.
    pub required_by: Vec<String>,
}

#[derive(Default, Debug)]
pub struct Lock {
    pub packages: Vec<Locked>,
}

impl Lock {
    pub fn get(&self, name: &str) -> Option<&Locked> {
        self.packages.iter().find(|p| p.name == name)
    }
}

/// Reads `DIR/csp.lock`; a missing file is an empty lock.
pub fn read(dir: &Path) -> Result<Lock, String> {
    let path = dir.join(LOCK);
    match std::fs::read_to_string(&path) {
        Ok(t) => {
            parse(&t).map_err(|e| format!("{}: {e} (delete it and run `csp fetch` to write it again)", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

pub fn parse(text: &str) -> Result<Lock, String> {
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().lines().next().unwrap_or("").trim().to_string())?;
    if doc.get("version").and_then(|v| v.as_integer()) != Some(1) {
        return Err("not a version 1 lock file".into());
    }
    let mut lock = Lock::default();
    let Some(list) = doc.get("package") else { return Ok(lock) };
    let Some(list) = list.as_array_of_tables() else { return Err("`package` must be [[package]] tables".into()) };
    for t in list.iter() {
        let s = |k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let name = s("name").ok_or("a [[package]] without a name")?;
        let need = |k: &str| s(k).ok_or_else(|| format!("package '{name}' has no `{k}`"));
        let source = match need("source")?.as_str() {
            "git" => Source::Git { url: need("url")?, rev: need("rev")? },
            "archive" => Source::Archive { url: need("url")?, sha256: need("sha256")? },
            "path" => Source::Path { path: need("path")? },
            other => return Err(format!("package '{name}': unknown source '{other}'")),
        };
        let (commit, hash) = match source {
            Source::Path { .. } => (String::new(), String::new()),
            _ => (need("commit")?, need("hash")?),
        };
        let required_by = t
            .get("required_by")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        lock.packages.push(Locked { name, source, commit, hash, required_by });
    }
    Ok(lock)
}

/// The lock's text: packages by name, one `[[package]]` table each.
pub fn render(lock: &Lock) -> String {
    let q = |s: &str| toml_edit::Value::from(s).to_string().trim().to_string();
    let mut out =
        String::from("# Written by csp (csp add, csp fetch, csp update); do not edit by hand.\nversion = 1\n");
    let mut pkgs = lock.packages.clone();
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    for p in &pkgs {
        out.push_str(&format!("\n[[package]]\nname = {}\n", q(&p.name)));
        match &p.source {
            Source::Git { url, rev } => {
                out.push_str(&format!("source = \"git\"\nurl = {}\nrev = {}\n", q(url), q(rev)));
            }
            Source::Archive { url, sha256 } => {
                out.push_str(&format!("source = \"archive\"\nurl = {}\nsha256 = {}\n", q(url), q(sha256)));
            }
            Source::Path { path } => out.push_str(&format!("source = \"path\"\npath = {}\n", q(path))),
        }
        if !p.commit.is_empty() {
            out.push_str(&format!("commit = {}\nhash = {}\n", q(&p.commit), q(&p.hash)));
        }
        let by: Vec<String> = p.required_by.iter().map(|r| q(r)).collect();
        out.push_str(&format!("required_by = [{}]\n", by.join(", ")));
    }
    out
}

/// Writes `DIR/csp.lock` (through a temporary file and a rename).
pub fn write(dir: &Path, lock: &Lock) -> Result<(), String> {
    let path = dir.join(LOCK);
    let tmp = dir.join(format!(".{LOCK}.{}", std::process::id()));
    std::fs::write(&tmp, render(lock))
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let lock = Lock {
            packages: vec![
                Locked {
                    name: "b".into(),
                    source: Source::Git { url: "file:///x \"q\"".into(), rev: "v1".into() },
                    commit: "abc".into(),
                    hash: "sha256:00".into(),
                    required_by: vec!["csp.toml".into(), "a".into()],
                },
                Locked {
                    name: "a".into(),
                    source: Source::Path { path: "lib/a".into() },
                    commit: String::new(),
                    hash: String::new(),
                    required_by: vec!["csp.toml".into()],
                },
            ],
        };
        let text = render(&lock);
        let back = parse(&text).unwrap();
        assert_eq!(back.packages.len(), 2);
        assert_eq!(back.get("b"), lock.packages.first());
        assert!(text.find("name = \"a\"").unwrap() < text.find("name = \"b\"").unwrap());
    }
}
