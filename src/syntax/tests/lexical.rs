//! Tokens: literals, strings and interpolation, newlines and semicolons.

use super::*;

// ---------------------------------------------------------------- literals

#[test]
fn int_literals() {
    assert_eq!(p("123"), "123");
    assert_eq!(p("1_000_000"), "1000000");
    assert_eq!(p("0xff"), "255");
    assert_eq!(p("0xFF_FF"), "65535");
    assert_eq!(p("0b1010"), "10");
    assert_eq!(p("9223372036854775807"), "9223372036854775807");
    assert_eq!(p("-9223372036854775807"), "(neg 9223372036854775807)");
}

#[test]
fn float_literals() {
    assert_eq!(p("1.5"), "1.5");
    assert_eq!(p("1e9"), "1000000000.0");
    assert_eq!(p("2.5e-3"), "0.0025");
    assert_eq!(p("1E+2"), "100.0");
    assert_eq!(p("1_000.5"), "1000.5");
}

#[test]
fn int_too_large() {
    let src = format!("let x = {}", "9".repeat(100));
    let e = err1(&src);
    assert_eq!(e.message, "integer literal too large");
    assert_eq!(e.span, Span::new(8, 108));
    assert!(!e.at_eof);
    assert_eq!(err1("9223372036854775808").message, "integer literal too large");
    assert_eq!(err1("0xffffffffffffffffff").message, "integer literal too large");
}

#[test]
fn int_min_literal() {
    assert_eq!(err1("a - 9223372036854775808").message, "integer literal too large");
    assert_eq!(p("x = -9223372036854775808"), "x = -9223372036854775808");
    assert_eq!(p("x = -9_223_372_036_854_775_808"), "x = -9223372036854775808");
    assert_eq!(p("return -9223372036854775808"), "return -9223372036854775808");
    assert_eq!(p("f(1, -9223372036854775808)"), "(call f 1 -9223372036854775808)");
}

#[test]
fn float_out_of_range() {
    let e = err1("x = 1e400");
    assert_eq!(e.message, "float literal out of range");
    assert_eq!(e.span, Span::new(4, 9));
}

#[test]
fn bad_numbers() {
    assert!(err1("12abc").message.contains("invalid"));
    assert!(err1("0x").message.contains("invalid"));
    assert!(err1("0b102").message.contains("invalid"));
    assert!(err1("1.5e").message.contains("invalid"));
}

#[test]
fn ranges_are_not_floats() {
    assert_eq!(p("1..5"), "(.. 1 5)");
    assert_eq!(p("0..=n"), "(..= 0 n)");
    assert_eq!(p("a..b+1"), "(.. a (+ b 1))");
    assert_eq!(p("1.5..2.5"), "(.. 1.5 2.5)");
}

#[test]
fn range_is_non_associative() {
    errs("1..2..3");
}

#[test]
fn keywords_and_names() {
    assert_eq!(p("nil; true; false; x_1; _y; lettuce"), "nil; true; false; x_1; _y; lettuce");
    assert_eq!(p("chan()"), "(call chan)");
    assert_eq!(p("let c = chan(10)"), "let c = (call chan 10)");
}

#[test]
fn comments() {
    assert_eq!(p("a // comment\nb /* block */\nc2 = 1 /* multi\nline */ d"), "a; b; c2 = 1; d");
    errs("b /* block */ c2 = 1");
    assert_eq!(p("/* only */"), "");
    assert_eq!(p("x = 1 + /* inline */ 2"), "x = (+ 1 2)");
    let e = err1("a /* never closed");
    assert!(e.message.contains("unterminated"));
    assert!(e.at_eof);
}

// ---------------------------------------------------------------- strings

#[test]
fn plain_strings() {
    assert_eq!(p(r#""abc""#), r#""abc""#);
    assert_eq!(p(r#""a\n\t\r\\\"\0\$b""#), r#""a\n\t\r\\\"\0$b""#);
    assert_eq!(p(r#""\u{1F600}\u{41}""#), "\"😀A\"");
    assert_eq!(p(r#""héllo wörld""#), "\"héllo wörld\"");
    assert_eq!(p(r#""price: $5, {x}""#), r#""price: $5, {x}""#);
    assert_eq!(p(r#""""#), r#""""#);
}

#[test]
fn string_errors() {
    let e = err1(r#"x = "a\qb""#);
    assert!(e.message.contains("unknown escape"), "{e:?}");
    assert_eq!(e.span, Span::new(6, 8));
    assert!(err1(r#""\u{110000}""#).message.contains("unicode"));
    assert!(err1(r#""\u{D800}""#).message.contains("unicode"));
    assert!(err1(r#""\u0041""#).message.contains("unicode"));
    let e = err1("let s = \"abc");
    assert!(e.message.contains("unterminated string"));
    assert_eq!(e.span, Span::new(8, 12));
    assert!(e.at_eof);
}

#[test]
fn interpolation() {
    assert_eq!(p(r#""x = ${x}""#), r#"(interp "x = " ${x})"#);
    assert_eq!(p(r#""${a}${b}""#), "(interp ${a} ${b})");
    assert_eq!(p(r#""${a + 1} and ${f(b)}!""#), r#"(interp ${(+ a 1)} " and " ${(call f b)} "!")"#);
    assert_eq!(p(r#""a ${f("b ${x}")}""#), r#"(interp "a " ${(call f (interp "b " ${x}))})"#);
    assert_eq!(p(r#""${ {"a":1}["a"] }""#), r#"(interp ${(index {"a": 1} "a")})"#);
    assert_eq!(p(r#""${ "${ "${x}" }" }""#), "(interp ${(interp ${(interp ${x})})})");
    assert_eq!(p("\"${\n a +\n b\n}\""), "(interp ${(+ a b)})");
    assert_eq!(p(r#""cost: \${x}""#), r#""cost: ${x}""#);
    assert_eq!(p(r#""${fn() { return 1 }()}""#), "(interp ${(call (fn () {return 1}))})");
}

#[test]
fn interpolation_spans() {
    let prog = ok(r#"let s = "a ${xy} b""#);
    let StmtKind::Let { value, .. } = &prog.stmts[0].kind else { panic!() };
    assert_eq!(value.span, Span::new(8, 19));
    let ExprKind::Interp(parts) = &value.kind else { panic!() };
    let InterpPart::Expr(e) = &parts[1] else { panic!() };
    assert_eq!(e.span, Span::new(13, 15));
}

#[test]
fn interpolation_errors() {
    assert!(err1(r#""${}""#).message.starts_with("unexpected"));
    let e = err1(r#""abc ${x"#);
    assert!(e.at_eof, "{e:?}");
    let e = err1(r#""abc ${x} def"#);
    assert!(e.at_eof, "{e:?}");
    assert!(e.message.contains("unterminated"));
    assert!(errs("x = $").iter().any(|e| e.message.contains("'$'")));
}

// ---------------------------------------------------------------- newlines

#[test]
fn newline_ends_statements() {
    assert_eq!(p("a\nb\n1\n\"s\"\ntrue\nnil\nf()\nxs[0]\n"), r#"a; b; 1; "s"; true; nil; (call f); (index xs 0)"#);
    assert_eq!(p("fn f() {\n  return\n}"), "(fn f () {return})");
    assert_eq!(p("while true {\n  break\n  continue\n}"), "while true {break; continue}");
}

#[test]
fn newline_continues_after_operator() {
    assert_eq!(p("x = 1 +\n  2"), "x = (+ 1 2)");
    assert_eq!(p("x = a &&\n b ||\n c"), "x = (|| (&& a b) c)");
    assert_eq!(p("let xs = [\n  1,\n  2,\n]"), "let xs = [1 2]");
    assert_eq!(p("f(\n a,\n b)"), "(call f a b)");
    assert_eq!(p("x = a.\n b"), "x = (. a b)");
}

#[test]
fn a_line_starting_with_dot_continues_the_chain() {
    assert_eq!(p("xs\n  .map(f) // c\n  .filter(g)\ny"), "(method (method xs map f) filter g); y");
    assert_eq!(p("a\n/* c */\n.b"), "(. a b)");
}

#[test]
fn newlines_inside_parens_and_brackets_are_ignored() {
    assert_eq!(p("let xs = [\n  1,\n  2\n]"), "let xs = [1 2]");
    assert_eq!(p("f(\n a,\n b\n)"), "(call f a b)");
    assert_eq!(p("x = (a\n + b)"), "x = (+ a b)");
    // ...but a block inside parentheses has statements again.
    assert_eq!(p("f(fn() {\n a\n b\n})"), "(call f (fn () {a; b}))");
}

#[test]
fn map_literal_across_lines() {
    assert_eq!(p("let m = {\n  \"a\": 1,\n  b: 2\n}"), r#"let m = {"a": 1, "b": 2}"#);
    assert_eq!(p("let m = {\n  a: 1,\n}"), r#"let m = {"a": 1}"#);
    assert_eq!(p("let m = {\n  a: {\n    b: 1\n  }\n}"), r#"let m = {"a": {"b": 1}}"#);
}

#[test]
fn semicolons() {
    assert_eq!(p("a; b;; c;"), "a; b; c");
    assert_eq!(p(";;;"), "");
    assert_eq!(p(""), "");
    assert_eq!(p("if x { a }"), "if x {a}");
    assert_eq!(p("if x { a; }"), "if x {a}");
    assert_eq!(p("fn f() { return 1 }"), "(fn f () {return 1})");
    assert_eq!(p("{ ; a ; ; b }"), "{a; b}");
}

#[test]
fn else_must_follow_brace_on_same_line() {
    assert_eq!(p("if c {\n a\n} else {\n b\n}"), "if c {a} else {b}");
    let e = err1("if c {\n}\nelse {}");
    assert!(e.message.contains("'else'"), "{e:?}");
    assert!(e.help.is_some());
}
