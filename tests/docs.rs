//! The examples in the documentation are run, so the docs cannot drift from
//! the code. A fenced block marked ```` ```csp ```` in `docs/*.md` or the
//! README is a whole program: it must exit 0, and every line with a
//! `print(` must end with `// OUTPUT`, the line that print writes, or be
//! followed by `// LINE` comments (the lines it writes); a block's stdout is
//! exactly those lines, in order. Blocks fenced without `csp` (sketches,
//! output that depends on the machine) are not run. In tables, an example
//! written `` `EXPR` → `RESULT` `` is checked too: RESULT is what `print(EXPR)`
//! writes, or for a string its quoted form.

mod common;

/// The csp blocks of a markdown text: (line number of the fence, source).
fn blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start();
        match &mut current {
            None if fence == "```csp" => current = Some((i + 1, String::new())),
            Some(_) if fence.starts_with("```") => out.push(current.take().expect("in a block")),
            Some((_, src)) => {
                src.push_str(line);
                src.push('\n');
            }
            None => {}
        }
    }
    out
}

/// What a block's prints must write: a line with `print(` ends with
/// `// OUTPUT`, or is followed by `// LINE` comment lines (output of several
/// lines).
fn expected(src: &str) -> Result<Vec<String>, String> {
    let lines: Vec<&str> = src.lines().collect();
    let mut want = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !calls_print(line) || line.trim_start().starts_with("//") {
            continue;
        }
        if let Some((code, out)) = line.rsplit_once("// ") {
            if code.trim_end().ends_with([')', '}']) {
                want.push(out.to_string());
                continue;
            }
        }
        let more: Vec<String> = lines[i + 1..]
            .iter()
            .map_while(|l| {
                l.trim_start().strip_prefix("// ").or(l.trim_start().strip_prefix("//").filter(|r| r.is_empty()))
            })
            .map(str::to_string)
            .collect();
        if more.is_empty() {
            return Err(format!("a print without its output: {line}"));
        }
        want.extend(more);
    }
    Ok(want)
}

/// Whether `line` calls `print` (not `eprint`, whose output is not checked).
fn calls_print(line: &str) -> bool {
    line.match_indices("print(").any(|(i, _)| !line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

#[test]
fn every_csp_block_in_the_docs_prints_what_it_says() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files: Vec<_> = std::fs::read_dir(format!("{root}/docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.push(format!("{root}/README.md").into());
    files.sort();
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        for (line, src) in blocks(&text) {
            ran += 1;
            let want = match expected(&src) {
                Ok(w) => w,
                Err(e) => {
                    failures.push(format!("{name}:{line}: {e}"));
                    continue;
                }
            };
            let (code, out, err) = common::run_sh("docs", "", &src);
            let got: Vec<String> = out.lines().map(str::to_string).collect();
            if code != 0 || got != want {
                failures.push(format!(
                    "{name}:{line}: exit {code}\n  expected: {want:?}\n  got:      {got:?}\n  stderr: {err}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {ran} doc examples failed:\n{}", failures.len(), failures.join("\n"));
}

/// The docs lay out `select` as `csp fmt` does: its `case` and `default`
/// lines indented inside it.
#[test]
fn select_cases_in_the_docs_are_laid_out_as_csp_fmt_does() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(format!("{root}/docs")).unwrap().map(|e| e.unwrap().path()).collect();
    files.push(format!("{root}/README.md").into());
    let indents = |src: &str| -> Vec<usize> {
        src.lines()
            .filter(|l| l.trim_start().starts_with("case ") || l.trim_start().starts_with("default {"))
            .map(|l| l.len() - l.trim_start().len())
            .collect()
    };
    let mut checked = 0;
    for file in files.iter().filter(|p| p.extension().is_some_and(|x| x == "md")) {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, src) in blocks(&text).into_iter().filter(|(_, s)| s.contains("select {")) {
            let formatted =
                csp::fmt::format_source(&src).unwrap_or_else(|e| panic!("{}:{line}: {e:?}", file.display()));
            assert_eq!(indents(&src), indents(&formatted), "{}:{line}: not as `csp fmt` lays it out", file.display());
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} blocks with select");
}

/// The `` `EXPR` → `RESULT` `` examples of a markdown text's table rows: (line,
/// expression, result). Statements (`for ...`) are not expressions and are left out.
fn table_examples(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if !line.starts_with('|') {
            continue;
        }
        let line = line.replace("\\|", "|");
        let mut rest = line.as_str();
        while let Some(at) = rest.find("` → `") {
            let expr = rest[..at].rsplit_once('`').map_or("", |(_, e)| e);
            let after = &rest[at + "` → `".len()..];
            let Some(end) = after.find('`') else { break };
            if !expr.starts_with("for ") && !expr.is_empty() {
                out.push((i + 1, expr.to_string(), after[..end].to_string()));
            }
            rest = &after[end + 1..];
        }
    }
    out
}

#[test]
fn every_table_example_in_the_docs_gives_its_result() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut failures = Vec::new();
    let mut ran = 0;
    for entry in std::fs::read_dir(format!("{root}/docs")).unwrap() {
        let file = entry.unwrap().path();
        let text = std::fs::read_to_string(&file).unwrap();
        let examples = table_examples(&text);
        if examples.is_empty() {
            continue;
        }
        // One program per file: each example prints its display and, inside a
        // list, its quoted form; an error prints its message instead.
        let src: String = examples
            .iter()
            .map(|(_, e, _)| format!("try {{ let v = {e}\nprint(v)\nprint([v]) }} catch e {{ print(\"error: \" + e.message)\nprint() }}\n"))
            .collect();
        let (code, out, err) = common::run_sh("doctable", "", &src);
        let got: Vec<&str> = out.lines().collect();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if code != 0 || got.len() != 2 * examples.len() {
            failures.push(format!("{name}: exit {code}, {} lines for {} examples\n{err}", got.len(), examples.len()));
            continue;
        }
        for (k, (line, expr, want)) in examples.iter().enumerate() {
            ran += 1;
            let (shown, quoted) = (got[2 * k], got[2 * k + 1]);
            let quoted = quoted.strip_prefix('[').and_then(|q| q.strip_suffix(']')).unwrap_or(quoted);
            if shown != want && quoted != want {
                failures.push(format!("{name}:{line}: `{expr}` gives `{shown}`, the docs say `{want}`"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {ran} table examples failed:\n{}", failures.len(), failures.join("\n"));
    assert!(ran > 50, "only {ran} table examples found");
}

#[test]
fn blocks_and_expectations_are_found() {
    let md = "text\n```csp\nlet x = 2\nprint(x * 3)   // 6\n```\n```\nprint(1)\n```\n";
    let b = blocks(md);
    assert_eq!(b, vec![(2, "let x = 2\nprint(x * 3)   // 6\n".to_string())]);
    assert_eq!(expected(&b[0].1), Ok(vec!["6".to_string()]));
    assert!(expected("print(1)\n").is_err());
    assert_eq!(expected("print(\"a\\nb\")\n// a\n// b\nx()\n"), Ok(vec!["a".to_string(), "b".to_string()]));
    assert_eq!(expected("try { print(2) } catch e {}  // 2\n"), Ok(vec!["2".to_string()]));
    assert_eq!(expected("eprint(1)\nprint(3)  // 3\n"), Ok(vec!["3".to_string()]));
    let table = "| `a` | x | `f(1)` → `2`, `g(\"\\|\")` → `|` |\nnot `h()` → `3`\n| `for x in y {}` → `1` |\n";
    let want = vec![(1, "f(1)".to_string(), "2".to_string()), (1, "g(\"|\")".to_string(), "|".to_string())];
    assert_eq!(table_examples(table), want);
}
