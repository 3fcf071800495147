//! Hover text from the one reference, `docs/builtins.md`: each paragraph that
//! starts with a code span describes the builtins or methods it names there.

use std::sync::OnceLock;

const BUILTINS_MD: &str = include_str!("../../docs/builtins.md");

pub struct Entry {
    /// `None` for a global function; a method's section: `string`, `list`, `map`, `other`.
    pub kind: Option<&'static str>,
    pub method: bool,
    pub name: String,
    /// The code span that names it: `xs.push(v)`.
    pub signature: String,
    /// The paragraph that describes it.
    pub text: String,
}

impl Entry {
    pub fn markdown(&self) -> String {
        format!("```csp\n{}\n```\n\n{}", self.signature, self.text)
    }
}

fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| parse(BUILTINS_MD))
}

/// A global builtin's entry.
pub fn builtin(name: &str) -> Option<&'static Entry> {
    entries().iter().find(|e| !e.method && e.kind.is_none() && e.name == name)
}

/// A method's entry, from its kind's section when the receiver's kind is known.
pub fn method(kind: Option<&str>, name: &str) -> Option<&'static Entry> {
    let all = entries().iter().filter(|e| e.method && e.name == name);
    let mut all: Vec<&Entry> = all.collect();
    all.sort_by_key(|e| e.kind != kind);
    all.first().copied()
}

fn section_kind(title: &str) -> Option<Option<&'static str>> {
    Some(match title {
        "Global functions" => None,
        "String methods" => Some("string"),
        "List methods" => Some("list"),
        "Map methods" => Some("map"),
        "Methods of other values" => Some("other"),
        _ => return None,
    })
}

fn parse(md: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let mut kind: Option<Option<&'static str>> = None;
    let mut para: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in md.lines().chain([""]) {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if let Some(title) = line.strip_prefix("## ") {
            kind = section_kind(title.trim());
            continue;
        }
        if !line.trim().is_empty() && !line.starts_with('#') {
            para.push(line);
            continue;
        }
        if let (Some(k), false) = (kind, para.is_empty()) {
            entries_of(&para.join(" "), k, &mut out);
        }
        para.clear();
    }
    out
}

fn entries_of(text: &str, kind: Option<&'static str>, out: &mut Vec<Entry>) {
    if !text.starts_with('`') {
        return;
    }
    let spans: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    let mut add = |name: &str, method: bool, signature: &str| {
        let dup =
            out.iter().any(|e| e.name == name && e.method == method && e.kind == (if method { kind } else { None }));
        if !dup && !name.is_empty() {
            let kind = if method { kind } else { None };
            out.push(Entry { kind, method, name: name.into(), signature: signature.into(), text: text.into() });
        }
    };
    for (i, span) in spans.iter().enumerate() {
        let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
        if let Some((head, _)) = span.split_once('(') {
            match head.split_once('.') {
                Some((recv, name)) if word(recv) && word(name) => add(name, true, span),
                None if word(head) && kind.is_none() => add(head, false, span),
                _ => {}
            }
        } else if i == 0 && kind.is_none() && span.split(' ').all(word) {
            // `sqrt sin cos tan log exp` take a number ...
            span.split(' ').for_each(|w| add(w, false, w));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_and_methods_have_their_paragraph() {
        let len = builtin("len").expect("len");
        assert!(len.signature.starts_with("len("), "{}", len.signature);
        assert!(len.text.contains("length"));
        let push = method(Some("list"), "push").expect("push");
        assert_eq!(push.signature, "xs.push(v)");
        assert!(push.text.contains("appends"));
        assert_eq!(method(Some("string"), "upper").unwrap().signature, "s.upper()");
        assert_eq!(method(Some("string"), "len").unwrap().signature, "s.len()");
        assert!(builtin("sqrt").is_some() && builtin("PI").is_some());
    }
}
