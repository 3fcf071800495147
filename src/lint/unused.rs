//! Names: unused variables, parameters and imports, and variables that
//! shadow another of the same function. All of it is read off the resolver's
//! index; the AST walk here only finds which functions are called directly.

use super::{line_of, silenced, warning};
use crate::diag::Diag;
use crate::lsp::resolve::{DefKind, Index};
use crate::syntax::ast::*;
use crate::syntax::visit::{walk_block, walk_expr, walk_stmt, Visitor};
use std::collections::{HashMap, HashSet};

pub fn check(program: &Program, ix: &Index, src: &str, out: &mut Vec<Diag>) {
    let mut shapes = Shapes::default();
    walk_block(&mut shapes, &program.stmts);
    let def_at: HashMap<u32, usize> = ix.refs.iter().filter_map(|(s, d)| Some((s.start, (*d)?))).collect();
    // Parameters whose function is only ever called by name, after the last
    // one it reads (ESLint's "after-used"): the callers could stop passing
    // them. A function used any other way (passed as a callback, stored in a
    // map, a literal) must take what its caller gives.
    let mut checked_params: HashSet<usize> = HashSet::new();
    for (name, params) in &shapes.named {
        let Some(&f) = def_at.get(name) else { continue };
        let mut uses = ix.uses(f).filter(|s| s.start != *name).peekable();
        if uses.peek().is_some() && uses.all(|s| shapes.callees.contains(&s.start)) {
            let ids: Vec<usize> = params.iter().filter_map(|p| def_at.get(p).copied()).collect();
            let last_read = ids.iter().rposition(|&p| ix.is_read(p)).map_or(0, |i| i + 1);
            checked_params.extend(&ids[last_read..]);
        }
    }
    for (id, d) in ix.defs.iter().enumerate() {
        if silenced(&d.name) {
            continue;
        }
        // A global declared further down is not in the reader's mind yet.
        let shadowed = d.shadows.filter(|&o| !d.global && ix.defs[o].span.start < d.span.start);
        if let Some(outer) = shadowed {
            let o = &ix.defs[outer];
            let line = line_of(src, o.span.start);
            out.push(warning(
                "csp::lint::shadow",
                d.span,
                format!("'{}' shadows the variable '{}' of line {line}", d.name, o.name),
                "give one of them another name",
            ));
        }
        if ix.is_read(id) {
            continue;
        }
        let (code, what, help) = match d.kind {
            DefKind::Import => ("csp::lint::unused_import", "import", "remove the import"),
            _ if d.global => continue,
            DefKind::Param if !checked_params.contains(&id) => continue,
            DefKind::Param => (
                "csp::lint::unused_parameter",
                "parameter",
                "remove it (and the argument callers pass), or start its name with `_`",
            ),
            DefKind::Fn => ("csp::lint::unused_variable", "function", "remove it, or start its name with `_`"),
            DefKind::Var if shapes.loop_vars.contains(&d.span.start) => continue,
            // `catch e` names the error whether or not the handler looks at it.
            DefKind::Var if shapes.catch_names.contains(&d.span.start) => continue,
            DefKind::Let | DefKind::Var => {
                ("csp::lint::unused_variable", "variable", "remove it, or start its name with `_`")
            }
        };
        let never = if ix.uses(id).count() > 1 { "assigned but never read" } else { "never used" };
        out.push(warning(code, d.span, format!("{what} '{}' is {never}", d.name), help));
    }
}

/// What the walk finds: names called directly, and each named function's parameters.
#[derive(Default)]
struct Shapes {
    /// Starts of names in callee position: `f(...)`, `go f(...)`.
    callees: HashSet<u32>,
    /// A function's name (`fn f` or `let f = fn`) and its parameters' names, by start.
    named: Vec<(u32, Vec<u32>)>,
    catch_names: HashSet<u32>,
    /// The variables of `for` loops and comprehensions: `for i in 0..n`
    /// repeats a block n times, whether or not it reads `i`.
    loop_vars: HashSet<u32>,
}

fn param_starts(d: &FuncDecl) -> Vec<u32> {
    d.params.iter().map(|p| p.name.span.start).chain(d.rest.iter().map(|r| r.span.start)).collect()
}

impl Visitor for Shapes {
    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Fn(d) => {
                if let Some(n) = &d.name {
                    self.named.push((n.span.start, param_starts(d)));
                }
            }
            StmtKind::Let { names, value } => {
                if let (ExprKind::Func(d), [n]) = (&value.kind, names.as_slice()) {
                    self.named.push((n.span.start, param_starts(d)));
                }
            }
            StmtKind::Try { catch: Some((Some(n), _)), .. } => {
                self.catch_names.insert(n.span.start);
            }
            StmtKind::For { key, var, .. } => self.loop_vars.extend(key.iter().chain([var]).map(|n| n.span.start)),
            _ => {}
        }
        walk_stmt(self, s)
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call(f, _) if matches!(f.kind, ExprKind::Name(_)) => {
                self.callees.insert(f.span.start);
            }
            ExprKind::ListComp { var, .. } => {
                self.loop_vars.insert(var.span.start);
            }
            _ => {}
        }
        walk_expr(self, e)
    }
}
