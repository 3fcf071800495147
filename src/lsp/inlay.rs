//! Inlay hints: parameter names before the arguments of calls to functions
//! whose parameters have names worth reading: the file's own functions and
//! imported modules' functions. (Builtins' one-letter names would be noise.)
//! An argument that already says the name (`f(count)`, `f(self.count)`) and
//! a parameter named `_x` get no hint.

use super::resolve::{Index, Ty};
use super::signature::{param_name, params};
use super::text::{Encoding, Lines};
use super::{modules, Doc};
use crate::syntax::ast::*;
use crate::syntax::visit::{walk_expr, Visitor};
use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel};
use std::collections::HashMap;

/// The hints of calls between the byte offsets `from` and `to`.
pub fn hints(doc: &Doc, from: usize, to: usize, enc: Encoding) -> Vec<InlayHint> {
    let Some(program) = super::complete::parse_lenient(doc.text.clone(), None).0 else { return Vec::new() };
    let ix = Index::of(&program);
    let def_at = ix.refs.iter().filter_map(|(s, d)| Some((s.start, (*d)?))).collect();
    let mut calls = Calls { doc, ix: &ix, def_at, members: HashMap::new(), from, to, found: Vec::new() };
    for s in &program.stmts {
        calls.stmt(s);
    }
    let lines = Lines::new(&doc.text, enc);
    calls
        .found
        .into_iter()
        .map(|(at, name)| InlayHint {
            position: lines.position(at),
            label: InlayHintLabel::String(format!("{name}:")),
            kind: Some(InlayHintKind::PARAMETER),
            text_edits: None,
            tooltip: None,
            padding_left: None,
            padding_right: Some(true),
            data: None,
        })
        .collect()
}

struct Calls<'a> {
    doc: &'a Doc,
    ix: &'a Index,
    def_at: HashMap<u32, usize>,
    /// Imported modules' function signatures, by path and name (loaded once).
    members: HashMap<String, HashMap<String, String>>,
    from: usize,
    to: usize,
    found: Vec<(usize, String)>,
}

impl Calls<'_> {
    /// The signature of `f` in `f(...)`, or of `recv.name` in `recv.name(...)`
    /// when `recv` is an imported module.
    fn signature(&mut self, callee: &Expr, member: Option<&Ident>) -> Option<String> {
        let def = &self.ix.defs[*self.def_at.get(&callee.span.start)?];
        let Some(name) = member else { return def.signature.clone() };
        let Some(Ty::Module(path)) = &def.ty else { return None };
        let doc = self.doc;
        let members = self.members.entry(path.clone()).or_insert_with(|| {
            let m = modules::load(path, doc.path.as_deref());
            let all = m.map(|m| modules::members(&m.src)).unwrap_or_default();
            all.into_iter().filter_map(|x| Some((x.name, x.signature?))).collect()
        });
        members.get(&name.name).cloned()
    }

    fn call(&mut self, callee: &Expr, member: Option<&Ident>, args: &[Expr]) {
        if !matches!(callee.kind, ExprKind::Name(_)) {
            return;
        }
        let Some(sig) = self.signature(callee, member) else { return };
        let params = params(&sig);
        // A rest parameter (the last) gets one hint, at the first argument it takes.
        for (i, arg) in args.iter().enumerate() {
            let Some(p) = params.get(i) else { break };
            let name = param_name(p);
            let at = arg.span.start as usize;
            if at < self.from || at > self.to || name.starts_with('_') || says(arg, name) {
                continue;
            }
            let shown = if p.starts_with("...") { format!("...{name}") } else { name.to_string() };
            self.found.push((at, shown));
        }
    }
}

/// Whether an argument already names the parameter: `count`, `x.count`, `count()`.
fn says(arg: &Expr, name: &str) -> bool {
    match &arg.kind {
        ExprKind::Name(n) => n == name,
        ExprKind::Field(_, f) | ExprKind::Method(_, f, _) => f.name == name,
        ExprKind::Call(f, _) => crate::limits::with_stack(|| says(f, name)),
        _ => false,
    }
}

impl Visitor for Calls<'_> {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call(f, args) => self.call(f, None, args),
            ExprKind::Method(recv, name, args) => self.call(recv, Some(name), args),
            _ => {}
        }
        walk_expr(self, e)
    }
}
