//! Signature help: inside the parentheses of a call, the callee's signature
//! with the parameter the cursor is on. The call is found in the text before
//! the cursor (which rarely parses while it is being typed); the callee is
//! resolved as hover resolves it: a function of the file, a module's member,
//! a builtin or a method of the receiver's type.

use super::resolve::{Index, Ty};
use super::{modules, reference, Doc};
use lsp_types::{ParameterInformation, ParameterLabel, SignatureHelp, SignatureInformation};

pub fn help(doc: &Doc, offset: usize) -> Option<SignatureHelp> {
    let before = &doc.text[..offset.min(doc.text.len())];
    let (open, arg) = open_call(before)?;
    let (recv, name) = callee(&before[..open])?;
    let ix = super::complete::parse_lenient(doc.text.clone(), Some(offset)).0.map(|p| Index::of(&p));
    let def = |n: &str| {
        ix.as_ref().and_then(|ix| {
            ix.in_scope(open).into_iter().find(|d| d.name == n).map(|d| (d.signature.clone(), d.ty.clone()))
        })
    };
    let (label, doc_text) = match recv {
        Some(r) => match def(r).and_then(|d| d.1) {
            Some(Ty::Module(path)) => {
                let m = modules::load(&path, doc.path.as_deref())?;
                let member = modules::members(&m.src).into_iter().find(|x| x.name == name)?;
                (member.signature?, member.doc)
            }
            Some(Ty::Kind(kind)) => entry(reference::method(Some(kind), name)?),
            None => entry(reference::method(None, name)?),
        },
        None => match def(name) {
            Some((Some(sig), _)) => (sig, String::new()),
            Some(_) => return None,
            None => entry(reference::builtin(name)?),
        },
    };
    let params = params(&label);
    let active = match params.last() {
        Some(last) if last.starts_with("...") && arg >= params.len() => params.len() - 1,
        _ => arg,
    };
    let information = SignatureInformation {
        label: label.clone(),
        documentation: (!doc_text.is_empty()).then_some(lsp_types::Documentation::String(doc_text)),
        parameters: Some(
            params
                .iter()
                .map(|p| ParameterInformation { label: ParameterLabel::Simple(p.clone()), documentation: None })
                .collect(),
        ),
        active_parameter: Some(active as u32),
    };
    Some(SignatureHelp {
        signatures: vec![information],
        active_signature: Some(0),
        active_parameter: Some(active as u32),
    })
}

fn entry(e: &reference::Entry) -> (String, String) {
    (e.signature.clone(), e.text.clone())
}

/// The parameters of a signature `name(a, b = ..., ...rest)`, as written.
pub fn params(signature: &str) -> Vec<String> {
    let Some(open) = signature.find('(') else { return Vec::new() };
    let Some(close) = signature.rfind(')') else { return Vec::new() };
    let inner = &signature[open + 1..close.max(open + 1)];
    inner.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_string).collect()
}

/// The parameter's name alone: `b = ...` is `b`, `...rest` is `rest`.
pub fn param_name(p: &str) -> &str {
    p.split([' ', '=']).next().unwrap_or(p).trim_start_matches('.')
}

/// The innermost `(` not yet closed at the end of `text`, and how many
/// commas of its own follow it (skipping strings, comments and nested brackets).
fn open_call(text: &str) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut stack: Vec<(u8, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 1);
            }
            c @ (b'(' | b'[' | b'{') => stack.push((c, i, 0)),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.2 += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let &(c, at, commas) = stack.last()?;
    (c == b'(').then_some((at, commas))
}

/// The callee written right before a `(`: `name` or `recv.name`.
fn callee(text: &str) -> Option<(Option<&str>, &str)> {
    fn word(s: &str) -> (&str, &str) {
        let t = s.trim_end();
        let start = t.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        (&t[..start], &t[start..])
    }
    let (rest, name) = word(text);
    if name.is_empty()
        || name.starts_with(|c: char| c.is_ascii_digit())
        || crate::repl::reader::KEYWORDS.contains(&name)
    {
        return None;
    }
    match rest.strip_suffix('.') {
        Some(r) => {
            let (_, recv) = word(r);
            Some((Some(recv).filter(|r| !r.is_empty()), name))
        }
        None => Some((None, name)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_open_call_and_the_argument() {
        assert_eq!(super::open_call("f(a, g(b, c), "), Some((1, 2)));
        assert_eq!(super::open_call("f(\"a, b\", [1, 2], "), Some((1, 2)));
        assert_eq!(super::open_call("f(a) + 1"), None);
        assert_eq!(super::callee("  xs.push"), Some((Some("xs"), "push")));
        assert_eq!(super::callee("if "), None);
        assert_eq!(super::params("fn f(a, b = ..., ...rest)"), ["a", "b = ...", "...rest"]);
        assert_eq!(super::param_name("b = ..."), "b");
        assert_eq!(super::param_name("...rest"), "rest");
    }
}
