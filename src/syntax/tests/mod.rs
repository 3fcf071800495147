//! Parser tests: helpers that render the AST compactly, then the tests by area.

use super::ast::*;
use super::{parse, SyntaxError};
use crate::source::Span;

mod grammar;
mod lexical;

// ---------------------------------------------------------------- helpers

/// A compact S-expression rendering of the AST, for readable assertions.
fn sx(e: &Expr) -> String {
    use ExprKind::*;
    match &e.kind {
        Nil => "nil".into(),
        Bool(b) => b.to_string(),
        Int(i) => i.to_string(),
        Float(f) => format!("{f:?}"),
        Str(s) => format!("{s:?}"),
        Interp(parts) => {
            let ps: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    InterpPart::Lit(s) => format!("{s:?}"),
                    InterpPart::Expr(e) => format!("${{{}}}", sx(e)),
                })
                .collect();
            format!("(interp {})", ps.join(" "))
        }
        Name(n) => n.clone(),
        List(xs) => format!("[{}]", xs.iter().map(sx).collect::<Vec<_>>().join(" ")),
        ListComp { expr, key, var, iter, cond } => {
            let vars = key.as_ref().map_or(var.name.clone(), |k| format!("{}, {}", k.name, var.name));
            match cond {
                Some(c) => format!("[{} for {vars} in {} if {}]", sx(expr), sx(iter), sx(c)),
                None => format!("[{} for {vars} in {}]", sx(expr), sx(iter)),
            }
        }
        Map(kv) => {
            format!("{{{}}}", kv.iter().map(|(k, v)| format!("{}: {}", sx(k), sx(v))).collect::<Vec<_>>().join(", "))
        }
        Unary(UnOp::Neg, x) => format!("(neg {})", sx(x)),
        Unary(UnOp::Not, x) => format!("(! {})", sx(x)),
        Unary(UnOp::BitNot, x) => format!("(~ {})", sx(x)),
        Cond(c, a, b) => format!("(? {} {} {})", sx(c), sx(a), sx(b)),
        Binary(op, a, b) => format!("({} {} {})", binop(*op), sx(a), sx(b)),
        And(a, b) => format!("(&& {} {})", sx(a), sx(b)),
        Or(a, b) => format!("(|| {} {})", sx(a), sx(b)),
        Range { lo, hi, inclusive } => {
            format!("({} {} {})", if *inclusive { "..=" } else { ".." }, sx(lo), sx(hi))
        }
        Index(a, i) => format!("(index {} {})", sx(a), sx(i)),
        Field(a, f) => format!("(. {} {})", sx(a), f.name),
        Call(f, args) => format!("(call {}{})", sx(f), args_sx(args)),
        Method(o, m, args) => format!("(method {} {}{})", sx(o), m.name, args_sx(args)),
        Func(f) => func_sx(f),
        Recv(c) => format!("(<- {})", sx(c)),
        Go(x) => format!("(go {})", sx(x)),
        GoBlock(b) => format!("(go {})", block_sx(b)),
        Yield(None) => "(yield)".into(),
        Yield(Some(x)) => format!("(yield {})", sx(x)),
        Wait(x) => format!("(wait {})", sx(x)),
    }
}

fn binop(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Pow => "**",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::In => "in",
        BinOp::NotIn => "not in",
        BinOp::Is => "is",
        BinOp::IsNot => "is not",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
    }
}

fn args_sx(args: &[Expr]) -> String {
    args.iter().map(|a| format!(" {}", sx(a))).collect()
}

fn func_sx(f: &FuncDecl) -> String {
    let mut ps: Vec<String> = f
        .params
        .iter()
        .map(|p| match &p.default {
            Some(d) => format!("{}={}", p.name.name, sx(d)),
            None => p.name.name.clone(),
        })
        .collect();
    if let Some(r) = &f.rest {
        ps.push(format!("...{}", r.name));
    }
    let name = f.name.as_ref().map(|n| format!(" {}", n.name)).unwrap_or_default();
    format!("(fn{name} ({}) {})", ps.join(" "), block_sx(&f.body))
}

fn block_sx(b: &[Stmt]) -> String {
    format!("{{{}}}", b.iter().map(stmt_sx).collect::<Vec<_>>().join("; "))
}

fn names(ns: &[Ident]) -> String {
    ns.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(",")
}

fn stmt_sx(s: &Stmt) -> String {
    use StmtKind::*;
    match &s.kind {
        Let { names: ns, value } => format!("let {} = {}", names(ns), sx(value)),
        Assign { target, op: None, value } => format!("{} = {}", sx(target), sx(value)),
        Assign { target, op: Some(op), value } => format!("{} {}= {}", sx(target), binop(*op), sx(value)),
        Expr(e) => sx(e),
        Fn(f) => func_sx(f),
        If { cond, then, els: None } => format!("if {} {}", sx(cond), block_sx(then)),
        If { cond, then, els: Some(e) } => format!("if {} {} else {}", sx(cond), block_sx(then), block_sx(e)),
        While { cond, body } => format!("while {} {}", sx(cond), block_sx(body)),
        For { key: None, var, iter, body } => format!("for {} in {} {}", var.name, sx(iter), block_sx(body)),
        For { key: Some(k), var, iter, body } => {
            format!("for {},{} in {} {}", k.name, var.name, sx(iter), block_sx(body))
        }
        Break => "break".into(),
        Continue => "continue".into(),
        Return(None) => "return".into(),
        Return(Some(e)) => format!("return {}", sx(e)),
        Throw(e) => format!("throw {}", sx(e)),
        Try { body, catch, finally } => {
            let mut out = format!("try {}", block_sx(body));
            if let Some((name, b)) = catch {
                match name {
                    Some(n) => out += &format!(" catch {} {}", n.name, block_sx(b)),
                    None => out += &format!(" catch {}", block_sx(b)),
                }
            }
            if let Some(f) = finally {
                out += &format!(" finally {}", block_sx(f));
            }
            out
        }
        Block(b) => block_sx(b),
        Send { chan, value } => format!("{} <- {}", sx(chan), sx(value)),
        Select(cases) => {
            let cs: Vec<String> = cases
                .iter()
                .map(|c| match &c.kind {
                    CaseKind::Recv { names: ns, chan } => {
                        format!("case [{}] <- {} {}", names(ns), sx(chan), block_sx(&c.body))
                    }
                    CaseKind::Send { chan, value } => {
                        format!("case {} <- {} {}", sx(chan), sx(value), block_sx(&c.body))
                    }
                    CaseKind::Default => format!("default {}", block_sx(&c.body)),
                })
                .collect();
            format!("select {{{}}}", cs.join("; "))
        }
        Lock { mutex, body } => format!("lock {} {}", sx(mutex), block_sx(body)),
        WaitBlock(b) => format!("wait {}", block_sx(b)),
        Import { path, alias: None } => format!("import {path:?}"),
        Import { path, alias: Some(a) } => format!("import {path:?} as {}", a.name),
    }
}

#[track_caller]
fn ok(src: &str) -> Program {
    match parse(src) {
        Ok(p) => p,
        Err(errs) => panic!("parse failed for {src:?}: {errs:#?}"),
    }
}

/// The program rendered, statements joined by "; ".
#[track_caller]
fn p(src: &str) -> String {
    ok(src).stmts.iter().map(stmt_sx).collect::<Vec<_>>().join("; ")
}

#[track_caller]
fn errs(src: &str) -> Vec<SyntaxError> {
    match parse(src) {
        Ok(p) => panic!("expected errors for {src:?}, got {:?}", p.stmts.iter().map(stmt_sx).collect::<Vec<_>>()),
        Err(e) => e,
    }
}

#[track_caller]
fn err1(src: &str) -> SyntaxError {
    let e = errs(src);
    assert!(!e.is_empty());
    e[0].clone()
}
