//! Hover: a builtin's or method's signature and description from
//! `docs/builtins.md`, a module member's signature and comment, a
//! function's signature, what kind of name a variable is.

use super::resolve::{DefKind, Index, Ty};
use super::text::{Encoding, Lines};
use super::{modules, reference, Doc};
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};

pub fn hover(doc: &Doc, offset: usize, enc: Encoding) -> Option<Hover> {
    let program = super::complete::parse_lenient(doc.text.clone(), None).0?;
    let ix = Index::of(&program);
    let (span, text) = if let Some(dot) = ix.dot_at(offset) {
        let text = match &dot.recv {
            Some(Ty::Module(path)) => {
                let m = modules::load(path, doc.path.as_deref())?;
                let member = modules::members(&m.src).into_iter().find(|x| x.name == dot.name)?;
                let head = member.signature.unwrap_or_else(|| format!("let {}", member.name));
                format!("```csp\n{head}\n```\n\n{}", member.doc)
            }
            Some(Ty::Kind(kind)) => reference::method(Some(kind), &dot.name)?.markdown(),
            None => reference::method(None, &dot.name)?.markdown(),
        };
        (dot.span, text)
    } else {
        let (span, def) = ix.ref_at(offset)?;
        let text = match def.map(|d| &ix.defs[d]) {
            Some(d) => {
                let head = match (d.kind, &d.signature, &d.ty) {
                    (_, Some(sig), _) => sig.clone(),
                    (DefKind::Import, _, Some(Ty::Module(path))) => format!("import \"{path}\""),
                    (DefKind::Param, ..) => format!("{} (parameter)", d.name),
                    (_, _, Some(Ty::Kind(k))) => format!("let {}  // {k}", d.name),
                    _ => format!("let {}", d.name),
                };
                let scope = if d.global { "global" } else { "local" };
                format!("```csp\n{head}\n```\n\n({scope})")
            }
            None => reference::builtin(&doc.text[span.start as usize..span.end as usize])?.markdown(),
        };
        (span, text)
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: text }),
        range: Some(Lines::new(&doc.text, enc).range(span)),
    })
}
