//! Packages (docs/packages.md): a project's `csp.toml` names its
//! dependencies, `csp.lock` pins each (direct or not) to a commit and a hash
//! of its files, the cache under `CSP_HOME` holds their files. `resolve` walks
//! the dependencies breadth first, one revision per package name.

pub mod cache;
pub mod cli;
pub mod fetch;
pub mod lock;
pub mod manifest;

use lock::{Lock, Locked};
use manifest::{Dep, Source};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// What a resolution may do.
#[derive(Clone, PartialEq)]
pub enum Mode {
    /// A run: only what `csp.lock` pins (fetching a pinned package missing
    /// from the cache); the lock is not written.
    Run,
    /// `csp fetch`/`csp add`: pin what the lock lacks, keep what it has.
    Fetch,
    /// `csp update [NAME]`: pin NAME (every package: None) at its revision's
    /// newest commit.
    Update(Option<String>),
}

/// A resolved project: each package's folder, and the lock that pins them.
pub struct Resolved {
    pub roots: HashMap<String, PathBuf>,
    pub lock: Lock,
}

/// Who asked for the project's own dependencies in `required_by`.
pub const PROJECT: &str = "csp.toml";

/// The packages of the project `start` is in (None when no `csp.toml` is
/// at or above it): for a run, so only what the lock pins.
pub fn project_packages(start: &Path, offline: bool) -> Result<HashMap<String, PathBuf>, String> {
    match manifest::find_root(start) {
        None => Ok(HashMap::new()),
        Some(root) => resolve(&root, &Mode::Run, offline).map(|r| r.roots),
    }
}

struct Walk<'a> {
    mode: &'a Mode,
    offline: bool,
    old: Lock,
    guard: Option<cache::Guard>,
}

impl Walk<'_> {
    /// Takes the cache's lock before the first fetch.
    fn lock_cache(&mut self) -> Result<(), String> {
        if self.guard.is_none() {
            self.guard = Some(cache::Guard::take()?);
        }
        Ok(())
    }

    fn updating(&self, name: &str) -> bool {
        match self.mode {
            Mode::Update(None) => true,
            Mode::Update(Some(n)) => n == name,
            _ => false,
        }
    }

    /// The lock's entry for a dependency if it pins the same source (and the
    /// package is not being updated).
    fn pinned(&self, dep: &Dep) -> Result<Option<Locked>, String> {
        let found = self.old.get(&dep.name).filter(|l| l.source == dep.source && !self.updating(&dep.name));
        if found.is_none() && *self.mode == Mode::Run {
            let why = match self.old.get(&dep.name) {
                Some(l) => format!("csp.lock pins it as {}, not {}", l.source.describe(), dep.source.describe()),
                None => "csp.lock does not pin it".to_string(),
            };
            return Err(format!("package '{}': {why}; run `csp fetch` to pin it", dep.name));
        }
        Ok(found.cloned())
    }

    /// A package's folder in the cache, its files checked against the lock's
    /// hash (fetched by `export` when missing, or when a fetch finds it changed).
    fn cached(
        &mut self,
        name: &str,
        dir: PathBuf,
        want: Option<&str>,
        export: impl FnOnce(bool) -> Result<PathBuf, String>,
    ) -> Result<(PathBuf, String), String> {
        if dir.is_dir() {
            let hash = cache::tree_hash(&dir)?;
            match want {
                Some(w) if w != hash && *self.mode == Mode::Run => {
                    return Err(format!(
                        "package '{name}' in the cache ({}) does not match csp.lock (its files changed): \
                         run `csp fetch` to fetch it again",
                        dir.display()
                    ))
                }
                Some(w) if w != hash => {}
                _ => return Ok((dir, hash)),
            }
        } else if self.offline {
            return Err(format!(
                "package '{name}' is not in the cache and --offline forbids fetching it: run `csp fetch` online first"
            ));
        }
        self.lock_cache()?;
        // Another run may have fetched it while this one waited for the lock.
        let hash = if dir.is_dir() { cache::tree_hash(&dir)? } else { String::new() };
        if want.is_some_and(|w| w == hash) {
            return Ok((dir, hash));
        }
        let dir = export(self.offline)?;
        let hash = cache::tree_hash(&dir)?;
        if let Some(w) = want {
            if w != hash {
                return Err(format!(
                    "package '{name}' as fetched now does not match csp.lock (hash {hash}, locked {w}): \
                     its source changed; run `csp update {name}` if the change is trusted"
                ));
            }
        }
        Ok((dir, hash))
    }
}

/// Resolves the project at `root` (the folder of its `csp.toml`); writes
/// `csp.lock` unless `mode` is `Run`.
pub fn resolve(root: &Path, mode: &Mode, offline: bool) -> Result<Resolved, String> {
    let m = manifest::read(root)?;
    let old = lock::read(root)?;
    if let Mode::Update(Some(n)) = mode {
        if old.get(n).is_none() && !m.deps.iter().any(|d| d.name == *n) {
            return Err(format!("no package '{n}' in csp.toml or csp.lock"));
        }
    }
    let mut walk = Walk { mode, offline, old, guard: None };
    let mut queue: VecDeque<(Dep, String, PathBuf)> =
        m.deps.into_iter().map(|d| (d, PROJECT.to_string(), root.to_path_buf())).collect();
    let mut done: Vec<Locked> = Vec::new();
    let mut roots: HashMap<String, PathBuf> = HashMap::new();
    while let Some((dep, by, base)) = queue.pop_front() {
        let path_dir = match &dep.source {
            Source::Path { path } => Some(path_root(&base, path, &dep.name, &by)?),
            _ => None,
        };
        if let Some(prev) = done.iter_mut().find(|p| p.name == dep.name) {
            let same = match &path_dir {
                Some(d) => roots.get(&dep.name) == Some(d),
                None => prev.source == dep.source,
            };
            if !same {
                return Err(format!(
                    "package '{}' is required at two revisions: {} by {}, and {} by {}; a project has one \
                     revision of each package, so make them agree (docs/packages.md)",
                    dep.name,
                    prev.source.describe(),
                    prev.required_by[0],
                    dep.source.describe(),
                    by
                ));
            }
            if !prev.required_by.contains(&by) {
                prev.required_by.push(by);
            }
            continue;
        }
        let (dir, commit, hash) = match (&dep.source, path_dir) {
            (_, Some(d)) => (d, String::new(), String::new()),
            (Source::Git { url, rev }, None) => {
                let pinned = walk.pinned(&dep)?;
                let commit = match &pinned {
                    Some(l) => l.commit.clone(),
                    None => {
                        if !offline {
                            walk.lock_cache()?;
                        }
                        fetch::resolve_rev(url, rev, offline).map_err(|e| format!("package '{}': {e}", dep.name))?
                    }
                };
                let want = pinned.as_ref().map(|l| l.hash.as_str());
                let (dir, hash) = walk
                    .cached(&dep.name, fetch::git_dir(&commit), want, |off| fetch::git_export(url, &commit, off))
                    .map_err(|e| with_name(e, &dep.name))?;
                (dir, commit, hash)
            }
            (Source::Archive { url, sha256 }, None) => {
                let pinned = walk.pinned(&dep)?;
                let want = pinned.as_ref().map(|l| l.hash.as_str());
                let (dir, hash) = walk
                    .cached(&dep.name, fetch::archive_dir(sha256), want, |_| {
                        fetch::archive_export(&dep.name, url, sha256)
                    })
                    .map_err(|e| with_name(e, &dep.name))?;
                (dir, format!("sha256:{sha256}"), hash)
            }
            (Source::Path { .. }, None) => unreachable!("a path source has its folder"),
        };
        let sub = manifest::read(&dir).map_err(|e| format!("package '{}': {e}", dep.name))?;
        queue.extend(sub.deps.into_iter().map(|d| (d, dep.name.clone(), dir.clone())));
        roots.insert(dep.name.clone(), dir);
        done.push(Locked { name: dep.name, source: dep.source, commit, hash, required_by: vec![by] });
    }
    let lock = Lock { packages: done };
    if *mode != Mode::Run {
        lock::write(root, &lock)?;
    }
    Ok(Resolved { roots, lock })
}

/// Names the package in a fetch error that does not already.
fn with_name(e: String, name: &str) -> String {
    if e.contains(&format!("'{name}'")) {
        e
    } else {
        format!("package '{name}': {e}")
    }
}

/// A path dependency's folder, relative to the manifest naming it.
fn path_root(base: &Path, path: &str, name: &str, by: &str) -> Result<PathBuf, String> {
    let dir = base.join(path);
    std::fs::canonicalize(&dir)
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| format!("package '{name}' (required by {by}): no folder {}", dir.display()))
}
