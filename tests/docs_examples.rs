//! The examples in docs/builtins.md are true: every indented block is run as a
//! program, and each `print(...)  // TEXT` line's TEXT must be the next line it prints.

use std::process::Command;

/// The indented blocks of a markdown file (tables excluded), blank lines inside kept out.
fn blocks(md: &str) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    let mut cur = Vec::new();
    for line in md.lines() {
        match line.strip_prefix("    ") {
            Some(code) if !code.starts_with('|') => cur.push(code),
            _ if line.trim().is_empty() => {}
            _ => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The output a line promises: the text after `)  // ` or `}  // ` on a line that prints.
fn promised(line: &str) -> Option<&str> {
    if !line.contains("print(") {
        return None;
    }
    let i = line.rfind("  // ")?;
    line[..i].trim_end().ends_with([')', '}']).then(|| &line[i + 5..])
}

#[test]
fn builtins_md_examples_are_true() {
    let root = env!("CARGO_MANIFEST_DIR");
    let md = std::fs::read_to_string(format!("{root}/docs/builtins.md")).unwrap();
    let dir = std::env::temp_dir().join(format!("csp_docs_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let all = blocks(&md);
    assert!(all.len() > 50, "found only {} examples", all.len());
    for (n, b) in all.iter().enumerate() {
        let want: Vec<&str> = b.iter().filter_map(|l| promised(l)).collect();
        let path = dir.join(format!("ex{n}.csp"));
        std::fs::write(&path, b.join("\n") + "\n").unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_csp")).arg("run").arg(&path).output().unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        let got: Vec<&str> = got.lines().collect();
        if got != want || !out.status.success() {
            failures.push(format!(
                "{}\nwant {want:?}\ngot  {got:?}\n{}",
                b.join("\n"),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n----\n"));
}
