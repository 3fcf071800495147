//! Code actions: a quick fix for each replacement a diagnostic's help
//! suggests ("did you mean `x`?", "use `==`"), so every new hint of that
//! form gets its fix; importing a module a name would be; and the lint's
//! fixes (remove an unused import, name an unused variable `_x`).

use super::diagnostics;
use super::text::{Encoding, Lines};
use super::Doc;
use crate::diag::Diag;
use crate::source::Span;
use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, TextEdit, Uri, WorkspaceEdit};
use std::collections::HashMap;

/// The fixes for the diagnostics that touch the byte range `from..to`.
pub fn actions(doc: &Doc, from: usize, to: usize, enc: Encoding) -> Vec<CodeActionOrCommand> {
    let name = doc.name();
    let lines = Lines::new(&doc.text, enc);
    let mut out = Vec::new();
    for d in diagnostics::check(&name, &doc.text) {
        let here = d.file.as_ref().is_none_or(|f| f.name == name);
        if !here || (d.span.end as usize) < from || (d.span.start as usize) > to {
            continue;
        }
        let shown = diagnostics::one(&name, &doc.text, &d, enc);
        let mut fix = |title: String, span: Span, text: String, preferred: bool| {
            let edit = TextEdit { range: lines.range(span), new_text: text };
            out.push(action(doc.uri.clone(), title, edit, shown.clone(), preferred));
        };
        let marked = &doc.text[d.span.start as usize..(d.span.end as usize).min(doc.text.len())];
        let offered = d.help.as_deref().map(suggestions).unwrap_or_default();
        let single = offered.len() == 1;
        for s in offered {
            if !marked.is_empty() && !marked.contains('\n') && marked != s {
                fix(format!("Change `{marked}` to `{s}`"), d.span, s, single);
            }
        }
        if let Some(path) = missing_import(doc, &d) {
            let at = after_imports(&doc.text);
            fix(format!("Add `import \"{path}\"`"), Span::new(at, at), format!("import \"{path}\"\n"), false);
        }
        match d.code.strip_prefix(crate::lint::CODE_PREFIX) {
            Some("unused_import") => {
                fix("Remove the unused import".into(), whole_lines(&doc.text, d.span), String::new(), true)
            }
            Some("unused_variable" | "unused_parameter") if d.message.ends_with("never used") => {
                fix(format!("Rename to `_{marked}`"), d.span, format!("_{marked}"), false)
            }
            _ => {}
        }
    }
    out
}

fn action(uri: Uri, title: String, edit: TextEdit, diag: Diagnostic, preferred: bool) -> CodeActionOrCommand {
    // `Uri` caches its parse in a cell; it is never changed while a key.
    #[allow(clippy::mutable_key_type)]
    let changes: HashMap<Uri, Vec<TextEdit>> = [(uri, vec![edit])].into_iter().collect();
    CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diag]),
        edit: Some(WorkspaceEdit { changes: Some(changes), ..Default::default() }),
        is_preferred: Some(preferred),
        ..Default::default()
    })
}

/// The replacements a help text offers: every code span after "did you
/// mean", and a single token after "use" or "write" (`use \`==\``).
pub fn suggestions(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(i) = help.find("did you mean") {
        let rest = &help[i..];
        out.extend(quoted(rest.split('?').next().unwrap_or(rest)));
    }
    for lead in ["use ", "write "] {
        for (i, _) in help.match_indices(lead) {
            let after = &help[i + lead.len()..];
            if let Some(code) = quoted(after).into_iter().next().filter(|c| after.starts_with(['`', '\'']) && token(c))
            {
                out.push(code);
            }
        }
    }
    let mut seen = Vec::new();
    out.retain(|s| {
        !seen.contains(s) && {
            seen.push(s.clone());
            true
        }
    });
    out
}

/// The `code` and 'code' spans of a text, in order.
fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(['`', '\'']) {
        let q = rest[i..].chars().next().unwrap_or('`');
        let Some(len) = rest[i + 1..].find(q) else { break };
        let code = &rest[i + 1..i + 1 + len];
        if !code.is_empty() {
            out.push(code.to_string());
        }
        rest = &rest[i + 2 + len..];
    }
    out
}

/// One name or one operator: what can replace a marked token as it is.
fn token(s: &str) -> bool {
    s.chars().all(|c| c.is_alphanumeric() || c == '_') || s.chars().all(|c| c.is_ascii_punctuation() && c != '`')
}

/// The import that would define an undefined name: a standard module of
/// that name, or a file `NAME.csp` next to the document.
fn missing_import(doc: &Doc, d: &Diag) -> Option<String> {
    let name = d.message.strip_prefix("undefined name '")?.strip_suffix('\'')?;
    if crate::compile::std_source(name).is_some() && name != "prelude" {
        return Some(format!("std/{name}"));
    }
    let dir = doc.path.as_ref()?.parent()?;
    dir.join(format!("{name}.csp")).is_file().then(|| format!("./{name}.csp"))
}

/// Where a new import goes: after the last line that starts with `import`
/// among the file's first statements, else at the top.
fn after_imports(text: &str) -> usize {
    let mut at = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        offset += line.len();
        if t.starts_with("import ") {
            at = offset;
        } else if !(t.is_empty() || t.starts_with("//")) {
            break;
        }
    }
    at
}

/// The lines a span covers, with the newline after them.
fn whole_lines(text: &str, span: Span) -> Span {
    let start = text[..span.start as usize].rfind('\n').map_or(0, |i| i + 1);
    let end = text[span.end as usize..].find('\n').map_or(text.len(), |i| span.end as usize + i + 1);
    Span::new(start, end)
}

#[cfg(test)]
mod tests {
    #[test]
    fn suggestions_come_from_the_help_text() {
        assert_eq!(super::suggestions("did you mean `total`?"), ["total"]);
        assert_eq!(super::suggestions("did you mean 'push'? or `x`"), ["push"]);
        assert_eq!(super::suggestions("did you mean `a` or `b`?"), ["a", "b"]);
        assert_eq!(super::suggestions("`=` assigns; to compare, use `==`"), ["=="]);
        assert_eq!(super::suggestions("csp has no null: use `nil`"), ["nil"]);
        // Not a replacement of the marked token: a placeholder, a statement.
        assert!(super::suggestions("write `std/NAME` for the standard library").is_empty());
        assert!(super::suggestions("name it: `import \"x\" as some_name`").is_empty());
    }

    #[test]
    fn imports_go_after_the_last_import() {
        assert_eq!(super::after_imports("// x\nimport \"std/sync\"\n\nprint(1)\n"), 23);
        assert_eq!(super::after_imports("print(1)\n"), 0);
    }
}
