//! Unit tests of layouts and comment positions. Every case is also formatted
//! a second time, which must change nothing.

use super::format_source;

fn fmt(src: &str) -> String {
    let out = format_source(src).unwrap_or_else(|e| panic!("{src:?}: {}", e[0].message));
    let again = format_source(&out).unwrap();
    assert_eq!(again, out, "not idempotent on {src:?}");
    out
}

/// Each `(input, output)` pair.
fn check(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        assert_eq!(fmt(src), *want, "formatting {src:?}");
    }
}

#[test]
fn spaces_around_binary_operators_none_after_prefix_ones() {
    check(&[
        ("let x=1+2*3\n", "let x = 1 + 2 * 3\n"),
        ("x+=1\n", "x += 1\n"),
        ("print(-x,!y,~z, a-b, a - -b)\n", "print(-x, !y, ~z, a - b, a - -b)\n"),
        ("let y = a&&b||c\n", "let y = a && b || c\n"),
        ("if x not in xs&&y is not nil {}\n", "if x not in xs && y is not nil {}\n"),
        ("let c=a?b:c\n", "let c = a ? b : c\n"),
        ("return -1\n", "return -1\n"),
        ("let a = f()-1\n", "let a = f() - 1\n"),
        ("let b = x[0] -1\n", "let b = x[0] - 1\n"),
        ("let p = -2**-x**2\n", "let p = -2 ** -x ** 2\n"),
        ("n**=2\n", "n **= 2\n"),
    ]);
}

#[test]
fn channel_arrows_send_and_receive() {
    check(&[
        ("ch<-1\n", "ch <- 1\n"),
        ("let v = <- ch\n", "let v = <-ch\n"),
        ("ch <- <-other\n", "ch <- <-other\n"),
        ("x = 1\n<- done\n", "x = 1\n<-done\n"),
        ("select {\ncase v = <- a { }\ncase b<-1 {}\n}\n", "select {\n    case v = <-a {}\n    case b <- 1 {}\n}\n"),
    ]);
}

#[test]
fn calls_lists_maps_ranges_and_functions() {
    check(&[
        ("f( a ,b )\n", "f(a, b)\n"),
        ("let xs = [ 1,2 , 3 ]\n", "let xs = [1, 2, 3]\n"),
        ("let m = { a : 1, \"b\":[2] }\n", "let m = {a: 1, \"b\": [2]}\n"),
        ("let e = {}\nlet l = [ ]\n", "let e = {}\nlet l = []\n"),
        ("for i in 0 .. n {}\n", "for i in 0..n {}\n"),
        ("let r = 1 ..= 3\n", "let r = 1..=3\n"),
        ("fn f(a, ... rest) { return rest }\n", "fn f(a, ...rest) { return rest }\n"),
        ("let g = fn (x)=>x*2\n", "let g = fn(x) => x * 2\n"),
        ("let v = m . k . f( 1 )[ 0 ]\n", "let v = m.k.f(1)[0]\n"),
        ("let s = [x for x in xs if x>1]\n", "let s = [x for x in xs if x > 1]\n"),
        ("let k = {[1+1]: 2, (a): 3}\n", "let k = {[1 + 1]: 2, (a): 3}\n"),
        ("let t = go f(x)\nlet w = wait t\n", "let t = go f(x)\nlet w = wait t\n"),
        ("let n = fn() { return 1 }()\n", "let n = fn() { return 1 }()\n"),
        ("let z = a ? {k: 1} : {}\n", "let z = a ? {k: 1} : {}\n"),
        ("let q = {a: x ? 1 : 2, b: 3}\n", "let q = {a: x ? 1 : 2, b: 3}\n"),
    ]);
}

#[test]
fn blocks_indent_by_four_and_one_line_blocks_stay() {
    check(&[
        (
            "fn f(x) {\nif x {\nreturn 1\n} else {\n  return 2\n      }\n}\n",
            "fn f(x) {\n    if x {\n        return 1\n    } else {\n        return 2\n    }\n}\n",
        ),
        ("if x {   return 1   }\n", "if x { return 1 }\n"),
        ("try { a() } catch e { }\n", "try { a() } catch e {}\n"),
        ("go {\n\tsleep(1)\n}\n", "go {\n    sleep(1)\n}\n"),
        ("let m = {\n  a: 1,\n  b: {\n  c: 2\n  }\n}\n", "let m = {\n    a: 1,\n    b: {\n        c: 2\n    }\n}\n"),
    ]);
}

#[test]
fn continuation_lines_get_one_more_level() {
    check(&[
        ("let t = 1 +\n2 +\n        3\n", "let t = 1 +\n    2 +\n    3\n"),
        ("let r = xs\n.map(f)\n  .filter(g)\n", "let r = xs\n    .map(f)\n    .filter(g)\n"),
        ("f(a,\nb)\n", "f(a,\n    b)\n"),
        ("f(\na,\nb,\n)\n", "f(\n    a,\n    b,\n)\n"),
        ("f(a +\nb)\n", "f(a +\n    b)\n"),
        ("f(\na +\nb)\n", "f(\n    a +\n        b)\n"),
        ("for f in [a,\n          b] {\n    f()\n}\n", "for f in [a,\n    b] {\n    f()\n}\n"),
        ("g(fn() {\nx()\n}, 2)\n", "g(fn() {\n    x()\n}, 2)\n"),
        ("let c = ok ?\n1 :\n2\n", "let c = ok ?\n    1 :\n    2\n"),
    ]);
}

#[test]
fn semicolons_between_statements_become_line_breaks() {
    check(&[
        ("let a = 1; let b = 2\n", "let a = 1\nlet b = 2\n"),
        ("print(a);\n", "print(a)\n"),
        ("fn f() { a(); return b }\n", "fn f() { a(); return b }\n"),
        ("fn f() { a(); }\n", "fn f() { a() }\n"),
        ("fn f() {\n  a(); b()\n}\n", "fn f() {\n    a()\n    b()\n}\n"),
        ("x = 1 ; // why\n", "x = 1 // why\n"),
        ("let m = {a: 1;}\n", "let m = {a: 1}\n"),
    ]);
}

#[test]
fn blank_lines_collapse_and_the_file_ends_with_one_newline() {
    check(&[
        ("\n\n\na()\n\n\n\nb()\n\n\n", "a()\n\nb()\n"),
        ("fn f() {\n\n  a()\n\n}\n", "fn f() {\n    a()\n}\n"),
        ("a()   \nb()", "a()\nb()\n"),
        ("a()\r\nb()\r\n", "a()\nb()\n"),
        ("", ""),
        ("\n\n", ""),
        ("#!/usr/bin/env csp\n\nprint( 1 )\n", "#!/usr/bin/env csp\n\nprint(1)\n"),
    ]);
}

#[test]
fn comments_are_kept_where_they_are() {
    check(&[
        // Own-line comments take the indentation of the code they precede.
        ("fn f() {\n// first\n  a()\n      // last\n}\n", "fn f() {\n    // first\n    a()\n    // last\n}\n"),
        ("// only a comment", "// only a comment\n"),
        ("a() // trailing\n", "a() // trailing\n"),
        ("if x { // why\n  a()\n}\n", "if x { // why\n    a()\n}\n"),
        ("f(a, // one\n  b) // two\n", "f(a,   // one\n    b) // two\n"),
        ("let xs = [\n  1, // one\n  // between\n  2,\n]\n", "let xs = [\n    1, // one\n    // between\n    2,\n]\n"),
        ("let r = xs\n  // why\n  .map(f)\n", "let r = xs\n    // why\n    .map(f)\n"),
        ("f(/* none */)\nlet a = 1 /* one */ + 2\n", "f(/* none */)\nlet a = 1 /* one */ + 2\n"),
        ("/* a\n   b */\nc()\n", "/* a\n   b */\nc()\n"),
        ("fn f() {\n  // nothing yet\n}\n", "fn f() {\n    // nothing yet\n}\n"),
        ("a()\n// expect: x  \n", "a()\n// expect: x  \n"),
        ("a() //no space\n", "a() //no space\n"),
    ]);
}

#[test]
fn trailing_comments_in_a_row_share_a_column() {
    check(&[
        ("a() // 1\nbbbb() // 2\n", "a()    // 1\nbbbb() // 2\n"),
        ("a()          // 1\nb()\nccc() // 3\n", "a() // 1\nb()\nccc() // 3\n"),
        ("if x {   // 1\n  yy()    // 2\n}\n", "if x {   // 1\n    yy() // 2\n}\n"),
        ("a() // 1\n\nbbbb() // 2\n", "a() // 1\n\nbbbb() // 2\n"),
    ]);
}

#[test]
fn strings_are_kept_as_written() {
    check(&[
        ("print( \"a  ${ x+1 }\\n\" , \"\\u{41}\")\n", "print(\"a  ${ x+1 }\\n\", \"\\u{41}\")\n"),
        ("let s = \"two\n   lines  \"\nprint(s)\n", "let s = \"two\n   lines  \"\nprint(s)\n"),
        ("let u = \"// not a comment\" // a comment\n", "let u = \"// not a comment\" // a comment\n"),
        ("let n = 0x_FF + 1_000 + 1.5e3\n", "let n = 0x_FF + 1_000 + 1.5e3\n"),
        ("let m = -9223372036854775808\n", "let m = -9223372036854775808\n"),
    ]);
}

#[test]
fn syntax_errors_are_reported_as_by_check() {
    let errs = format_source("let x = (1\nprint(x)\n").unwrap_err();
    assert_eq!(errs[0].code, "csp::syntax");
    let check = crate::syntax::parse("let x = (1\nprint(x)\n").unwrap_err();
    assert_eq!(errs[0].message, check[0].message);
}

#[test]
fn a_marked_file_is_left_as_written() {
    let src = "// fmt: ignore-file\nlet x=1 ;   let y = (\n";
    assert_eq!(format_source(src).unwrap(), src);
    let src = "let   a = 1\n  // fmt: ignore-file\n";
    assert_eq!(format_source(src).unwrap(), src);
}

#[test]
fn a_respaced_file_formats_back() {
    let src = "#!/usr/bin/env csp\nfn f(a, b) {\n    return a + b // sum\n}\n\nprint(f(1, -2))\n";
    let respaced = super::scramble(src);
    assert_ne!(respaced, src);
    assert_eq!(fmt(&respaced), src);
}

#[test]
fn more_comment_positions() {
    check(&[
        ("if x { a() } /* c */ else { b() }\n", "if x { a() } /* c */ else { b() }\n"),
        ("a()\n\n\n// the end", "a()\n\n// the end\n"),
        ("select {\ncase <-c {}\n// no default\n}\n", "select {\n    case <-c {}\n    // no default\n}\n"),
        ("let m = {\n  a: 1, // one\n  bb: 2 // two\n}\n", "let m = {\n    a: 1, // one\n    bb: 2 // two\n}\n"),
        ("f(\n  // first\n  a)\n", "f(\n    // first\n    a)\n"),
        ("let t = a +\n// why\nb\n", "let t = a +\n    // why\n    b\n"),
    ]);
}

#[test]
fn the_output_check_catches_changed_tokens_and_lost_comments() {
    assert!(super::same_program("let x = 1 // c\n", "let x = 1 // c\n").is_ok());
    assert!(super::same_program("fn f() { a(); }\n", "fn f() { a() }\n").is_ok());
    assert!(super::same_program("let x = 1\n", "let x = 2\n").is_err());
    assert!(super::same_program("let x = 1 // c\n", "let x = 1\n").is_err());
    assert!(super::same_program("a\n-b\n", "a - b\n").is_err());
}
