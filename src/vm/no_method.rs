//! The "has no method" error, with the hint a user of another language needs:
//! the method meant (a synonym, or the closest name), or how csp does it.

use super::{err, ErrorKind, Res};

/// `kind has no method 'name'`, given the methods `kind` has.
pub fn no_method<T>(kind: &str, name: &str, methods: &[&str]) -> Res<T> {
    let hint = match method_hint(kind, name, methods) {
        Some(h) => format!("; {h}"),
        None => String::new(),
    };
    err(ErrorKind::Type, format!("{kind} has no method '{name}'{hint}"))
}

/// Names users of other languages reach for, and what csp calls them.
const SYNONYMS: &[(&str, &str)] = &[
    // Python's and JavaScript's regex methods.
    ("search", "find"),
    ("match", "find"),
    ("exec", "find"),
    ("fullmatch", "find"),
    ("findall", "find_all"),
    ("finditer", "find_all"),
    ("matchAll", "find_all"),
    ("sub", "replace"),
    ("subn", "replace"),
    ("replace_all", "replace"),
    ("replaceAll", "replace"),
    ("append", "push"),
    ("add", "push"),
    ("length", "len"),
    ("size", "len"),
    ("count", "len"),
    ("includes", "contains"),
    ("has", "contains"),
    ("indexOf", "index_of"),
    ("find", "index_of"),
    ("substring", "slice"),
    ("substr", "slice"),
    ("startsWith", "starts_with"),
    ("endsWith", "ends_with"),
    ("toUpperCase", "upper"),
    ("toLowerCase", "lower"),
    ("strip", "trim"),
    ("forEach", "each"),
    ("shift", "remove"),
    ("delete", "remove"),
    ("clone", "copy"),
    ("lstrip", "trim_start"),
    ("rstrip", "trim_end"),
    ("trimStart", "trim_start"),
    ("trimEnd", "trim_end"),
    ("padStart", "pad_start"),
    ("padEnd", "pad_end"),
    ("rjust", "pad_start"),
    ("ljust", "pad_end"),
    ("lastIndexOf", "rfind"),
    ("isdigit", "is_digit"),
    ("isalpha", "is_alpha"),
    ("isspace", "is_space"),
    ("flatMap", "flat_map"),
    ("findIndex", "find_index"),
    ("some", "any"),
    ("every", "all"),
    ("uniq", "unique"),
    ("distinct", "unique"),
    ("groupBy", "group_by"),
    ("concat", "extend"),
];

/// A hint for a method that does not exist: the one meant, or how to do it.
fn method_hint(kind: &str, name: &str, methods: &[&str]) -> Option<String> {
    if kind == "mutex" && matches!(name, "lock" | "unlock" | "acquire" | "release") {
        return Some("hold a mutex with `lock m { ... }`".to_string());
    }
    match (kind, name) {
        ("string", "decode") => return Some("a string is text already; decode() is a method of bytes".to_string()),
        ("bytes", "encode") => return Some("bytes are encoded already; b.decode() makes a string".to_string()),
        _ => {}
    }
    let synonym = SYNONYMS.iter().find(|(from, to)| *from == name && methods.contains(to)).map(|(_, to)| *to);
    synonym.or_else(|| crate::suggest::closest(name, methods.iter().copied())).map(|m| format!("did you mean '{m}'?"))
}
