//! Completion: names in scope, keywords and builtins; after a `.`, the methods
//! of the receiver's kind when it is known (else of every kind), or the
//! members of an imported module.

use super::resolve::{Def, DefKind, Index, Ty};
use super::{modules, reference, Doc};
use crate::syntax::ast::Program;
use lsp_types::{CompletionItem, CompletionItemKind};
use std::sync::OnceLock;

/// Stands for the word being typed, so the text around it parses.
const HOLE: &str = "__csp_hole";

/// The global builtins (the names a fresh VM defines, hidden `__` ones left out).
pub fn builtin_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let options = crate::embed::Options { caps: crate::embed::Caps::all(), ..Default::default() };
        let vm = crate::embed::Runtime::new(options).into_vm();
        let mut names: Vec<String> =
            vm.global_names.keys().filter(|n| !n.starts_with("__")).map(|n| n.to_string()).collect();
        names.sort();
        names
    })
}

pub fn complete(doc: &Doc, offset: usize) -> Vec<CompletionItem> {
    let text = &doc.text;
    let offset = offset.min(text.len());
    let start = text[..offset].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let word = &text[start..offset];
    let dot = text[..start].ends_with('.');
    let (ix, patched) = lenient_index(text, start, offset);
    let mut items = if dot {
        // With the hole parsed, the index knows the receiver; else look up the
        // name before the dot in the index of the file without this line.
        let recv = match (&ix, patched) {
            (Some(ix), true) => ix.dot_at(start).and_then(|d| d.recv.clone()),
            (Some(ix), false) => receiver_name(&text[..start - 1])
                .and_then(|n| ix.in_scope(start).into_iter().find(|d| d.name == n).and_then(|d| d.ty.clone())),
            (None, _) => None,
        };
        members(doc, recv)
    } else {
        names(ix.as_ref(), start)
    };
    items.retain(|i| i.label.starts_with(word) && i.label != HOLE);
    items.sort_by(|a, b| a.label.cmp(&b.label));
    items.dedup_by(|a, b| a.label == b.label);
    items
}

/// An index of the text with the word at `start..end` replaced by a hole,
/// parsed leniently; `true` when the line being completed was kept.
fn lenient_index(text: &str, start: usize, end: usize) -> (Option<Index>, bool) {
    let holed = format!("{}{HOLE}{}", &text[..start], &text[end..]);
    let (program, kept) = parse_lenient(holed, Some(start));
    (program.map(|p| Index::of(&p)), kept)
}

/// The text parsed with the lines of its syntax errors blanked (offsets
/// kept) until it parses; whether the line holding `keep` was left.
pub fn parse_lenient(text: String, keep: Option<usize>) -> (Option<Program>, bool) {
    let mut src = text.into_bytes();
    let line_of = |src: &[u8], at: usize| {
        let at = at.min(src.len());
        let from = src[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let to = src[at..].iter().position(|&b| b == b'\n').map_or(src.len(), |i| at + i);
        (from, to)
    };
    let kept_line = keep.map(|at| line_of(&src, at));
    let mut kept = true;
    for _ in 0..8 {
        let Ok(parsed) = std::str::from_utf8(&src).map(crate::syntax::parse) else { break };
        let errors = match parsed {
            Ok(p) => return (Some(p), kept),
            Err(errors) => errors,
        };
        let mut changed = false;
        for e in errors {
            // An error at the end of the input is blamed on the last line with text.
            let at = (e.span.start as usize).min(src.len());
            let at = match src[at..].iter().all(u8::is_ascii_whitespace) {
                true => src.iter().rposition(|b| !b.is_ascii_whitespace()).unwrap_or(0),
                false => at,
            };
            let (from, to) = line_of(&src, at);
            kept &= Some((from, to)) != kept_line;
            for b in &mut src[from..to] {
                // Spaces for every byte, so offsets stay; UTF-8 stays valid
                // because whole lines are blanked.
                changed |= *b != b' ';
                *b = b' ';
            }
        }
        if !changed {
            break;
        }
    }
    (None, false)
}

/// The name right before a `.`, if the receiver is a plain name.
fn receiver_name(before: &str) -> Option<&str> {
    let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let name = &before[start..];
    (!name.is_empty() && !before[..start].ends_with('.')).then_some(name)
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem { label: label.to_string(), kind: Some(kind), detail, ..Default::default() }
}

fn members(doc: &Doc, recv: Option<Ty>) -> Vec<CompletionItem> {
    match recv {
        Some(Ty::Module(path)) => {
            let Some(m) = modules::load(&path, doc.path.as_deref()) else { return Vec::new() };
            let members = modules::members(&m.src);
            members
                .iter()
                .map(|x| {
                    let kind = if x.function { CompletionItemKind::FUNCTION } else { CompletionItemKind::VARIABLE };
                    item(&x.name, kind, x.signature.clone())
                })
                .collect()
        }
        Some(Ty::Kind(kind)) => method_items(kind, &crate::repl::reader::members_of(kind)),
        None => method_items("", &crate::repl::reader::any_member()),
    }
}

fn method_items(kind: &str, names: &[&str]) -> Vec<CompletionItem> {
    let kind = (!kind.is_empty()).then_some(kind);
    names
        .iter()
        .map(|n| {
            let sig = reference::method(kind, n).map(|e| e.signature.clone());
            item(n, CompletionItemKind::METHOD, sig)
        })
        .collect()
}

fn names(ix: Option<&Index>, at: usize) -> Vec<CompletionItem> {
    let mut out: Vec<CompletionItem> = Vec::new();
    if let Some(ix) = ix {
        out.extend(ix.in_scope(at).into_iter().map(def_item));
    }
    out.extend(crate::repl::reader::KEYWORDS.iter().map(|k| item(k, CompletionItemKind::KEYWORD, None)));
    out.extend(builtin_names().iter().map(|n| {
        let sig = reference::builtin(n).map(|e| e.signature.clone());
        item(n, CompletionItemKind::FUNCTION, sig)
    }));
    out
}

fn def_item(d: &Def) -> CompletionItem {
    let kind = match d.kind {
        DefKind::Fn => CompletionItemKind::FUNCTION,
        DefKind::Import => CompletionItemKind::MODULE,
        _ => CompletionItemKind::VARIABLE,
    };
    item(&d.name, kind, d.signature.clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn lenient_parsing_blanks_the_lines_in_error() {
        let text = "let a = 1\nprint(a +)\nlet b = 2\nlet c = (\n";
        let (program, kept) = super::parse_lenient(text.to_string(), Some(0));
        let program = program.expect("parses once lines 2 and 4 are blanked");
        assert!(kept);
        assert_eq!(program.stmts.len(), 2);
        let (_, kept) = super::parse_lenient(text.to_string(), Some(text.find("a +").unwrap()));
        assert!(!kept);
    }
}
