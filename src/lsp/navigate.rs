//! Go to definition (locals, globals, members of imported modules in other
//! files), rename (across the project's files for a module's members), and
//! the document's symbols.

use super::project::Project;
use super::resolve::{DefKind, Index, Ty};
use super::text::{path_uri, Encoding, Lines};
use super::{modules, Doc};
use crate::syntax::ast::{ExprKind, Stmt, StmtKind};
use lsp_types::{DocumentSymbol, Location, Range, SymbolKind, TextEdit, WorkspaceEdit};
use std::collections::HashMap;

/// Where the name at `offset` is defined.
pub fn definition(doc: &Doc, offset: usize, enc: Encoding) -> Option<Location> {
    let program = super::complete::parse_lenient(doc.text.clone(), None).0?;
    let ix = Index::of(&program);
    let lines = Lines::new(&doc.text, enc);
    if let Some(dot) = ix.dot_at(offset) {
        let Some(Ty::Module(path)) = &dot.recv else { return None };
        let m = modules::load(path, doc.path.as_deref())?;
        let member = modules::members(&m.src).into_iter().find(|x| x.name == dot.name)?;
        let uri = path_uri(m.path.as_ref()?)?;
        return Some(Location { uri, range: Lines::new(&m.src, enc).range(member.span) });
    }
    let (_, Some(d)) = ix.ref_at(offset)? else { return None };
    let def = &ix.defs[d];
    if let (DefKind::Import, Some(Ty::Module(path))) = (def.kind, &def.ty) {
        // The alias's use jumps to the module's file, its declaration too.
        if let Some(file) = modules::load(path, doc.path.as_deref()).and_then(|m| m.path) {
            return Some(Location { uri: path_uri(&file)?, range: Range::default() });
        }
    }
    Some(Location { uri: doc.uri.clone(), range: lines.range(def.span) })
}

/// Every use of the name at `offset` in the file (its declaration too if asked).
pub fn references(doc: &Doc, offset: usize, declaration: bool, enc: Encoding) -> Vec<Location> {
    let Some(program) = super::complete::parse_lenient(doc.text.clone(), None).0 else { return Vec::new() };
    let ix = Index::of(&program);
    let Some((_, Some(d))) = ix.ref_at(offset) else { return Vec::new() };
    let lines = Lines::new(&doc.text, enc);
    let spans = ix.uses(d).filter(|s| declaration || *s != ix.defs[d].span);
    spans.map(|s| Location { uri: doc.uri.clone(), range: lines.range(s) }).collect()
}

/// Renames the local or global at `offset` everywhere in the file; a
/// global (or `alias.name` of a module in another file) also in every file
/// of the project that imports its module.
#[allow(clippy::mutable_key_type)] // `Uri` caches its parse in a cell; never changed while a key.
pub fn rename(
    doc: &Doc,
    offset: usize,
    new_name: &str,
    enc: Encoding,
    project: &Project,
) -> Result<WorkspaceEdit, String> {
    let ident = new_name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && new_name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !ident || crate::repl::reader::KEYWORDS.contains(&new_name) {
        return Err(format!("'{new_name}' is not a name"));
    }
    let program = crate::syntax::parse(&doc.text).map_err(|_| "the file has syntax errors".to_string())?;
    let ix = Index::of(&program);
    // `alias.name`: rename the member in its module's file, then everywhere.
    if let Some(dot) = ix.dot_at(offset) {
        let Some(Ty::Module(path)) = &dot.recv else {
            return Err("only a module's members can be renamed after a `.`".into());
        };
        let m = modules::load(path, doc.path.as_deref()).ok_or_else(|| format!("cannot read the module {path}"))?;
        let file = m.path.ok_or_else(|| format!("{path} is part of the standard library"))?;
        let text = project.text(&file).ok_or_else(|| format!("cannot read {}", file.display()))?;
        let program = crate::syntax::parse(&text).map_err(|_| format!("{} has syntax errors", file.display()))?;
        let mix = Index::of(&program);
        let def = mix.defs.iter().position(|d| d.global && d.name == dot.name && d.kind != DefKind::Import);
        let def = def.ok_or_else(|| format!("{} has no top-level '{}'", file.display(), dot.name))?;
        let uri = path_uri(&file).ok_or("the module's file has no URI")?;
        let lines = Lines::new(&text, enc);
        let own = mix.uses(def).map(|s| TextEdit { range: lines.range(s), new_text: new_name.to_string() }).collect();
        let mut changes = project.member_edits(&file, &dot.name, new_name, enc);
        changes.insert(uri, own);
        return Ok(WorkspaceEdit { changes: Some(changes), ..Default::default() });
    }
    let Some((_, Some(d))) = ix.ref_at(offset) else {
        return Err("no variable or function here to rename".into());
    };
    let def = &ix.defs[d];
    if doc.text[def.span.start as usize..def.span.end as usize] != def.name {
        return Err(format!("name the import to rename it: `import ... as {}`", def.name));
    }
    let lines = Lines::new(&doc.text, enc);
    let edits = ix.uses(d).map(|s| TextEdit { range: lines.range(s), new_text: new_name.to_string() }).collect();
    // Other files see a global of this one as `alias.name`.
    let mut changes = match (&doc.path, def.global && def.kind != DefKind::Import) {
        (Some(path), true) => project.member_edits(path, &def.name, new_name, enc),
        _ => HashMap::new(),
    };
    changes.insert(doc.uri.clone(), edits);
    Ok(WorkspaceEdit { changes: Some(changes), ..Default::default() })
}

/// Functions, variables and imports: the top level, and each function's own.
pub fn symbols(doc: &Doc, enc: Encoding) -> Vec<DocumentSymbol> {
    let Some(program) = super::complete::parse_lenient(doc.text.clone(), None).0 else { return Vec::new() };
    let lines = Lines::new(&doc.text, enc);
    block_symbols(&program.stmts, &lines, true)
}

fn block_symbols(stmts: &[Stmt], lines: &Lines, top: bool) -> Vec<DocumentSymbol> {
    let mut out = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Fn(d) => {
                let Some(n) = &d.name else { continue };
                let children = block_symbols(&d.body, lines, false);
                let detail = super::resolve::signature(&n.name, d);
                out.push(symbol(
                    &n.name,
                    Some(detail),
                    SymbolKind::FUNCTION,
                    lines.range(s.span),
                    lines.range(n.span),
                    children,
                ));
            }
            StmtKind::Let { names, value } if top => {
                let kind = match value.kind {
                    ExprKind::Func(_) => SymbolKind::FUNCTION,
                    _ => SymbolKind::VARIABLE,
                };
                for n in names {
                    out.push(symbol(&n.name, None, kind, lines.range(s.span), lines.range(n.span), Vec::new()));
                }
            }
            StmtKind::Import { path, alias } => {
                let name = super::resolve::import_name(path, alias);
                let sel = alias.as_ref().map_or(s.span, |a| a.span);
                out.push(symbol(
                    &name,
                    Some(path.clone()),
                    SymbolKind::MODULE,
                    lines.range(s.span),
                    lines.range(sel),
                    Vec::new(),
                ));
            }
            _ => {}
        }
    }
    out
}

fn symbol(
    name: &str,
    detail: Option<String>,
    kind: SymbolKind,
    range: Range,
    selection_range: Range,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    #[allow(deprecated)]
    DocumentSymbol {
        name: name.to_string(),
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children: (!children.is_empty()).then_some(children),
    }
}
