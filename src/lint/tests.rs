//! The messages and spans of each rule; tests/lint.rs checks which lines warn
//! in whole files, and `csp check`'s output.

fn lint(src: &str) -> Vec<(String, String, usize)> {
    let program = crate::syntax::parse(src).expect("parses");
    super::lint(&program, src)
        .into_iter()
        .map(|d| (d.code.trim_start_matches(super::CODE_PREFIX).to_string(), d.message, d.span.start as usize))
        .collect()
}

#[test]
fn messages_name_the_variable_and_what_happened_to_it() {
    let src = "fn f() {\n    let a = 1\n    let b = 2\n    b = 3\n    return 0\n}\nprint(f())\n";
    let found = lint(src);
    assert_eq!(found[0], ("unused_variable".into(), "variable 'a' is never used".into(), src.find("a = 1").unwrap()));
    assert_eq!(found[1].1, "variable 'b' is assigned but never read");
}

#[test]
fn shadowing_names_the_line_of_the_hidden_variable() {
    let src = "fn f(x) {\n    if x {\n        let x = 2\n        return x\n    }\n}\nprint(f(1))\n";
    let found = lint(src);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, "'x' shadows the variable 'x' of line 1");
}

#[test]
fn unreachable_spans_the_rest_of_the_block() {
    let src = "fn f() {\n    return 1\n    print(2)\n    print(3)\n}\nprint(f())\n";
    let program = crate::syntax::parse(src).unwrap();
    let d = &super::lint(&program, src)[0];
    assert_eq!(&src[d.span.start as usize..d.span.end as usize], "print(2)\n    print(3)");
    assert_eq!(d.help.as_deref(), Some("the `return` before it always leaves the block"));
}

#[test]
fn constant_conditions_say_which_way_they_go() {
    let found = lint("if 2 > 1 { print(1) }\nif !true { print(2) }\n");
    assert!(found[0].1.contains("always true"), "{found:?}");
    assert!(found[1].1.contains("always false"), "{found:?}");
    assert!(lint("let x = 1\nif x > 1 && true { print(1) }\n").is_empty());
}

#[test]
fn relock_shows_the_mutex_as_written() {
    let found = lint("let s = {mu: mutex()}\nlock s.mu { lock s.mu { print(1) } }\n");
    assert_eq!(found[0].1, "`s.mu` is already locked by an enclosing `lock`");
}
