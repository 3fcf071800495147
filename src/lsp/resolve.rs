//! Name resolution for the editor: walks a file's AST with its scopes and
//! records every definition, every use of a name (with the definition it
//! refers to), and every `x.name` with what is known of `x`'s type.

use crate::source::Span;
use crate::syntax::ast::*;
use crate::syntax::visit::{walk_expr, Visitor};
use std::collections::HashMap;

/// What is known of a value's type: a kind of value (`"list"`), or an
/// imported module (by its import path).
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Kind(&'static str),
    Module(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    Fn,
    Let,
    Param,
    Var,
    Import,
}

pub struct Def {
    pub name: String,
    /// The name where it is declared.
    pub span: Span,
    pub kind: DefKind,
    pub global: bool,
    pub ty: Option<Ty>,
    /// Where the name can be used: from after its declaration to the end of its scope.
    pub visible: (u32, u32),
    /// `fn f(a, b = ...)` for functions.
    pub signature: Option<String>,
    /// The variable of the same function it hides, declared in an enclosing scope.
    pub shadows: Option<usize>,
}

/// `recv.name`: a method call or a field, with the receiver's type if known.
pub struct Dot {
    pub span: Span,
    pub name: String,
    pub recv: Option<Ty>,
}

#[derive(Default)]
pub struct Index {
    pub defs: Vec<Def>,
    /// Every occurrence of a name (declarations too) and its definition; None
    /// for a name no scope defines (a builtin, or a mistake).
    pub refs: Vec<(Span, Option<usize>)>,
    pub dots: Vec<Dot>,
    /// The starts of name occurrences that only write the variable: the
    /// target of `x = e` or `x op= e`.
    pub writes: std::collections::HashSet<u32>,
}

impl Index {
    pub fn of(program: &Program) -> Index {
        let mut r = Resolver { index: Index::default(), scopes: vec![Scope::new(u32::MAX, 0)], funcs: 0 };
        r.predeclare(&program.stmts);
        r.block(&program.stmts);
        r.index
    }

    /// The name occurrence at a byte offset (touching either end).
    pub fn ref_at(&self, offset: usize) -> Option<(Span, Option<usize>)> {
        let o = offset as u32;
        self.refs.iter().copied().find(|(s, _)| s.start <= o && o <= s.end)
    }

    pub fn dot_at(&self, offset: usize) -> Option<&Dot> {
        let o = offset as u32;
        self.dots.iter().find(|d| d.span.start <= o && o <= d.span.end)
    }

    /// Whether the definition is read anywhere (not only declared or assigned).
    pub fn is_read(&self, def: usize) -> bool {
        let span = self.defs[def].span;
        self.uses(def).any(|s| s != span && !self.writes.contains(&s.start))
    }

    /// Every occurrence of a definition.
    pub fn uses(&self, def: usize) -> impl Iterator<Item = Span> + '_ {
        self.refs.iter().filter(move |(_, d)| *d == Some(def)).map(|(s, _)| *s)
    }

    /// The definitions visible at an offset, the innermost of each name.
    pub fn in_scope(&self, offset: usize) -> Vec<&Def> {
        let o = offset as u32;
        let mut by_name: HashMap<&str, &Def> = HashMap::new();
        for d in self.defs.iter().filter(|d| d.visible.0 <= o && o <= d.visible.1) {
            let inner = by_name.get(d.name.as_str()).is_none_or(|old| old.visible.0 <= d.visible.0);
            if inner {
                by_name.insert(&d.name, d);
            }
        }
        let mut found: Vec<&Def> = by_name.into_values().collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        found
    }
}

struct Resolver {
    index: Index,
    scopes: Vec<Scope>,
    /// How many functions have been entered so far (the last one's id).
    funcs: usize,
}

/// An open scope: the names bound in it, where it ends, and its function
/// (0: the file's top level; then one id per function, declared or literal,
/// and `go { }` block, in source order).
struct Scope {
    names: HashMap<String, usize>,
    end: u32,
    func: usize,
}

impl Scope {
    fn new(end: u32, func: usize) -> Scope {
        Scope { names: HashMap::new(), end, func }
    }
}

/// The name `import PATH` binds without `as`.
pub fn import_name(path: &str, alias: &Option<Ident>) -> String {
    alias.as_ref().map_or_else(
        || path.rsplit('/').next().unwrap_or(path).trim_end_matches(".csp").to_string(),
        |a| a.name.clone(),
    )
}

/// `fn name(a, b = ..., ...rest)`
pub fn signature(name: &str, d: &FuncDecl) -> String {
    format!("fn {}", crate::check::signature(name, d))
}

/// `let f = fn(a, b) ...` has `f`'s signature.
fn let_signature(names: &[Ident], value: &Expr) -> Option<String> {
    match (names, &value.kind) {
        ([n], ExprKind::Func(d)) => Some(signature(&n.name, d)),
        _ => None,
    }
}

impl Resolver {
    /// Top-level names are globals, usable before their declaration (in functions).
    fn predeclare(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match &s.kind {
                StmtKind::Let { names, value } => {
                    let ty = if names.len() == 1 { self.guess(value) } else { None };
                    for n in names {
                        self.declare(n, DefKind::Let, ty.clone(), let_signature(names, value));
                    }
                }
                StmtKind::Fn(d) => {
                    if let Some(n) = &d.name {
                        self.declare(n, DefKind::Fn, Some(Ty::Kind("function")), Some(signature(&n.name, d)));
                    }
                }
                StmtKind::Import { path, alias } => {
                    let name =
                        Ident { name: import_name(path, alias), span: alias.as_ref().map_or(s.span, |a| a.span) };
                    self.declare(&name, DefKind::Import, Some(Ty::Module(path.clone())), None);
                }
                _ => {}
            }
        }
    }

    fn declare(&mut self, n: &Ident, kind: DefKind, ty: Option<Ty>, signature: Option<String>) -> usize {
        let global = self.scopes.len() == 1;
        if global {
            if let Some(&id) = self.scopes[0].names.get(&n.name) {
                // Predeclared: the walk meets the same declaration again.
                if self.index.defs[id].span != n.span {
                    self.index.refs.push((n.span, Some(id)));
                }
                return id;
            }
        }
        let (end, func) = self.scopes.last().map_or((u32::MAX, 0), |s| (s.end, s.func));
        let visible = if global { (0, u32::MAX) } else { (n.span.end, end) };
        let shadows =
            self.scopes.iter().rev().take_while(|s| s.func == func).find_map(|s| s.names.get(&n.name).copied());
        let id = self.index.defs.len();
        let def = Def { name: n.name.clone(), span: n.span, kind, global, ty, visible, signature, shadows };
        self.index.defs.push(def);
        if let Some(scope) = self.scopes.last_mut() {
            scope.names.insert(n.name.clone(), id);
        }
        self.index.refs.push((n.span, Some(id)));
        id
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().find_map(|s| s.names.get(name).copied())
    }

    fn scoped(&mut self, end: u32, f: impl FnOnce(&mut Self)) {
        let func = self.scopes.last().map_or(0, |s| s.func);
        self.scopes.push(Scope::new(end, func));
        f(self);
        self.scopes.pop();
    }

    /// A scope that starts a new function.
    fn function(&mut self, end: u32, f: impl FnOnce(&mut Self)) {
        self.funcs += 1;
        self.scopes.push(Scope::new(end, self.funcs));
        f(self);
        self.scopes.pop();
    }

    /// What kind of value an expression makes, when that is plain from its form.
    fn guess(&self, e: &Expr) -> Option<Ty> {
        let kind = match &e.kind {
            ExprKind::List(_) | ExprKind::ListComp { .. } => "list",
            ExprKind::Str(_) | ExprKind::Interp(_) => "string",
            ExprKind::Map(_) => "map",
            ExprKind::Range { .. } => "range",
            ExprKind::Go(_) | ExprKind::GoBlock(_) => "task",
            ExprKind::Func(_) => "function",
            ExprKind::Name(n) => return self.lookup(n).and_then(|d| self.index.defs[d].ty.clone()),
            ExprKind::Call(f, _) => match &f.kind {
                ExprKind::Name(n) if self.lookup(n).is_none() => match n.as_str() {
                    "chan" | "after" | "ticker" => "chan",
                    "waitgroup" => "waitgroup",
                    "coroutine" => "coroutine",
                    "bytes" => "bytes",
                    "error" => "error",
                    "str" | "chr" | "hex" | "bin" | "oct" | "format" | "json_encode" | "input" | "read_file" => {
                        "string"
                    }
                    "range" | "zip" | "sorted" => "list",
                    "set" | "from_entries" => "map",
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        Some(Ty::Kind(kind))
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn func(&mut self, d: &FuncDecl) {
        self.function(d.span.end, |r| {
            for p in &d.params {
                if let Some(e) = &p.default {
                    r.expr(e);
                }
                r.declare(&p.name, DefKind::Param, None, None);
            }
            if let Some(rest) = &d.rest {
                r.declare(rest, DefKind::Param, Some(Ty::Kind("list")), None);
            }
            r.block(&d.body);
        });
    }

    fn stmt(&mut self, s: &Stmt) {
        crate::limits::with_stack(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) {
        let end = s.span.end;
        match &s.kind {
            StmtKind::Let { names, value } => {
                self.expr(value);
                let ty = if names.len() == 1 { self.guess(value) } else { None };
                for n in names {
                    self.declare(n, DefKind::Let, ty.clone(), let_signature(names, value));
                }
            }
            StmtKind::Assign { target, value, .. } => {
                if let ExprKind::Name(_) = target.kind {
                    self.index.writes.insert(target.span.start);
                }
                self.expr(target);
                self.expr(value);
            }
            StmtKind::Expr(e) | StmtKind::Throw(e) | StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Fn(d) => {
                if let Some(n) = &d.name {
                    self.declare(n, DefKind::Fn, Some(Ty::Kind("function")), Some(signature(&n.name, d)));
                }
                self.func(d);
            }
            StmtKind::If { cond, then, els } => {
                self.expr(cond);
                self.scoped(end, |r| r.block(then));
                if let Some(b) = els {
                    self.scoped(end, |r| r.block(b));
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.scoped(end, |r| r.block(body));
            }
            StmtKind::For { key, var, iter, body } => {
                self.expr(iter);
                self.scoped(end, |r| {
                    for n in key.iter().chain([var]) {
                        r.declare(n, DefKind::Var, None, None);
                    }
                    r.block(body);
                });
            }
            StmtKind::Try { body, catch, finally } => {
                self.scoped(end, |r| r.block(body));
                if let Some((name, b)) = catch {
                    self.scoped(end, |r| {
                        if let Some(n) = name {
                            r.declare(n, DefKind::Var, Some(Ty::Kind("error")), None);
                        }
                        r.block(b);
                    });
                }
                if let Some(b) = finally {
                    self.scoped(end, |r| r.block(b));
                }
            }
            StmtKind::Block(b) | StmtKind::WaitBlock(b) => self.scoped(end, |r| r.block(b)),
            StmtKind::Send { chan, value } => {
                self.expr(chan);
                self.expr(value);
            }
            StmtKind::Select(cases) => {
                for c in cases {
                    match &c.kind {
                        CaseKind::Recv { chan, .. } => self.expr(chan),
                        CaseKind::Send { chan, value } => {
                            self.expr(chan);
                            self.expr(value);
                        }
                        CaseKind::Default => {}
                    }
                    self.scoped(c.span.end, |r| {
                        if let CaseKind::Recv { names, .. } = &c.kind {
                            for n in names {
                                r.declare(n, DefKind::Var, None, None);
                            }
                        }
                        r.block(&c.body);
                    });
                }
            }
            StmtKind::Lock { mutex, body } => {
                self.expr(mutex);
                self.scoped(end, |r| r.block(body));
            }
            StmtKind::Import { .. } => {} // predeclared: imports are top-level only
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue => {}
        }
    }

    fn dot(&mut self, recv: &Expr, name: &Ident) {
        let recv_ty = self.guess(recv);
        self.index.dots.push(Dot { span: name.span, name: name.name.clone(), recv: recv_ty });
    }
}

/// Expressions: the names and `x.name`s it records and the scopes it opens;
/// the rest of the walk is the shared one (`syntax::visit`).
impl Visitor for Resolver {
    fn expr(&mut self, e: &Expr) {
        crate::limits::with_stack(|| match &e.kind {
            ExprKind::Name(n) => {
                let def = self.lookup(n);
                self.index.refs.push((e.span, def));
            }
            ExprKind::ListComp { expr, key, var, iter, cond } => {
                self.expr(iter);
                self.scoped(e.span.end, |r| {
                    if let Some(k) = key {
                        r.declare(k, DefKind::Var, None, None);
                    }
                    r.declare(var, DefKind::Var, None, None);
                    r.expr(expr);
                    if let Some(c) = cond {
                        r.expr(c);
                    }
                });
            }
            ExprKind::Field(recv, name) => {
                self.expr(recv);
                self.dot(recv, name);
            }
            ExprKind::Method(recv, name, args) => {
                self.expr(recv);
                self.dot(recv, name);
                args.iter().for_each(|x| self.expr(x));
            }
            ExprKind::Func(d) => self.func(d),
            ExprKind::GoBlock(b) => self.function(e.span.end, |r| r.block(b)),
            _ => walk_expr(self, e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(src: &str) -> Index {
        Index::of(&crate::syntax::parse(src).expect("parses"))
    }

    #[test]
    fn locals_shadow_and_globals_are_hoisted() {
        let src = "fn f() { return g() }\nfn g() { let x = 1; if true { let x = 2; print(x) }; return x }";
        let ix = index(src);
        let (_, g) = ix.ref_at(src.find("g()").unwrap()).unwrap();
        assert_eq!(ix.defs[g.unwrap()].span.start as usize, src.find("g() {").unwrap());
        let inner = src.find("print(x").unwrap() + 6;
        let (_, d) = ix.ref_at(inner).unwrap();
        assert_eq!(ix.defs[d.unwrap()].span.start as usize, src.find("x = 2").unwrap());
        let outer = src.rfind("return x").unwrap() + 7;
        let (_, d) = ix.ref_at(outer).unwrap();
        assert_eq!(ix.defs[d.unwrap()].span.start as usize, src.find("x = 1").unwrap());
    }

    #[test]
    fn receivers_of_known_kinds() {
        let src = "let xs = [1]\nlet n = xs.len()\nimport \"std/sync\" as s\nlet m = s.once";
        let ix = index(src);
        assert_eq!(ix.dot_at(src.find("len").unwrap()).unwrap().recv, Some(Ty::Kind("list")));
        assert_eq!(ix.dot_at(src.find("once").unwrap()).unwrap().recv, Some(Ty::Module("std/sync".into())));
    }
}
