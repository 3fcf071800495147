//! The front end: source text to [`ast::Program`].
//!
//! `lexer` produces tokens (with newline `;` insertion and string
//! interpolation), the LALRPOP grammar in `grammar/csp.lalrpop` builds the AST,
//! and this module turns lexer and parser errors into [`SyntaxError`]s with
//! readable messages.

pub mod ast;
pub mod lexer;
pub mod token;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_imports, dead_code)]
    grammar,
    "/csp.rs"
);

#[cfg(test)]
mod tests;

use lalrpop_util::ParseError;

use crate::source::Span;
use lexer::LexError;
use token::Tok;

/// A syntax error with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    /// The input ended too early ("unexpected end of input", an unterminated
    /// string or comment): a REPL can ask for another line.
    pub at_eof: bool,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SyntaxError {}

impl From<LexError> for SyntaxError {
    fn from(e: LexError) -> SyntaxError {
        SyntaxError { span: e.span, message: e.message, help: e.help, at_eof: e.at_eof }
    }
}

/// Parses a whole file (or REPL input). On failure returns every error found,
/// in source order.
pub fn parse(src: &str) -> Result<ast::Program, Vec<SyntaxError>> {
    let lexed = lexer::lex(src);
    let mut errors: Vec<SyntaxError> = lexed.errors.into_iter().map(SyntaxError::from).collect();
    if lexed.fatal {
        return Err(errors);
    }
    let mut recovered = Vec::new();
    let result = grammar::ProgramParser::new().parse(&mut recovered, lexed.tokens.into_iter().map(Ok::<_, LexError>));
    for r in recovered {
        errors.push(convert(src, r.error));
    }
    let program = match result {
        Ok(p) => Some(p),
        Err(e) => {
            errors.push(convert(src, e));
            None
        }
    };
    match program {
        Some(p) if errors.is_empty() => Ok(p),
        _ => {
            point_at_unclosed_opener(src, &mut errors);
            errors.sort_by_key(|e| (e.span.start, e.span.end));
            // One error per location: recovery can report the same spot twice.
            errors.dedup_by(|b, a| a.span.start == b.span.start);
            Err(errors)
        }
    }
}

/// An input that ends inside an unclosed `{`, `(` or `[` is reported at that
/// opener (where the mistake usually is), not at the end of the file.
fn point_at_unclosed_opener(src: &str, errors: &mut [SyntaxError]) {
    let Some(e) = errors.iter_mut().find(|e| e.at_eof && e.message.starts_with("unexpected end of input")) else {
        return;
    };
    let mut open: Vec<(usize, usize, char)> = Vec::new();
    for (l, tok, r) in lexer::lex(src).tokens {
        match tok {
            Tok::P(token::Raw::LBrace) | Tok::InterpOpen => open.push((l, r, '}')),
            Tok::P(token::Raw::LParen) => open.push((l, r, ')')),
            Tok::P(token::Raw::LBracket) => open.push((l, r, ']')),
            Tok::P(token::Raw::RBrace | token::Raw::RParen | token::Raw::RBracket) | Tok::InterpClose => {
                open.pop();
            }
            _ => {}
        }
    }
    if let Some((l, r, close)) = open.pop() {
        let opener = &src[l..r];
        e.help =
            Some(format!("the input ends (at {}) before this `{opener}` is closed by `{close}`", eof_position(src)));
        e.message = format!("`{opener}` is never closed");
        e.span = Span::new(l, r);
    }
}

/// `line N, column C` of the end of `src`.
fn eof_position(src: &str) -> String {
    let line = src.matches('\n').count() + 1;
    let col = src.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {col}")
}

fn convert(src: &str, e: ParseError<usize, Tok, LexError>) -> SyntaxError {
    match e {
        ParseError::InvalidToken { location } => SyntaxError {
            span: Span::new(location, location),
            message: "invalid token".to_string(),
            help: None,
            at_eof: false,
        },
        ParseError::UnrecognizedEof { location, expected } => SyntaxError {
            span: Span::new(location, location),
            message: format!("unexpected end of input{}", expected_list(&expected)),
            help: None,
            at_eof: true,
        },
        ParseError::UnrecognizedToken { token: (l, tok, r), expected } => {
            let text = src.get(l..r).unwrap_or("");
            SyntaxError {
                span: Span::new(l, r),
                message: format!("unexpected {}{}", tok.describe(text), expected_list(&expected)),
                help: help_for(&tok, text, &expected),
                at_eof: false,
            }
        }
        ParseError::ExtraToken { token: (l, tok, r) } => {
            let text = src.get(l..r).unwrap_or("");
            SyntaxError {
                span: Span::new(l, r),
                message: format!("unexpected {}", tok.describe(text)),
                help: help_for(&tok, text, &[]),
                at_eof: false,
            }
        }
        ParseError::User { error } => error.into(),
    }
}

/// Tokens that can start an expression; when most of them are expected the
/// message says "an expression" instead of listing them.
const EXPR_START: &[&str] = &[
    "identifier",
    "integer",
    "float",
    "string",
    "interpolated string",
    "nil",
    "true",
    "false",
    "(",
    "[",
    "{",
    "fn",
    "chan",
    "-",
    "!",
    "~",
    "<-",
    "go",
    "wait",
    "yield",
];

const STMT_START: &[&str] =
    &["let", "if", "while", "for", "break", "continue", "return", "throw", "try", "select", "lock", "import"];

/// Operators that can continue an expression; when a binary operator is
/// expected they are summarised as "an operator".
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "..", "..=", ".", "(", "[", "in", "not",
    "is", "&", "|", "^", "<<", ">>", "?",
];

const MAX_LISTED: usize = 6;

/// `, expected one of: ...` from lalrpop's quoted terminal names.
fn expected_list(expected: &[String]) -> String {
    let names: Vec<&str> = expected.iter().map(|s| s.trim_matches('"')).collect();
    let mut items: Vec<String> = Vec::new();
    let has_stmt = names.contains(&"let");
    let has_expr = names.contains(&"integer");
    let has_op = names.contains(&"+");
    if has_stmt {
        items.push("a statement".to_string());
    } else if has_expr {
        items.push("an expression".to_string());
    }
    for n in &names {
        if (has_stmt || has_expr) && EXPR_START.contains(n) {
            continue;
        }
        if has_stmt && STMT_START.contains(n) {
            continue;
        }
        if has_op && OPERATORS.contains(n) {
            continue;
        }
        let readable = match *n {
            "identifier" => "identifier".to_string(),
            "integer" | "float" => "number".to_string(),
            "string" | "interpolated string" => "string".to_string(),
            "string text" | "${" | "end of string" => "end of string".to_string(),
            "} of ${" => "'}'".to_string(),
            ";" => "end of statement".to_string(),
            other => format!("'{other}'"),
        };
        if !items.contains(&readable) {
            items.push(readable);
        }
    }
    if has_op {
        items.push("an operator".to_string());
    }
    match items.len() {
        0 => String::new(),
        1 => format!(", expected {}", items[0]),
        n if n <= MAX_LISTED => format!(", expected one of: {}", items.join(", ")),
        _ => format!(", expected one of: {}, ...", items[..MAX_LISTED].join(", ")),
    }
}

fn help_for(tok: &Tok, text: &str, expected: &[String]) -> Option<String> {
    let expects = |name: &str| expected.iter().any(|e| e.trim_matches('"') == name);
    match tok {
        Tok::P(token::Raw::Semi) if text != ";" && expects("{") => {
            Some("the `{` must be on the same line as the statement head".to_string())
        }
        Tok::P(token::Raw::Else) | Tok::P(token::Raw::Catch) | Tok::P(token::Raw::Finally) => {
            Some(format!("`{text}` must be on the same line as the `}}` that closes the previous block"))
        }
        Tok::P(token::Raw::Semi) if text != ";" => {
            Some("a newline here ends the statement; break lines after an operator or ',' instead".to_string())
        }
        Tok::P(token::Raw::Colon) if expects("}") => Some(
            "a `{` at the start of a statement opens a block; wrap a map literal in parentheses: ({...})".to_string(),
        ),
        Tok::P(token::Raw::RBrace) if !expects("}") => Some("this `}` has no matching `{`".to_string()),
        Tok::P(token::Raw::Assign) if expects("{") || expects("&&") => {
            Some("`=` assigns; to compare, use `==`".to_string())
        }
        Tok::P(_) if expects("identifier") && text.chars().all(|c| c.is_ascii_alphabetic()) => {
            Some(format!("`{text}` is a keyword and cannot be used as a name"))
        }
        _ => None,
    }
}

/// Small constructors used by the grammar's actions.
pub(crate) mod build {
    use super::ast::*;
    use super::lexer::LexError;
    use super::token::Tok;
    use crate::source::Span;
    use lalrpop_util::ErrorRecovery;
    use std::rc::Rc;

    pub fn stmts(v: Vec<Option<Stmt>>, last: Option<Stmt>) -> Vec<Stmt> {
        v.into_iter().flatten().chain(last).collect()
    }

    /// Placeholder for a statement that failed to parse; the error is kept
    /// and the parse as a whole fails, so the node is never compiled.
    pub fn error_stmt(
        errors: &mut Vec<ErrorRecovery<usize, Tok, LexError>>,
        e: ErrorRecovery<usize, Tok, LexError>,
        l: usize,
        r: usize,
    ) -> Stmt {
        errors.push(e);
        let span = Span::new(l, r.max(l));
        Stmt { kind: StmtKind::Expr(Expr { kind: ExprKind::Nil, span }), span }
    }

    /// `fn(params) => body`: a function whose body is `return body`.
    pub fn lambda(p: (Vec<Param>, Option<Ident>), body: Expr, l: usize, r: usize) -> Expr {
        let span = Span::new(l, r);
        let ret = Stmt { span: body.span, kind: StmtKind::Return(Some(body)) };
        let decl = FuncDecl { name: None, params: p.0, rest: p.1, body: vec![ret], span };
        Expr { kind: ExprKind::Func(Rc::new(decl)), span }
    }
}
