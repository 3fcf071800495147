//! The abstract syntax tree: plain data built by the grammar's actions.
//! Validation (assignment targets, `break` placement, names) happens in the compiler.

use crate::source::Span;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

pub type Block = Vec<Stmt>;

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let x = e` (one name) or `let a, b, ... = e` (destructures a list of
    /// exactly that many items; two names and a receive `<-ch` give value and ok flag).
    Let {
        names: Vec<Ident>,
        value: Expr,
    },
    /// `target = value` or `target op= value`; the target is validated by the compiler.
    Assign {
        target: Expr,
        op: Option<BinOp>,
        value: Expr,
    },
    Expr(Expr),
    /// A named function declaration `fn name(...) { ... }`.
    Fn(Rc<FuncDecl>),
    If {
        cond: Expr,
        then: Block,
        els: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for var in iter` or `for key, var in iter` (key and value of a map, else
    /// a counting index and the item).
    For {
        key: Option<Ident>,
        var: Ident,
        iter: Expr,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    Throw(Expr),
    Try {
        body: Block,
        catch: Option<(Option<Ident>, Block)>,
        finally: Option<Block>,
    },
    Block(Block),
    /// `ch <- value`
    Send {
        chan: Expr,
        value: Expr,
    },
    Select(Vec<SelectCase>),
    Lock {
        mutex: Expr,
        body: Block,
    },
    /// `wait { ... }`: structured concurrency block.
    WaitBlock(Block),
    /// `import "std/sync"` or `import "./x.csp" as x`.
    Import {
        path: String,
        alias: Option<Ident>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    pub kind: CaseKind,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CaseKind {
    /// `case <-ch`, `case v = <-ch`, `case v, ok = <-ch`: names (0–2) bind new locals in the body.
    Recv {
        names: Vec<Ident>,
        chan: Expr,
    },
    /// `case ch <- value`
    Send {
        chan: Expr,
        value: Expr,
    },
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// An interpolated string: literal pieces and `${expr}` pieces in order.
    Interp(Vec<InterpPart>),
    Name(String),
    List(Vec<Expr>),
    /// `[expr for var in iter if cond]`, `[expr for key, var in iter]`
    ListComp {
        expr: Box<Expr>,
        /// The index (lists, strings) or key (maps) of a two-variable loop.
        key: Option<Ident>,
        var: Ident,
        iter: Box<Expr>,
        cond: Option<Box<Expr>>,
    },
    /// `{k: v, ...}`; a bare identifier key is already turned into `ExprKind::Str`.
    Map(Vec<(Expr, Expr)>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Range {
        lo: Box<Expr>,
        hi: Box<Expr>,
        inclusive: bool,
    },
    Index(Box<Expr>, Box<Expr>),
    Field(Box<Expr>, Ident),
    Call(Box<Expr>, Vec<Expr>),
    /// `recv.name(args)`
    Method(Box<Expr>, Ident, Vec<Expr>),
    Func(Rc<FuncDecl>),
    /// `<-ch`
    Recv(Box<Expr>),
    /// `go f(x)`: the operand is a call expression (validated by the compiler).
    Go(Box<Expr>),
    /// `go { ... }`
    GoBlock(Block),
    /// `yield` or `yield e`
    Yield(Option<Box<Expr>>),
    /// `wait e` (a task, a list of tasks, or a waitgroup)
    Wait(Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum InterpPart {
    Lit(String),
    Expr(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    /// `~x`: bitwise complement of an int
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    /// `a ** b`: right-associative, binding tighter than a prefix `-`
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `x in xs`: membership in a list, map (keys), string (substrings) or range
    In,
    NotIn,
    /// `a is b`: the same object (on nil, bools and numbers as `==`)
    Is,
    IsNot,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub default: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncDecl {
    pub name: Option<Ident>,
    pub params: Vec<Param>,
    /// `...rest` collects extra arguments into a list.
    pub rest: Option<Ident>,
    /// For `fn(x) => e` the body is a single `return e`.
    pub body: Block,
    pub span: Span,
}

/// A parsed file.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub stmts: Block,
}
