//! Tokens.
//!
//! [`Raw`] is the logos-generated scanner's token: keywords, punctuation and the
//! raw shapes of identifiers, numbers and string openings. The lexer
//! (`lexer.rs`) turns those into [`Tok`], the parser's token, which carries
//! values (names, numbers, decoded string pieces) and adds the `;` inserted at
//! line ends.

use logos::Logos;

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Raw {
    // ---- handled by the lexer, never reach the parser ----
    #[token("\n")]
    Newline,
    #[token("/*")]
    BlockComment,
    #[token("\"")]
    Quote,
    #[regex("[A-Za-z_][A-Za-z0-9_]*")]
    Ident,
    /// Decimal, hex and binary integers, and floats without a `.` (`1e9`);
    /// validated by the lexer, which also rejects junk like `12abc`.
    #[regex("[0-9][0-9A-Za-z_]*")]
    Number,
    /// Floats with a fraction or a signed exponent.
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9_]*)?")]
    #[regex(r"[0-9][0-9_]*[eE][+-][0-9_]*")]
    FloatNumber,

    // ---- keywords ----
    #[token("let")]
    Let,
    #[token("fn")]
    Fn,
    #[token("return")]
    Return,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("while")]
    While,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("is")]
    Is,
    #[token("not")]
    Not,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("nil")]
    Nil,
    #[token("go")]
    Go,
    #[token("chan")]
    Chan,
    #[token("select")]
    Select,
    #[token("case")]
    Case,
    #[token("default")]
    Default,
    #[token("lock")]
    Lock,
    #[token("wait")]
    Wait,
    #[token("yield")]
    Yield,
    #[token("try")]
    Try,
    #[token("catch")]
    Catch,
    #[token("finally")]
    Finally,
    #[token("throw")]
    Throw,
    #[token("import")]
    Import,
    #[token("as")]
    As,

    // ---- punctuation ----
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("..=")]
    DotDotEq,
    #[token("...")]
    Ellipsis,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("%=")]
    PercentAssign,
    #[token("**=")]
    StarStarAssign,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("**")]
    StarStar,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("!")]
    Bang,
    #[token("&&")]
    AndAnd,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("?")]
    Question,
    #[token("||")]
    OrOr,
    #[token("<-")]
    Arrow,
    #[token("=>")]
    FatArrow,
}

/// The parser's token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    Float(f64),
    /// A string literal without interpolation, escapes decoded.
    Str(String),
    /// The opening `"` of an interpolated string.
    InterpStart,
    /// A literal piece of an interpolated string, escapes decoded.
    StrPart(String),
    /// `${`
    InterpOpen,
    /// The `}` that closes `${`.
    InterpClose,
    /// The closing `"` of an interpolated string.
    InterpEnd,
    /// A keyword or punctuation; `P(Raw::Semi)` is also what a statement-ending
    /// newline becomes.
    P(Raw),
}

impl Raw {
    /// True for the keywords (`true`, `false` and `nil` included).
    pub fn is_keyword(self) -> bool {
        matches!(
            self,
            Raw::Let
                | Raw::Fn
                | Raw::Return
                | Raw::If
                | Raw::Else
                | Raw::While
                | Raw::For
                | Raw::In
                | Raw::Is
                | Raw::Not
                | Raw::Break
                | Raw::Continue
                | Raw::True
                | Raw::False
                | Raw::Nil
                | Raw::Go
                | Raw::Chan
                | Raw::Select
                | Raw::Case
                | Raw::Default
                | Raw::Lock
                | Raw::Wait
                | Raw::Yield
                | Raw::Try
                | Raw::Catch
                | Raw::Finally
                | Raw::Throw
                | Raw::Import
                | Raw::As
        )
    }
}

impl Tok {
    /// True when a newline right after this token ends the statement (Go's rule).
    pub fn ends_statement(&self) -> bool {
        match self {
            Tok::Ident(_) | Tok::Int(_) | Tok::Float(_) | Tok::Str(_) | Tok::InterpEnd => true,
            Tok::P(r) => matches!(
                r,
                Raw::True
                    | Raw::False
                    | Raw::Nil
                    | Raw::Break
                    | Raw::Continue
                    | Raw::Return
                    | Raw::Yield
                    | Raw::RParen
                    | Raw::RBracket
                    | Raw::RBrace
            ),
            _ => false,
        }
    }

    /// A description for "unexpected ..." messages; `text` is the token's source.
    pub fn describe(&self, text: &str) -> String {
        match self {
            Tok::Ident(name) => format!("identifier '{name}'"),
            Tok::Int(_) | Tok::Float(_) => format!("number '{text}'"),
            Tok::Str(_) | Tok::InterpStart => "string".to_string(),
            Tok::StrPart(_) | Tok::InterpEnd => "end of string".to_string(),
            Tok::InterpOpen => "'${'".to_string(),
            Tok::InterpClose => "'}'".to_string(),
            Tok::P(Raw::Semi) if text != ";" => "newline".to_string(),
            Tok::P(_) => format!("'{text}'"),
        }
    }
}
