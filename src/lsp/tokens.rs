//! Semantic tokens: what each name is, from the resolver (a module, a
//! function, a parameter, a variable; a builtin; a method or field after a
//! `.`), and keywords, strings, numbers and comments from the lexer, so an
//! editor can colour by meaning rather than by pattern.

use super::resolve::{DefKind, Index, Ty};
use super::text::{Encoding, Lines};
use super::Doc;
use crate::syntax::token::Tok;
use lsp_types::{SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokensLegend};
use std::collections::HashMap;

/// The token types, in the legend's order (a token's type is its index).
const TYPES: [SemanticTokenType; 10] = [
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::METHOD,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::KEYWORD,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
];
const NAMESPACE: u32 = 0;
const FUNCTION: u32 = 1;
const METHOD: u32 = 2;
const PROPERTY: u32 = 3;
const PARAMETER: u32 = 4;
const VARIABLE: u32 = 5;
const KEYWORD: u32 = 6;
const STRING: u32 = 7;
const NUMBER: u32 = 8;
const COMMENT: u32 = 9;

/// Modifier bits: where a name is declared; a builtin.
const DECLARATION: u32 = 1;
const DEFAULT_LIBRARY: u32 = 2;

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: vec![SemanticTokenModifier::DECLARATION, SemanticTokenModifier::DEFAULT_LIBRARY],
    }
}

/// The whole document's tokens, encoded as the protocol wants (relative positions).
pub fn tokens(doc: &Doc, enc: Encoding) -> Vec<SemanticToken> {
    let text = &doc.text;
    let ix = super::complete::parse_lenient(text.clone(), None).0.map(|p| Index::of(&p)).unwrap_or_default();
    let refs: HashMap<u32, Option<usize>> = ix.refs.iter().map(|(s, d)| (s.start, *d)).collect();
    let dots: HashMap<u32, Option<&Ty>> = ix.dots.iter().map(|d| (d.span.start, d.recv.as_ref())).collect();
    let builtins = super::complete::builtin_names();
    // (start, end, type, modifiers), in order.
    let mut found: Vec<(usize, usize, u32, u32)> = Vec::new();
    for &(l, ref tok, r) in &crate::syntax::lexer::lex(text).tokens {
        let kind = match tok {
            Tok::Int(_) | Tok::Float(_) => (NUMBER, 0),
            Tok::Str(_) | Tok::StrPart(_) | Tok::InterpStart | Tok::InterpEnd => (STRING, 0),
            Tok::P(raw) if raw.is_keyword() => (KEYWORD, 0),
            Tok::Ident(name) => match (dots.get(&(l as u32)), refs.get(&(l as u32))) {
                (Some(recv), _) => {
                    let call = text[r..].trim_start().starts_with('(');
                    match (recv, call) {
                        (Some(Ty::Module(_)), true) => (FUNCTION, 0),
                        (Some(Ty::Module(_)), false) => (VARIABLE, 0),
                        (_, true) => (METHOD, 0),
                        (_, false) => (PROPERTY, 0),
                    }
                }
                (None, Some(Some(d))) => {
                    let d = &ix.defs[*d];
                    let ty = match d.kind {
                        DefKind::Import => NAMESPACE,
                        DefKind::Fn => FUNCTION,
                        DefKind::Param => PARAMETER,
                        _ if d.ty == Some(Ty::Kind("function")) => FUNCTION,
                        _ => VARIABLE,
                    };
                    (ty, if d.span.start as usize == l { DECLARATION } else { 0 })
                }
                _ if builtins.iter().any(|b| b == name) => (FUNCTION, DEFAULT_LIBRARY),
                _ => continue,
            },
            _ => continue,
        };
        if r > l {
            found.push((l, r, kind.0, kind.1));
        }
    }
    if crate::syntax::lexer::lex(text).errors.is_empty() {
        for item in crate::fmt::comments::items(text).iter().filter(|i| i.is_comment()) {
            found.push((item.start, item.start + item.text.len(), COMMENT, 0));
        }
    }
    found.sort_by_key(|t| t.0);
    encode(text, &found, enc)
}

/// Relative positions, one token per line (a block comment or a string
/// across lines is split, for clients without multi-line tokens).
fn encode(text: &str, found: &[(usize, usize, u32, u32)], enc: Encoding) -> Vec<SemanticToken> {
    let lines = Lines::new(text, enc);
    let mut out = Vec::new();
    let (mut line, mut col) = (0, 0);
    for &(start, end, ty, mods) in found {
        let mut from = start;
        while from < end {
            let to = text[from..end].find('\n').map_or(end, |i| from + i);
            let (a, b) = (lines.position(from), lines.position(to));
            if b.character > a.character {
                let delta_start = if a.line == line { a.character - col } else { a.character };
                out.push(SemanticToken {
                    delta_line: a.line - line,
                    delta_start,
                    length: b.character - a.character,
                    token_type: ty,
                    token_modifiers_bitset: mods,
                });
                (line, col) = (a.line, a.character);
            }
            from = to + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_get_their_kind() {
        let text = "import \"std/sync\"\nfn f(n) { return len(n) } // c\n";
        let doc = super::Doc { uri: "file:///t.csp".parse().unwrap(), text: text.into(), path: None };
        let toks = super::tokens(&doc, super::Encoding::Utf16);
        let types: Vec<u32> = toks.iter().map(|t| t.token_type).collect();
        // import "std/sync"  fn f ( n ) return len ( n ) // c
        assert_eq!(types, [6, 7, 6, 1, 4, 6, 1, 4, 9], "{toks:?}");
        assert_eq!(toks[3].token_modifiers_bitset, super::DECLARATION);
        assert_eq!(toks[6].token_modifiers_bitset, super::DEFAULT_LIBRARY);
    }
}
