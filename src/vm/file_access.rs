//! Which files a program's builtins may touch. A program run by `csp` may
//! touch any; a host embedding csp may allow none, or only those under some
//! folders (docs/embedding.md). Every builtin that takes a path asks here
//! first; a refusal is a `denied` error.

use super::{err, ErrorKind, Res};
use std::path::{Component, Path, PathBuf};

#[derive(Clone, Debug, Default)]
pub enum FileAccess {
    /// Any file the process may touch.
    #[default]
    All,
    /// Only files under these folders (absolute, symbolic links resolved).
    Under(Vec<PathBuf>),
}

impl FileAccess {
    /// Only under `roots` (made absolute and resolved now).
    pub fn under(roots: &[PathBuf]) -> FileAccess {
        FileAccess::Under(roots.iter().map(|r| resolve(r)).collect())
    }

    /// The `denied` error unless builtin `who` may touch `path`.
    pub fn check(&self, who: &str, path: &str) -> Res<()> {
        match self {
            FileAccess::All => Ok(()),
            FileAccess::Under(roots) => {
                let p = resolve(Path::new(path));
                if roots.iter().any(|r| p.starts_with(r)) {
                    return Ok(());
                }
                err(
                    ErrorKind::Denied,
                    format!("{who}(): access to {path} is denied (outside the folders this host allows)"),
                )
            }
        }
    }
}

/// `path` made absolute, its `.` and `..` taken away, and the symbolic links
/// of the part that exists resolved: where it really is, so that neither
/// `..` nor a link inside an allowed folder leads out of it.
fn resolve(path: &Path) -> PathBuf {
    let abs = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    // The longest part that exists, with its links resolved, then the rest.
    let mut rest = Vec::new();
    let mut head = clean.as_path();
    loop {
        if let Ok(real) = head.canonicalize() {
            return rest.iter().rev().fold(real, |p: PathBuf, c| p.join(c));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                head = parent;
            }
            _ => return clean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_roots_only() {
        let root = std::env::temp_dir().join(format!("csp-access-{}", std::process::id()));
        std::fs::create_dir_all(root.join("in")).unwrap();
        let access = FileAccess::under(&[root.join("in")]);
        let p = |s: &str| root.join(s).to_string_lossy().into_owned();
        assert!(access.check("t", &p("in/a.txt")).is_ok());
        assert!(access.check("t", &p("in/new/deeper/b.txt")).is_ok());
        assert!(access.check("t", &p("in/../out.txt")).is_err());
        assert!(access.check("t", &p("in2/x")).is_err(), "a sibling with the root as its prefix");
        assert!(access.check("t", "/etc/passwd").is_err());
        std::os::unix::fs::symlink("/etc", root.join("in/link")).unwrap();
        assert!(access.check("t", &p("in/link/passwd")).is_err(), "a link leading out");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
