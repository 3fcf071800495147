//! The lexer: source text to `(start, Tok, end)` triples (byte offsets).
//!
//! On top of the logos scanner ([`Raw`]) it
//! - inserts `;` at a newline when the line's last token ends a statement
//!   (Go's rule), except inside `(...)`, `[...]` and `${...}`, where newlines are
//!   always ignored;
//! - reads strings by hand, decoding escapes and splitting interpolated strings
//!   into `InterpStart (StrPart | InterpOpen <tokens> InterpClose)* InterpEnd`.
//!   Interpolation nesting is handled with an explicit stack, not recursion;
//! - converts and range-checks number literals;
//! - bounds the nesting depth of the program (brackets, interpolations and
//!   chains of operators), so that nothing downstream that recurses over the
//!   AST, including its `Drop`, can overflow the stack.
//!
//! Lexical errors do not stop the lexer: it records them, substitutes a
//! harmless token and goes on, so that one pass reports several errors. Only
//! exceeding the nesting limit stops it.

use logos::Logos;

use super::token::{Raw, Tok};
use crate::source::Span;

/// Maximum nesting of the program: open brackets plus operators chained in one
/// expression. Deeper input is rejected with a syntax error.
pub const MAX_DEPTH: usize = 1000;

pub type Spanned = (usize, Tok, usize);

/// A lexical error. (The parser is fed only `Ok` tokens; lexical errors are
/// collected on the side. The type is still the parser's user error type.)
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    /// The input ended inside a string or comment.
    pub at_eof: bool,
}

impl LexError {
    fn new(start: usize, end: usize, message: impl Into<String>) -> LexError {
        LexError { span: Span::new(start, end), message: message.into(), help: None, at_eof: false }
    }
    fn with_help(mut self, help: impl Into<String>) -> LexError {
        self.help = Some(help.into());
        self
    }
}

/// The result of lexing a file.
pub struct Lexed {
    pub tokens: Vec<Spanned>,
    pub errors: Vec<LexError>,
    /// True when lexing stopped early (nesting limit): the tokens are incomplete
    /// and must not be parsed.
    pub fatal: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Paren,
    Bracket,
    Brace,
    Interp,
}

/// How a piece of string ended.
enum StrEnd {
    /// At the closing `"`; the position after it.
    Quote(usize),
    /// At `${`; the position after it.
    Interp(usize),
    /// At end of input.
    Eof,
}

struct Lexer<'a> {
    src: &'a str,
    tokens: Vec<Spanned>,
    errors: Vec<LexError>,
    stack: Vec<Open>,
    /// Per open level, how many operators are chained in the current
    /// expression at that level (reset by `,` and `;`).
    chain: Vec<usize>,
    /// Sum of `chain` plus `stack.len()`: a bound on the AST depth.
    depth: usize,
    /// A statement-ending newline not yet emitted as `;` (see `flush_semi`).
    pending_semi: Option<(usize, usize)>,
}

pub fn lex(src: &str) -> Lexed {
    let mut lx = Lexer {
        src,
        tokens: Vec::new(),
        errors: Vec::new(),
        stack: Vec::new(),
        chain: vec![0],
        depth: 0,
        pending_semi: None,
    };
    let fatal = lx.run().is_err();
    Lexed { tokens: lx.tokens, errors: lx.errors, fatal }
}

/// Raised when the nesting limit is exceeded.
struct TooDeep;

impl<'a> Lexer<'a> {
    fn run(&mut self) -> Result<(), TooDeep> {
        let src = self.src;
        let mut lex = Raw::lexer(src);
        // A byte-order mark, and a `#!` line so scripts can be executable.
        let mut skip = if src.starts_with('\u{feff}') { 3 } else { 0 };
        if src[skip..].starts_with("#!") {
            skip += src[skip..].find('\n').unwrap_or(src.len() - skip);
        }
        lex.bump(skip);
        while let Some(res) = lex.next() {
            let span = lex.span();
            let (start, end) = (span.start, span.end);
            let raw = match res {
                Ok(raw) => raw,
                Err(()) => {
                    let ch = src[start..].chars().next().unwrap_or('?');
                    let msg = if ch == '$' {
                        "unexpected character '$' (interpolation `${...}` is only allowed inside a string)".to_string()
                    } else {
                        format!("unexpected character {ch:?}")
                    };
                    self.errors.push(LexError::new(start, start + ch.len_utf8(), msg));
                    // Make sure we skip the whole character.
                    let extra = start + ch.len_utf8() - end.min(start + ch.len_utf8());
                    if extra > 0 {
                        lex.bump(extra);
                    }
                    continue;
                }
            };
            if !matches!(raw, Raw::Newline | Raw::BlockComment) {
                self.flush_semi(raw == Raw::Dot);
            }
            // After `.` a keyword is a field or method name (`m.select`, `co.throw(e)`).
            if raw.is_keyword() && matches!(self.tokens.last(), Some((_, Tok::P(Raw::Dot), _))) {
                self.push(start, Tok::Ident(src[start..end].to_string()), end);
                continue;
            }
            match raw {
                Raw::Newline => self.newline(start, end),
                Raw::BlockComment => match src[end..].find("*/") {
                    Some(i) => {
                        if src[end..end + i].contains('\n') {
                            self.newline(start, end + i + 2);
                        }
                        lex.bump(i + 2);
                    }
                    None => {
                        let mut e = LexError::new(start, end, "unterminated block comment")
                            .with_help("close the comment with `*/`");
                        e.at_eof = true;
                        self.errors.push(e);
                        lex.bump(src.len() - end);
                    }
                },
                Raw::Quote => {
                    let after = self.string_start(start, end)?;
                    lex.bump(after - end);
                }
                Raw::Ident => self.push(start, Tok::Ident(src[start..end].to_string()), end),
                Raw::Number if self.is_negated_int_min(start, end) => {
                    // `-9223372036854775808`: the one literal whose magnitude
                    // only fits negated. Fold it with its prefix `-`.
                    let (minus, _, _) = self.tokens.pop().expect("checked by is_negated_int_min");
                    self.push(minus, Tok::Int(i64::MIN), end);
                }
                Raw::Number | Raw::FloatNumber => {
                    let tok = self.number(start, end, raw == Raw::FloatNumber);
                    self.push(start, tok, end);
                }
                Raw::LParen | Raw::LBracket | Raw::LBrace => {
                    self.push(start, Tok::P(raw), end);
                    let open = match raw {
                        Raw::LParen => Open::Paren,
                        Raw::LBracket => Open::Bracket,
                        _ => Open::Brace,
                    };
                    self.open(open, start, end)?;
                }
                Raw::RParen | Raw::RBracket | Raw::RBrace => {
                    if raw == Raw::RBrace && self.stack.last() == Some(&Open::Interp) {
                        self.close();
                        self.push(start, Tok::InterpClose, end);
                        let after = self.string_rest(end)?;
                        lex.bump(after - end);
                    } else {
                        // On a mismatch the parser reports the error; keep the
                        // interpolation levels intact so strings still end right.
                        if matches!(self.stack.last(), Some(o) if *o != Open::Interp) {
                            self.close();
                        }
                        self.push(start, Tok::P(raw), end);
                        self.chained(start, end)?;
                    }
                }
                Raw::Comma | Raw::Semi => {
                    self.reset_chain();
                    self.push(start, Tok::P(raw), end);
                }
                Raw::Minus
                | Raw::Plus
                | Raw::Star
                | Raw::StarStar
                | Raw::Slash
                | Raw::Percent
                | Raw::Bang
                | Raw::Arrow
                | Raw::EqEq
                | Raw::NotEq
                | Raw::Lt
                | Raw::Le
                | Raw::Gt
                | Raw::Ge
                | Raw::AndAnd
                | Raw::OrOr
                | Raw::Amp
                | Raw::Pipe
                | Raw::Caret
                | Raw::Tilde
                | Raw::Shl
                | Raw::Shr
                | Raw::Question
                | Raw::In
                | Raw::Is
                | Raw::Not
                | Raw::DotDot
                | Raw::DotDotEq
                | Raw::Dot
                | Raw::FatArrow
                | Raw::Go
                | Raw::Wait
                | Raw::Yield
                | Raw::Else => {
                    self.push(start, Tok::P(raw), end);
                    self.chained(start, end)?;
                }
                _ => self.push(start, Tok::P(raw), end),
            }
        }
        self.flush_semi(false);
        Ok(())
    }

    fn push(&mut self, start: usize, tok: Tok, end: usize) {
        self.tokens.push((start, tok, end));
    }

    fn newline(&mut self, start: usize, end: usize) {
        if matches!(self.stack.last(), Some(Open::Paren | Open::Bracket | Open::Interp)) {
            return;
        }
        if self.pending_semi.is_some() {
            return;
        }
        if let Some((_, last, _)) = self.tokens.last() {
            if last.ends_statement() {
                self.pending_semi = Some((start, end));
            }
        }
    }

    /// Emits the `;` for a statement-ending newline, unless the next line
    /// starts with `.` (a method chain continued on the next line).
    fn flush_semi(&mut self, next_is_dot: bool) {
        if let Some((start, end)) = self.pending_semi.take() {
            if !next_is_dot {
                self.push(start, Tok::P(Raw::Semi), end);
                self.reset_chain();
            }
        }
    }

    fn too_deep(&mut self, start: usize, end: usize) -> TooDeep {
        self.errors.push(
            LexError::new(start, end, format!("program nested too deeply (limit {MAX_DEPTH} levels)"))
                .with_help("split deeply nested brackets or long operator chains into smaller pieces"),
        );
        TooDeep
    }

    fn open(&mut self, open: Open, start: usize, end: usize) -> Result<(), TooDeep> {
        self.stack.push(open);
        self.chain.push(0);
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.too_deep(start, end));
        }
        Ok(())
    }

    fn close(&mut self) {
        self.stack.pop();
        let c = self.chain.pop().unwrap_or(0);
        self.depth -= c + 1;
    }

    /// One more operator chained into the current expression.
    fn chained(&mut self, start: usize, end: usize) -> Result<(), TooDeep> {
        if let Some(c) = self.chain.last_mut() {
            *c += 1;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.too_deep(start, end));
        }
        Ok(())
    }

    fn reset_chain(&mut self) {
        if let Some(c) = self.chain.last_mut() {
            self.depth -= *c;
            *c = 0;
        }
    }

    /// True for the literal `9223372036854775808` right after a prefix `-`.
    fn is_negated_int_min(&self, start: usize, end: usize) -> bool {
        let digits: String = self.src[start..end].chars().filter(|&c| c != '_').collect();
        if digits != "9223372036854775808" {
            return false;
        }
        let n = self.tokens.len();
        if n == 0 || self.tokens[n - 1].1 != Tok::P(Raw::Minus) {
            return false;
        }
        // The `-` is a prefix unless it follows an operand.
        match n.checked_sub(2).map(|i| &self.tokens[i].1) {
            None => true,
            Some(t) => {
                !t.ends_statement() || matches!(t, Tok::P(Raw::Break | Raw::Continue | Raw::Return | Raw::Yield))
            }
        }
    }

    fn number(&mut self, start: usize, end: usize, is_float: bool) -> Tok {
        let text = &self.src[start..end];
        let digits: String = text.chars().filter(|&c| c != '_').collect();
        let bad = |lx: &mut Self, what: &str| {
            lx.errors.push(LexError::new(start, end, format!("invalid {what} literal '{text}'")));
        };
        let int = |lx: &mut Self, r: Result<i64, std::num::ParseIntError>| -> Tok {
            match r {
                Ok(v) => Tok::Int(v),
                Err(e) => {
                    use std::num::IntErrorKind::*;
                    match e.kind() {
                        PosOverflow | NegOverflow => lx.errors.push(
                            LexError::new(start, end, "integer literal too large")
                                .with_help("integers are 64-bit signed: at most 9223372036854775807"),
                        ),
                        _ => bad(lx, "integer"),
                    }
                    Tok::Int(0)
                }
            }
        };
        let lower = digits.to_ascii_lowercase();
        if !is_float {
            if let Some(hex) = lower.strip_prefix("0x") {
                if hex.is_empty() {
                    bad(self, "hexadecimal");
                    return Tok::Int(0);
                }
                return int(self, i64::from_str_radix(hex, 16));
            }
            if let Some(bin) = lower.strip_prefix("0b") {
                if bin.is_empty() {
                    bad(self, "binary");
                    return Tok::Int(0);
                }
                return int(self, i64::from_str_radix(bin, 2));
            }
            if lower.bytes().all(|b| b.is_ascii_digit()) {
                return int(self, lower.parse::<i64>());
            }
            // `1e9`: a float written without a fraction.
            let is_exp = lower.split_once('e').is_some_and(|(m, e)| {
                !m.is_empty()
                    && m.bytes().all(|b| b.is_ascii_digit())
                    && !e.is_empty()
                    && e.bytes().all(|b| b.is_ascii_digit())
            });
            if !is_exp {
                bad(self, "number");
                return Tok::Int(0);
            }
        }
        match lower.parse::<f64>() {
            Ok(v) if v.is_finite() => Tok::Float(v),
            Ok(_) => {
                self.errors.push(
                    LexError::new(start, end, "float literal out of range")
                        .with_help("the largest float is about 1.8e308"),
                );
                Tok::Float(0.0)
            }
            Err(_) => {
                bad(self, "float");
                Tok::Float(0.0)
            }
        }
    }

    /// A string starting with the `"` at `quote..pos`. Emits its tokens and
    /// returns the position where lexing resumes.
    fn string_start(&mut self, quote: usize, pos: usize) -> Result<usize, TooDeep> {
        let (text, text_end, how) = self.scan_str(pos);
        match how {
            StrEnd::Quote(after) => {
                self.push(quote, Tok::Str(text), after);
                Ok(after)
            }
            StrEnd::Eof => {
                self.unterminated(quote);
                self.push(quote, Tok::Str(text), self.src.len());
                Ok(self.src.len())
            }
            StrEnd::Interp(after) => {
                self.push(quote, Tok::InterpStart, pos);
                if !text.is_empty() {
                    self.push(pos, Tok::StrPart(text), text_end);
                }
                self.push(text_end, Tok::InterpOpen, after);
                self.open(Open::Interp, text_end, after)?;
                Ok(after)
            }
        }
    }

    /// The rest of an interpolated string, after the `}` closing a `${`.
    fn string_rest(&mut self, pos: usize) -> Result<usize, TooDeep> {
        let (text, text_end, how) = self.scan_str(pos);
        if !text.is_empty() {
            self.push(pos, Tok::StrPart(text), text_end);
        }
        match how {
            StrEnd::Quote(after) => {
                self.push(text_end, Tok::InterpEnd, after);
                Ok(after)
            }
            StrEnd::Eof => {
                // Report at the start of this piece: the string's opening quote
                // is further back, but this is where it should have ended.
                self.unterminated(pos);
                self.push(self.src.len(), Tok::InterpEnd, self.src.len());
                Ok(self.src.len())
            }
            StrEnd::Interp(after) => {
                self.push(text_end, Tok::InterpOpen, after);
                self.open(Open::Interp, text_end, after)?;
                Ok(after)
            }
        }
    }

    fn unterminated(&mut self, start: usize) {
        let mut e = LexError::new(start, self.src.len(), "unterminated string").with_help("close the string with `\"`");
        e.at_eof = true;
        self.errors.push(e);
    }

    /// Reads string text from `pos` up to the closing `"` or a `${`. Returns
    /// the decoded text, the position where the text ends, and how it ended.
    fn scan_str(&mut self, pos: usize) -> (String, usize, StrEnd) {
        let src = self.src;
        let bytes = src.as_bytes();
        let mut out = String::new();
        let mut i = pos;
        loop {
            let Some(c) = src[i..].chars().next() else {
                return (out, i, StrEnd::Eof);
            };
            match c {
                '"' => return (out, i, StrEnd::Quote(i + 1)),
                '$' if bytes.get(i + 1) == Some(&b'{') => return (out, i, StrEnd::Interp(i + 2)),
                '\\' => {
                    let Some(e) = src[i + 1..].chars().next() else {
                        return (out, i + 1, StrEnd::Eof);
                    };
                    let simple = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        '\\' => Some('\\'),
                        '"' => Some('"'),
                        '0' => Some('\0'),
                        '$' => Some('$'),
                        _ => None,
                    };
                    if let Some(ch) = simple {
                        out.push(ch);
                        i += 2;
                    } else if e == 'u' {
                        i = self.unicode_escape(i, &mut out);
                    } else {
                        self.errors.push(
                            LexError::new(i, i + 1 + e.len_utf8(), format!("unknown escape sequence '\\{e}'"))
                                .with_help("valid escapes: \\n \\t \\r \\\\ \\\" \\0 \\$ \\u{...}"),
                        );
                        i += 1 + e.len_utf8();
                    }
                }
                _ => {
                    out.push(c);
                    i += c.len_utf8();
                }
            }
        }
    }

    /// `\u{XXXX}` at `i` (the backslash). Returns the position after it.
    fn unicode_escape(&mut self, i: usize, out: &mut String) -> usize {
        let src = self.src;
        let rest = &src[i + 2..];
        let help = "write a unicode escape as \\u{1F600} (1 to 6 hex digits)";
        if !rest.starts_with('{') {
            self.errors.push(LexError::new(i, i + 2, "invalid unicode escape").with_help(help));
            return i + 2;
        }
        let close = rest[1..].find(|c: char| !c.is_ascii_hexdigit());
        match close {
            Some(n) if rest[1 + n..].starts_with('}') => {
                let end = i + 2 + 1 + n + 1;
                let hex = &rest[1..1 + n];
                match u32::from_str_radix(hex, 16).ok().filter(|_| n <= 6).and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => self.errors.push(
                        LexError::new(i, end, format!("invalid unicode escape '\\u{{{hex}}}'"))
                            .with_help("the value must be a Unicode scalar value, at most 10FFFF and not a surrogate"),
                    ),
                }
                end
            }
            _ => {
                let end = i + 3 + close.unwrap_or(rest.len() - 1);
                self.errors.push(LexError::new(i, end, "invalid unicode escape").with_help(help));
                end
            }
        }
    }
}
