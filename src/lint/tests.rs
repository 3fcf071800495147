//! Each rule on small sources; tests/lint.rs runs `csp check` on whole files.

fn codes(src: &str) -> Vec<(String, usize)> {
    let program = crate::syntax::parse(src).expect("parses");
    super::lint(&program, src)
        .into_iter()
        .map(|d| (d.code.trim_start_matches(super::CODE_PREFIX).to_string(), super::line_of(src, d.span.start)))
        .collect()
}

#[test]
fn placeholder() {
    assert!(codes("let x = 1\nprint(x)\n").is_empty());
}
