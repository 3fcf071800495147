//! "Did you mean …?": the closest known name to a misspelt one.

/// The candidate closest to `name` by edit distance, if close enough to be a
/// likely typo (at most one edit per three characters, and at least one).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    // One letter is too little to guess from: only a name that contains it
    // (`x` → `xs`), never another letter (`q` → `E`).
    let one = name.chars().count() == 1;
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .filter(|c| !one || c.to_lowercase().contains(&name.to_lowercase()))
        .map(|c| (distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c))
        .map(|(_, c)| c)
}

/// What csp writes for a name other languages use (`null` → `nil`), for the
/// "undefined name" error.
pub fn habit(name: &str) -> Option<&'static str> {
    Some(match name {
        "null" | "None" | "undefined" | "NULL" | "nullptr" => "csp writes `nil` for no value",
        "True" | "TRUE" => "csp writes `true`",
        "False" | "FALSE" => "csp writes `false`",
        "and" => "csp writes `&&` for `and`",
        "or" => "csp writes `||` for `or`",
        "const" | "var" => "csp declares variables with `let`",
        "function" | "def" | "func" | "fun" => "csp declares functions with `fn`",
        "elif" | "elsif" => "csp writes `else if`",
        _ => return None,
    })
}

/// What csp offers for a field other languages read for a length
/// (`xs.length` → `len(xs)`), for the "has no field" error.
pub fn field_habit(name: &str) -> Option<&'static str> {
    matches!(name, "length" | "size" | "len").then_some("the length is `len(x)` or `x.len()`")
}

/// Levenshtein distance in characters, with an adjacent swap counting as one edit.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev2 = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested() {
        assert_eq!(closest("totl_count", ["total_count", "count"]), Some("total_count"));
        assert_eq!(closest("pirnt", ["print", "int"]), Some("print"));
        assert_eq!(closest("x", ["y", "xs"]), Some("xs"));
        assert_eq!(closest("banana", ["apple", "cherry"]), None);
        assert_eq!(closest("same", ["same"]), None);
        assert_eq!(closest("q", ["E", "PI"]), None);
    }
}
