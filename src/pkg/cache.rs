//! The package cache under `CSP_HOME` (default `~/.cache/csp`), shared by
//! every project: `git/` bare mirrors of repositories, `src/` the packages'
//! files by commit or archive digest. Fetches hold `CSP_HOME/lock` (flock)
//! and build into `tmp/` before a rename, so two runs fetching at once neither
//! corrupt nor half-see a package.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The cache's root.
pub fn home() -> PathBuf {
    match std::env::var_os("CSP_HOME") {
        Some(h) if !h.is_empty() => PathBuf::from(h),
        _ => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .filter(|x| !x.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .unwrap_or_else(std::env::temp_dir);
            base.join("csp")
        }
    }
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache's exclusive lock, held while fetching (released when the file
/// closes, on drop).
pub struct Guard(#[allow(dead_code)] std::fs::File);

impl Guard {
    pub fn take() -> Result<Guard, String> {
        use std::os::fd::AsRawFd;
        let home = home();
        std::fs::create_dir_all(&home).map_err(|e| format!("cannot create the cache {}: {e}", home.display()))?;
        let path = home.join("lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(format!("cannot lock {}: {}", path.display(), std::io::Error::last_os_error()));
        }
        Ok(Guard(f))
    }
}

/// A fresh folder under `CSP_HOME/tmp`, removed on drop unless kept.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Result<TempDir, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = home().join("tmp").join(format!("{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }

    /// Moves the folder to `to` (replacing nothing: `to` must not exist).
    pub fn keep(self, to: &Path) -> Result<(), String> {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let r = std::fs::rename(&self.0, to).map_err(|e| format!("cannot move into {}: {e}", to.display()));
        if r.is_ok() {
            std::mem::forget(self);
        }
        r
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sha256:HEX` of a folder's files: their paths (sorted, relative) and
/// contents; symbolic links by their targets. The same files hash the same
/// wherever they are.
pub fn tree_hash(root: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    walk(root, root, &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for rel in &files {
        let p = root.join(rel);
        let meta = std::fs::symlink_metadata(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let data = if meta.file_type().is_symlink() {
            let t = std::fs::read_link(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            format!("link:{}", t.display()).into_bytes()
        } else {
            std::fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?
        };
        h.update(rel.as_bytes());
        h.update([0]);
        h.update((data.len() as u64).to_le_bytes());
        h.update(&data);
    }
    Ok(format!("sha256:{}", hex(&h.finalize())))
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let p = e.path();
        let ft = e.file_type().map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        if ft.is_dir() {
            walk(root, &p, out)?;
        } else {
            out.push(p.strip_prefix(root).unwrap_or(&p).to_string_lossy().into_owned());
        }
    }
    Ok(())
}
