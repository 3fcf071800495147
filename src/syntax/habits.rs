//! Hints for syntax errors that habits from Python and JavaScript cause
//! (`x++`, `s[1:2]`, `a and b`, `const x = 1`, `a if c else b`): the error
//! says what csp writes instead.

use super::token::{Raw, Tok};

/// The hint for an error at token `at` of `tokens` (`tokens.len()` at the end
/// of input), when a habit from another language explains it.
pub(super) fn hint(src: &str, tokens: &[(usize, Tok, usize)], at: usize) -> Option<String> {
    let tok = |i: usize| tokens.get(i).map(|t| &t.1);
    let text = |i: usize| tokens.get(i).map_or("", |t| &src[t.0..t.2]);
    let adjacent = |i: usize| i > 0 && i <= tokens.len() && tokens.get(i).is_none_or(|t| t.0 == tokens[i - 1].2);
    // `x++` / `x--`: the second sign, or what follows it.
    for i in [at, at.saturating_sub(1)] {
        if i >= 1
            && adjacent(i)
            && matches!(
                (tok(i - 1), tok(i)),
                (Some(Tok::P(Raw::Plus)), Some(Tok::P(Raw::Plus)))
                    | (Some(Tok::P(Raw::Minus)), Some(Tok::P(Raw::Minus)))
            )
        {
            let op = if matches!(tok(i), Some(Tok::P(Raw::Plus))) { "+" } else { "-" };
            return Some(format!("csp has no `{op}{op}`: write `x {op}= 1`"));
        }
    }
    match tok(at)? {
        Tok::Ident(name) if name == "and" => Some("csp writes `&&` for `and`".into()),
        Tok::Ident(name) if name == "or" => Some("csp writes `||` for `or`".into()),
        Tok::P(Raw::Not) => Some("csp writes `!x` for `not x` (`not` only appears in `not in` and `is not`)".into()),
        Tok::P(Raw::Colon)
            if matches!(
                tokens[..at].iter().rev().find(|t| matches!(t.1, Tok::P(Raw::LBracket | Raw::RBracket))),
                Some((_, Tok::P(Raw::LBracket), _))
            ) =>
        {
            Some("csp has no slice syntax: write `s.slice(start, end)`".into())
        }
        Tok::P(Raw::Assign)
            if matches!(tok(at.wrapping_sub(1)), Some(Tok::P(Raw::EqEq | Raw::NotEq))) && adjacent(at) =>
        {
            Some("csp has no `===`: `==` compares without conversions".into())
        }
        Tok::P(Raw::If)
            if at > 0 && !matches!(tok(at - 1), Some(Tok::P(Raw::Semi | Raw::LBrace | Raw::RBrace | Raw::Else))) =>
        {
            Some("csp's conditional expression is `cond ? a : b`".into())
        }
        Tok::Ident(_) if at > 0 => match (tok(at - 1), text(at - 1)) {
            (Some(Tok::Ident(_)), "const" | "var") => Some("csp declares variables with `let`".into()),
            (Some(Tok::Ident(_)), "function" | "def" | "func" | "fun") => {
                Some("csp declares functions with `fn`: `fn name(a, b) { ... }`".into())
            }
            (Some(Tok::Ident(_)), "elif" | "elsif") => Some("csp writes `else if`, on the line of the `}`".into()),
            _ => None,
        },
        _ => None,
    }
}
