//! The files of a project, for rename across files: every `*.csp` under the
//! workspace root (the client's root, else the document's directory), read
//! from the editor's buffer when open, else from disk.

use super::resolve::{Index, Ty};
use super::text::{path_uri, Encoding, Lines};
use super::{modules, Doc};
use lsp_types::{TextEdit, Uri};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most files looked at; a bigger tree is searched only this far.
const MAX_FILES: usize = 5000;

pub struct Project<'a> {
    pub root: Option<&'a Path>,
    pub docs: &'a HashMap<String, Doc>,
}

impl Project<'_> {
    /// A file's text: the open buffer's, else the file's on disk.
    pub fn text(&self, path: &Path) -> Option<String> {
        let open = self.docs.values().find(|d| d.path.as_deref().is_some_and(|p| same(p, path)));
        open.map(|d| d.text.clone()).or_else(|| std::fs::read_to_string(path).ok())
    }

    /// The project's `*.csp` files (hidden directories, `target` and `node_modules` left out).
    fn files(&self, near: &Path) -> Vec<PathBuf> {
        let root = self.root.map(Path::to_path_buf).or_else(|| near.parent().map(Path::to_path_buf));
        let mut out = Vec::new();
        let mut dirs: Vec<PathBuf> = root.into_iter().collect();
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                let Ok(ty) = e.file_type() else { continue };
                if ty.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
                    dirs.push(p);
                } else if ty.is_file() && name.ends_with(".csp") && out.len() < MAX_FILES {
                    out.push(p);
                }
            }
        }
        out
    }

    /// Edits renaming `alias.name` to `alias.new_name` in every project file
    /// (other than `module` itself) that imports `module`.
    #[allow(clippy::mutable_key_type)] // `Uri` caches its parse in a cell; never changed while a key.
    pub fn member_edits(
        &self,
        module: &Path,
        name: &str,
        new_name: &str,
        enc: Encoding,
    ) -> HashMap<Uri, Vec<TextEdit>> {
        let mut out = HashMap::new();
        for f in self.files(module) {
            if same(&f, module) {
                continue;
            }
            let Some(text) = self.text(&f) else { continue };
            if !text.contains(name) || !text.contains("import") {
                continue;
            }
            let Ok(program) = crate::syntax::parse(&text) else { continue };
            let ix = Index::of(&program);
            let mut resolved: HashMap<&str, bool> = HashMap::new();
            let lines = Lines::new(&text, enc);
            let mut edits = Vec::new();
            for dot in ix.dots.iter().filter(|d| d.name == name) {
                let Some(Ty::Module(path)) = &dot.recv else { continue };
                let is_it = *resolved.entry(path).or_insert_with(|| {
                    modules::load(path, Some(&f)).and_then(|m| m.path).is_some_and(|p| same(&p, module))
                });
                if is_it {
                    edits.push(TextEdit { range: lines.range(dot.span), new_text: new_name.to_string() });
                }
            }
            if let (false, Some(uri)) = (edits.is_empty(), path_uri(&std::fs::canonicalize(&f).unwrap_or(f))) {
                out.insert(uri, edits);
            }
        }
        out
    }
}

/// The same file, however the paths are written.
pub fn same(a: &Path, b: &Path) -> bool {
    a == b || std::fs::canonicalize(a).ok().is_some_and(|x| std::fs::canonicalize(b).ok() == Some(x))
}
