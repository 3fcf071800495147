//! The front end: source text to [`ast::Program`].
//!
//! `lexer` produces tokens (with newline `;` insertion and string
//! interpolation), the LALRPOP grammar in `grammar/csp.lalrpop` builds the AST,
//! and this module turns lexer and parser errors into [`SyntaxError`]s with
//! readable messages.

pub mod ast;
mod habits;
pub mod lexer;
pub mod token;
pub mod visit;

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
///
/// After an error the parser does not try to repair the statement (a guess
/// that swallows a `{` turns every later `}` into an error). It parses again
/// from the next line that starts a statement, up to the end of that line's
/// block (the first line indented less), so each statement after an error is
/// checked on its own and no error is reported that the first one caused.
pub fn parse(src: &str) -> Result<ast::Program, Vec<SyntaxError>> {
    let lexed = lexer::lex(src);
    let mut errors: Vec<SyntaxError> = lexed.errors.into_iter().map(SyntaxError::from).collect();
    if lexed.fatal {
        return Err(errors);
    }
    let tokens = lexed.tokens;
    let lines = Lines { src, tokens: &tokens };
    let (mut from, mut to) = (0, tokens.len());
    let mut program = None;
    loop {
        let chunk = &tokens[from..to];
        let resume_at = match grammar::ProgramParser::new().parse(chunk.iter().cloned().map(Ok::<_, LexError>)) {
            Ok(p) => {
                program = ((from, to) == (0, tokens.len())).then_some(p);
                tokens.get(to).map_or(src.len(), |t| t.0)
            }
            Err(e) => {
                let closers = expected_closers(&e);
                let mut e = convert(src, e);
                let at = e.span.start as usize;
                let index = if e.at_eof { chunk.len() } else { chunk.partition_point(|t| t.0 < at) };
                if let Some(h) = habits::hint(src, chunk, index) {
                    e.help = Some(h);
                }
                // A chunk cut short by indentation may end inside an opener:
                // that is no evidence of an error.
                if !e.at_eof || to == tokens.len() {
                    let unclosed = explain_unclosed(src, chunk, &closers, &mut e);
                    errors.push(e);
                    // A bracket never closed to the end of the input: the lexer
                    // read the rest as inside it (no line ends there), so later
                    // errors would all be this one's echo.
                    if unclosed.is_some_and(|at| never_closed(&tokens, at)) {
                        break;
                    }
                }
                at
            }
        };
        match lines.next_statement(from, resume_at) {
            Some(next) => (from, to) = (next, lines.block_end(next)),
            None => break,
        }
    }
    match program {
        Some(p) if errors.is_empty() => Ok(p),
        _ => {
            errors.sort_by_key(|e| (e.span.start, e.span.end));
            // One error per location: a lexer error can also stop the parser there.
            errors.dedup_by(|b, a| a.span.start == b.span.start);
            Err(errors)
        }
    }
}

/// Where parsing can start afresh after an error: tokens that begin a line.
struct Lines<'a> {
    src: &'a str,
    tokens: &'a [(usize, Tok, usize)],
}

impl Lines<'_> {
    /// The indentation of token `i` if it is the first on its line.
    fn indent(&self, i: usize) -> Option<usize> {
        let l = self.tokens[i].0;
        let line_start = self.src[..l].rfind('\n').map_or(0, |n| n + 1);
        self.src[line_start..l].bytes().all(|b| b == b' ' || b == b'\t').then_some(l - line_start)
    }

    /// The first token after token `after`, at or after byte `at`, that can
    /// start a statement on a line of its own: in column 0, or indented after
    /// a finished statement or a brace (not a continuation line of a call, a
    /// literal or an operator).
    fn next_statement(&self, after: usize, at: usize) -> Option<usize> {
        use token::Raw;
        (after + 1..self.tokens.len()).find(|&i| {
            let (l, tok, _) = &self.tokens[i];
            let starts = match tok {
                Tok::Ident(_) => true,
                Tok::P(raw) => matches!(
                    raw,
                    Raw::Let
                        | Raw::Fn
                        | Raw::Import
                        | Raw::If
                        | Raw::While
                        | Raw::For
                        | Raw::Go
                        | Raw::Select
                        | Raw::Lock
                        | Raw::Wait
                        | Raw::Try
                        | Raw::Throw
                        | Raw::Return
                ),
                _ => false,
            };
            let after_statement = || matches!(self.tokens[i - 1].1, Tok::P(Raw::Semi | Raw::LBrace | Raw::RBrace));
            *l >= at
                && starts
                && match self.indent(i) {
                    Some(0) => true,
                    Some(_) => after_statement(),
                    None => false,
                }
        })
    }

    /// The end of the block that token `i` starts a line in: the first later
    /// line indented less (the end of input for column 0).
    fn block_end(&self, i: usize) -> usize {
        let Some(indent) = self.indent(i).filter(|&n| n > 0) else { return self.tokens.len() };
        (i + 1..self.tokens.len()).find(|&k| self.indent(k).is_some_and(|n| n < indent)).unwrap_or(self.tokens.len())
    }
}

/// When an opener is still unclosed where the error is, says so: an input
/// that ends inside it is reported at the opener (where the mistake usually
/// is); an error on a later line says which opener is still open. Returns
/// that opener's offset when a `(` or `[` on an earlier line is the likely cause.
fn explain_unclosed(src: &str, tokens: &[(usize, Tok, usize)], closers: &str, e: &mut SyntaxError) -> Option<usize> {
    let mut open: Vec<(usize, usize, char)> = Vec::new();
    for (l, tok, r) in tokens {
        if *l >= e.span.start as usize && !e.at_eof {
            break;
        }
        match tok {
            Tok::P(token::Raw::LBrace) | Tok::InterpOpen => open.push((*l, *r, '}')),
            Tok::P(token::Raw::LParen) => open.push((*l, *r, ')')),
            Tok::P(token::Raw::LBracket) => open.push((*l, *r, ']')),
            Tok::P(token::Raw::RBrace | token::Raw::RParen | token::Raw::RBracket) | Tok::InterpClose => {
                open.pop();
            }
            _ => {}
        }
    }
    let (l, r, close) = open.pop()?;
    let opener = &src[l..r];
    if e.at_eof && e.message.starts_with("unexpected end of input") {
        e.help =
            Some(format!("the input ends (at {}) before this `{opener}` is closed by `{close}`", eof_position(src)));
        e.message = format!("`{opener}` is never closed");
        e.span = Span::new(l, r);
        None
    } else if !e.at_eof
        && !matches!(src.get(e.span.start as usize..e.span.end as usize), Some("else" | "catch" | "finally"))
        && closers.contains(close)
        && src.get(r..e.span.start as usize).is_some_and(|gap| gap.contains('\n'))
    {
        // Replaces a guess such as "this `}` has no matching `{`": the
        // unclosed opener is the likelier cause.
        let (line, _) = line_col(src, l);
        let rest = &src[r..src[r..].find('\n').map_or(src.len(), |n| r + n)];
        let comment = rest.find("//").is_some_and(|c| rest[..c].matches('"').count().is_multiple_of(2));
        e.help = Some(match comment {
            // Python's floor division: here the rest of the line is a comment.
            true => format!("the `{opener}` on line {line} is not closed by `{close}`: `//` starts a comment, so the rest of line {line} is ignored"),
            false => format!("the `{opener}` on line {line} is not closed by `{close}`"),
        });
        // A bracket other than a block's `{`: the lexer joins the lines after it.
        (close != '}').then_some(l)
    } else {
        None
    }
}

/// Is the bracket that opens at byte `at` still open at the end of the input?
fn never_closed(tokens: &[(usize, Tok, usize)], at: usize) -> bool {
    let mut depth = 0usize;
    for (_, tok, _) in tokens.iter().skip_while(|t| t.0 < at) {
        match tok {
            Tok::P(token::Raw::LBrace | token::Raw::LParen | token::Raw::LBracket) | Tok::InterpOpen => depth += 1,
            Tok::P(token::Raw::RBrace | token::Raw::RParen | token::Raw::RBracket) | Tok::InterpClose => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Which of `}`, `)` and `]` the parser would have accepted where it failed.
fn expected_closers(e: &ParseError<usize, Tok, LexError>) -> String {
    let expected = match e {
        ParseError::UnrecognizedToken { expected, .. } | ParseError::UnrecognizedEof { expected, .. } => expected,
        _ => return String::new(),
    };
    expected
        .iter()
        .filter(|x| ["\"}\"", "\")\"", "\"]\""].contains(&x.as_str()))
        .map(|x| x.as_bytes()[1] as char)
        .collect()
}

/// 1-based line and column of byte `at`.
fn line_col(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// `line N, column C` of the end of `src`.
fn eof_position(src: &str) -> String {
    let (line, col) = line_col(src, src.len());
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
    "+", "-", "*", "**", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "..", "..=", ".", "(", "[", "in",
    "not", "is", "&", "|", "^", "<<", ">>", "?",
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
        // Where only a name fits (`let for = 1`), not where any expression does.
        Tok::P(_) if expects("identifier") && !expects("integer") && text.chars().all(|c| c.is_ascii_alphabetic()) => {
            Some(format!("`{text}` is a keyword and cannot be used as a name"))
        }
        _ => None,
    }
}

/// Small constructors used by the grammar's actions.
pub(crate) mod build {
    use super::ast::*;
    use crate::source::Span;
    use std::rc::Rc;

    pub fn stmts(v: Vec<Option<Stmt>>, last: Option<Stmt>) -> Vec<Stmt> {
        v.into_iter().flatten().chain(last).collect()
    }

    /// `fn(params) => body`: a function whose body is `return body`.
    pub fn lambda(p: (Vec<Param>, Option<Ident>), body: Expr, l: usize, r: usize) -> Expr {
        let span = Span::new(l, r);
        let ret = Stmt { span: body.span, kind: StmtKind::Return(Some(body)) };
        let decl = FuncDecl { name: None, params: p.0, rest: p.1, body: vec![ret], span };
        Expr { kind: ExprKind::Func(Rc::new(decl)), span }
    }
}
