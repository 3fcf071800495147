//! `csp.toml`: a project's (or a package's) `[dependencies]`, each a git
//! repository and revision, an HTTPS archive and its SHA-256, or a local path.

use std::path::{Path, PathBuf};

/// The project file's name.
pub const MANIFEST: &str = "csp.toml";

/// Where a dependency comes from, as `csp.toml` says.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A git repository at a tag, branch or commit (`HEAD`: its default branch).
    Git { url: String, rev: String },
    /// A `.tar.gz` over HTTP(S) with the SHA-256 (hex) of its bytes.
    Archive { url: String, sha256: String },
    /// A folder, relative to the `csp.toml` that names it.
    Path { path: String },
}

impl Source {
    /// How a person reads it: `git URL at REV`, `archive URL`, `path P`.
    pub fn describe(&self) -> String {
        match self {
            Source::Git { url, rev } => format!("{url} at {rev}"),
            Source::Archive { url, .. } => format!("archive {url}"),
            Source::Path { path } => format!("path {path}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Dep {
    pub name: String,
    pub source: Source,
}

/// A parsed `csp.toml`.
pub struct Manifest {
    /// The folder it is in (the project's, or the package's, root).
    pub dir: PathBuf,
    pub deps: Vec<Dep>,
}

/// Is `name` a package name: lowercase letters, digits, `_` and `-`, starting
/// with a letter, and not `std`.
pub fn valid_name(name: &str) -> bool {
    name != "std"
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// The nearest folder at or above `start` holding a `csp.toml` (as `go.mod`).
pub fn find_root(start: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).ok()?;
    start.ancestors().find(|d| d.join(MANIFEST).is_file()).map(Path::to_path_buf)
}

/// Reads `DIR/csp.toml`; a missing file is a manifest without dependencies.
pub fn read(dir: &Path) -> Result<Manifest, String> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let deps = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Manifest { dir: dir.to_path_buf(), deps })
}

/// The `[dependencies]` of a manifest's text.
pub fn parse(text: &str) -> Result<Vec<Dep>, String> {
    let doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| one_line(&e.to_string()))?;
    for (key, _) in doc.iter() {
        if !matches!(key, "dependencies" | "package") {
            return Err(format!("unknown section [{key}] (csp.toml has [package] and [dependencies])"));
        }
    }
    let Some(table) = doc.get("dependencies") else { return Ok(Vec::new()) };
    let Some(table) = table.as_table_like() else {
        return Err("[dependencies] must be a table".into());
    };
    let mut deps = Vec::new();
    for (name, item) in table.iter() {
        if !valid_name(name) {
            return Err(format!(
                "'{name}' is not a package name (lowercase letters, digits, _ and -, starting with a letter; not std)"
            ));
        }
        let source = source(name, item)?;
        deps.push(Dep { name: name.to_string(), source });
    }
    Ok(deps)
}

/// The first line of a TOML error with its position (`TOML parse error at line 3, column 9`).
fn one_line(e: &str) -> String {
    let lines: Vec<&str> = e.lines().collect();
    let last = lines.iter().rev().find(|l| !l.trim().is_empty() && !l.contains('|')).unwrap_or(&"");
    format!("{} ({})", lines.first().unwrap_or(&"").trim(), last.trim())
}

fn source(name: &str, item: &toml_edit::Item) -> Result<Source, String> {
    let form = "write `NAME = { git = \"URL\", rev = \"TAG\" }`, `{ url = \"https://….tar.gz\", sha256 = \"…\" }` or `{ path = \"DIR\" }`";
    if let Some(s) = item.as_str() {
        return Ok(Source::Path { path: s.to_string() }).filter_path(name, form);
    }
    let Some(t) = item.as_table_like() else {
        return Err(format!("dependency '{name}': {form}"));
    };
    let get = |k: &str| -> Result<Option<String>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| format!("dependency '{name}': `{k}` must be a string")),
        }
    };
    for (k, _) in t.iter() {
        if !matches!(k, "git" | "rev" | "url" | "sha256" | "path") {
            return Err(format!("dependency '{name}': unknown key `{k}` ({form})"));
        }
    }
    match (get("git")?, get("url")?, get("path")?) {
        (Some(url), None, None) => {
            if t.contains_key("sha256") {
                return Err(format!("dependency '{name}': `sha256` is for archives (`url`), not git"));
            }
            Ok(Source::Git { url, rev: get("rev")?.unwrap_or_else(|| "HEAD".into()) })
        }
        (None, Some(url), None) => {
            if t.contains_key("rev") {
                return Err(format!("dependency '{name}': `rev` is for git, an archive has `sha256`"));
            }
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(format!("dependency '{name}': an archive's `url` is http(s)://…"));
            }
            let Some(sha256) = get("sha256")? else {
                return Err(format!("dependency '{name}': an archive needs its `sha256` (`csp add` writes it)"));
            };
            let sha256 = sha256.to_ascii_lowercase();
            if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("dependency '{name}': `sha256` must be 64 hex digits"));
            }
            Ok(Source::Archive { url, sha256 })
        }
        (None, None, Some(path)) => Ok(Source::Path { path }).filter_path(name, form),
        _ => Err(format!("dependency '{name}': exactly one of `git`, `url` or `path`; {form}")),
    }
}

trait FilterPath {
    fn filter_path(self, name: &str, form: &str) -> Self;
}

impl FilterPath for Result<Source, String> {
    fn filter_path(self, name: &str, form: &str) -> Self {
        match self {
            Ok(Source::Path { path }) if path.is_empty() => Err(format!("dependency '{name}': an empty path; {form}")),
            r => r,
        }
    }
}

/// `csp add`: sets `[dependencies] NAME` in the text of a manifest, keeping
/// the rest of the file as it was.
pub fn with_dep(text: &str, name: &str, source: &Source) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| one_line(&e.to_string()))?;
    let deps = doc.entry("dependencies").or_insert(toml_edit::table());
    let Some(deps) = deps.as_table_like_mut() else {
        return Err("[dependencies] must be a table".into());
    };
    let mut t = toml_edit::InlineTable::new();
    match source {
        Source::Git { url, rev } => {
            t.insert("git", url.as_str().into());
            t.insert("rev", rev.as_str().into());
        }
        Source::Archive { url, sha256 } => {
            t.insert("url", url.as_str().into());
            t.insert("sha256", sha256.as_str().into());
        }
        Source::Path { path } => {
            t.insert("path", path.as_str().into());
        }
    }
    deps.insert(name, toml_edit::value(t));
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_sources() {
        let deps = parse(
            "[dependencies]\na = { git = \"file:///r\", rev = \"v1\" }\nb = { path = \"../b\" }\nc = { url = \"https://x/c.tar.gz\", sha256 = \"".to_string().as_str(),
        );
        assert!(deps.is_err()); // unterminated string
        let text = format!(
            "[dependencies]\na = {{ git = \"file:///r\", rev = \"v1\" }}\nb = {{ path = \"../b\" }}\nc = {{ url = \"https://x/c.tar.gz\", sha256 = \"{}\" }}\n",
            "ab".repeat(32)
        );
        let deps = parse(&text).unwrap();
        assert_eq!(deps[0].source, Source::Git { url: "file:///r".into(), rev: "v1".into() });
        assert_eq!(deps[1].source, Source::Path { path: "../b".into() });
        assert!(matches!(&deps[2].source, Source::Archive { sha256, .. } if sha256.len() == 64));
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(parse("[dependencies]\nStd = { path = \"x\" }").unwrap_err().contains("not a package name"));
        assert!(parse("[dependencies]\na = { git = \"u\", path = \"x\" }").unwrap_err().contains("exactly one"));
        assert!(parse("[dependencies]\na = { url = \"https://x\" }").unwrap_err().contains("sha256"));
        assert!(parse("[deps]\n").unwrap_err().contains("unknown section"));
        assert!(parse("[dependencies\n").unwrap_err().contains("line 1"));
    }

    #[test]
    fn add_keeps_comments() {
        let out = with_dep("# mine\n[dependencies]\nb = { path = \"b\" }\n", "a", &Source::Path { path: "x".into() });
        let out = out.unwrap();
        assert!(out.starts_with("# mine\n"), "{out}");
        assert_eq!(parse(&out).unwrap().len(), 2);
    }
}
