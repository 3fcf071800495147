//! Getting a package's files into the cache: git sources through the `git`
//! command (a bare mirror per repository, a commit exported with `git
//! archive`), archives through `curl` and `tar`. Callers hold `cache::Guard`.

use super::cache::{self, TempDir};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs a tool (its stdin is the caller's choice); its trimmed stdout, or what it said on stderr.
fn tool(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{what}: the `{}` command is not installed", name(cmd)),
        _ => format!("{what}: cannot run {}: {e}", name(cmd)),
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{what}: {}", err.trim().lines().last().unwrap_or("failed")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn name(cmd: &Command) -> String {
    cmd.get_program().to_string_lossy().into_owned()
}

fn git(dir: Option<&Path>) -> Command {
    let mut c = Command::new("git");
    if let Some(d) = dir {
        c.arg("--git-dir").arg(d);
    }
    // Never ask for a password on the terminal; a private repository fails.
    c.env("GIT_TERMINAL_PROMPT", "0").stdin(Stdio::null());
    c
}

fn short_digest(s: &str) -> String {
    cache::hex(&Sha256::digest(s.as_bytes()))[..20].to_string()
}

/// The bare mirror of a repository in the cache (cloned if missing).
fn mirror(url: &str, offline: bool) -> Result<(PathBuf, bool), String> {
    let dir = cache::home().join("git").join(short_digest(url));
    if dir.is_dir() {
        return Ok((dir, false));
    }
    if offline {
        return Err(format!("{url} is not in the cache and --offline forbids fetching it"));
    }
    let tmp = TempDir::new()?;
    let into = tmp.0.join("m");
    tool(git(None).args(["clone", "--mirror", "--quiet", url]).arg(&into), &format!("cannot clone {url}"))?;
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::rename(&into, &dir).map_err(|e| format!("cannot move into {}: {e}", dir.display()))?;
    Ok((dir, true))
}

fn update_mirror(dir: &Path, url: &str) -> Result<(), String> {
    tool(git(Some(dir)).args(["fetch", "--quiet", "--prune", "--force", "origin"]), &format!("cannot fetch {url}"))
        .map(drop)
}

/// The commit `rev` (a tag, branch, commit or `HEAD`) names in the repository
/// now (fetching it first unless offline).
pub fn resolve_rev(url: &str, rev: &str, offline: bool) -> Result<String, String> {
    let (dir, fresh) = mirror(url, offline)?;
    if !fresh && !offline {
        update_mirror(&dir, url)?;
    }
    tool(
        git(Some(&dir)).args(["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")]),
        &format!("{url} has no revision '{rev}'"),
    )
    .and_then(|c| if c.is_empty() { Err(format!("{url} has no revision '{rev}'")) } else { Ok(c) })
}

fn has_commit(dir: &Path, commit: &str) -> bool {
    git(Some(dir))
        .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Where a git package's files at `commit` live in the cache.
pub fn git_dir(commit: &str) -> PathBuf {
    cache::home().join("src").join(format!("git-{commit}"))
}

/// Where an archive's files live in the cache.
pub fn archive_dir(sha256: &str) -> PathBuf {
    cache::home().join("src").join(format!("archive-{sha256}"))
}

/// Puts the files of `commit` into the cache (`git_dir`), fetching the
/// repository if it lacks the commit.
pub fn git_export(url: &str, commit: &str, offline: bool) -> Result<PathBuf, String> {
    let to = git_dir(commit);
    let (dir, fresh) = mirror(url, offline)?;
    if !has_commit(&dir, commit) {
        if offline || fresh {
            return Err(format!("{url} has no commit {commit}"));
        }
        update_mirror(&dir, url)?;
        if !has_commit(&dir, commit) {
            return Err(format!("{url} has no commit {commit} (was it deleted by a force-push?)"));
        }
    }
    let tmp = TempDir::new()?;
    let files = tmp.0.join("files");
    std::fs::create_dir(&files).map_err(|e| e.to_string())?;
    let mut archive = git(Some(&dir))
        .args(["archive", "--format=tar", commit])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let pipe = archive.stdout.take().expect("piped");
    let untar = tool(Command::new("tar").arg("-x").arg("-C").arg(&files).stdin(pipe), "cannot unpack a git archive");
    let status = archive.wait_with_output().map_err(|e| e.to_string())?;
    if !status.status.success() {
        return Err(format!("git archive {commit}: {}", String::from_utf8_lossy(&status.stderr).trim()));
    }
    untar?;
    keep(files, tmp, &to)?;
    Ok(to)
}

/// Moves `files` (inside `tmp`) to `to` in the cache, replacing an old copy.
fn keep(files: PathBuf, tmp: TempDir, to: &Path) -> Result<(), String> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| format!("cannot replace {}: {e}", to.display()))?;
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::rename(&files, to).map_err(|e| format!("cannot move into {}: {e}", to.display()))?;
    drop(tmp);
    Ok(())
}

/// Downloads an archive; the SHA-256 (hex) of its bytes and the temporary
/// folder holding it as `archive.tar.gz`.
pub fn download(url: &str) -> Result<(String, TempDir), String> {
    let tmp = TempDir::new()?;
    let file = tmp.0.join("archive.tar.gz");
    tool(
        Command::new("curl")
            .stdin(Stdio::null())
            .args(["--fail", "--silent", "--show-error", "--location", "--output"])
            .arg(&file)
            .arg(url),
        &format!("cannot download {url}"),
    )?;
    let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    Ok((cache::hex(&Sha256::digest(&bytes)), tmp))
}

/// Downloads an archive, checks its SHA-256 and unpacks it into the cache
/// (`archive_dir`); a single top-level folder in it is the package's root.
pub fn archive_export(name: &str, url: &str, sha256: &str) -> Result<PathBuf, String> {
    let (got, tmp) = download(url)?;
    if got != sha256 {
        return Err(format!(
            "package '{name}': {url} has SHA-256 {got}, but csp.toml expects {sha256}: the archive changed; \
             if the change is trusted, put the new sha256 in csp.toml and run `csp update {name}`"
        ));
    }
    let files = tmp.0.join("files");
    std::fs::create_dir(&files).map_err(|e| e.to_string())?;
    tool(
        Command::new("tar").stdin(Stdio::null()).arg("-xzf").arg(tmp.0.join("archive.tar.gz")).arg("-C").arg(&files),
        &format!("cannot unpack {url}"),
    )?;
    let entries: Vec<_> = std::fs::read_dir(&files).map_err(|e| e.to_string())?.filter_map(Result::ok).collect();
    let root = match entries.as_slice() {
        [only] if only.file_type().is_ok_and(|t| t.is_dir()) => only.path(),
        _ => files,
    };
    let to = archive_dir(sha256);
    keep(root, tmp, &to)?;
    Ok(to)
}
