//! Grammar: precedence, expressions, statements, errors and recovery.

use super::*;

// ---------------------------------------------------------------- precedence

#[test]
fn precedence() {
    assert_eq!(p("1 + 2 * 3"), "(+ 1 (* 2 3))");
    assert_eq!(p("(1 + 2) * 3"), "(* (+ 1 2) 3)");
    assert_eq!(p("1 - 2 - 3"), "(- (- 1 2) 3)");
    assert_eq!(p("a / b % c"), "(% (/ a b) c)");
    assert_eq!(p("-a.b"), "(neg (. a b))");
    assert_eq!(p("-a * b"), "(* (neg a) b)");
    assert_eq!(p("!a && b || c && d"), "(|| (&& (! a) b) (&& c d))");
    assert_eq!(p("a < b == c"), "(== (< a b) c)");
    assert_eq!(p("a + 1 < b * 2"), "(< (+ a 1) (* b 2))");
    assert_eq!(p("a..b == c"), "(== (.. a b) c)");
    assert_eq!(p("<-ch + 1"), "(+ (<- ch) 1)");
    assert_eq!(p("x = <-<-ch"), "x = (<- (<- ch))");
    assert_eq!(p("wait t + 1"), "(+ (wait t) 1)");
    assert_eq!(p("x = wait [t1, t2]"), "x = (wait [t1 t2])");
    assert_eq!(p("x = yield a + 1"), "x = (yield (+ a 1))");
    assert_eq!(p("x = f(yield)"), "x = (call f (yield))");
    assert_eq!(p("yield"), "(yield)");
    assert_eq!(p("a <= b; a >= b; a != b; a > b"), "(<= a b); (>= a b); (!= a b); (> a b)");
    assert_eq!(p("a + 1 in xs && b not in ys"), "(&& (in (+ a 1) xs) (not in b ys))");
    assert_eq!(p("a is b || a is not c"), "(|| (is a b) (is not a c))");
    assert_eq!(p("-2 ** 2"), "(neg (** 2 2))");
    assert_eq!(p("a ** b ** c"), "(** a (** b c))");
    assert_eq!(p("2 ** -x * 3"), "(* (** 2 (neg x)) 3)");
    assert_eq!(p("a.b ** c[0] + 1"), "(+ (** (. a b) (index c 0)) 1)");
    assert_eq!(p("x **= 2"), "x **= 2");
    assert_eq!(p("a in b == c"), "(== (in a b) c)");
    assert_eq!(p("a | b ^ c & d << e + f"), "(| a (^ b (& c (<< d (+ e f)))))");
    assert_eq!(p("a & b == c | d"), "(== (& a b) (| c d))");
    assert_eq!(p("a >> 1 >> 2"), "(>> (>> a 1) 2)");
    assert_eq!(p("~a + -b"), "(+ (~ a) (neg b))");
    assert_eq!(p("x = a || b ? c : d ? e : f"), "x = (? (|| a b) c (? d e f))");
    assert_eq!(p("x = a ? b ? c : d : e"), "x = (? a (? b c d) e)");
    assert_eq!(p("x = {k: a ? b : c}"), r#"x = {"k": (? a b c)}"#);
    assert_eq!(p("f(a ? b : c, d)"), "(call f (? a b c) d)");
    errs("x = a ? b");
    assert_eq!(p("for x in a in b { x }"), "for x in (in a b) {x}");
    errs("let x = not a");
}

#[test]
fn postfix() {
    assert_eq!(p("f(a, b)"), "(call f a b)");
    assert_eq!(p("f(a, b,)"), "(call f a b)");
    assert_eq!(p("f()()"), "(call (call f))");
    assert_eq!(p("a[i][j]"), "(index (index a i) j)");
    assert_eq!(p("a.b.c"), "(. (. a b) c)");
    assert_eq!(p("a.b(1).c(2)"), "(method (method a b 1) c 2)");
    assert_eq!(p("(a.b)(1)"), "(call (. a b) 1)");
    assert_eq!(p("a.b(1)(2)"), "(call (method a b 1) 2)");
    assert_eq!(p("a[0].f()"), "(method (index a 0) f)");
    assert_eq!(p("f(x).y[1]"), "(index (. (call f x) y) 1)");
    assert_eq!(p("\"abc\".len()"), "(method \"abc\" len)");
}

#[test]
fn collections() {
    assert_eq!(p("x = []"), "x = []");
    assert_eq!(p("x = [1, \"a\", [2]]"), "x = [1 \"a\" [2]]");
    assert_eq!(p("x = {}"), "x = {}");
    assert_eq!(
        p(r#"x = {"a": 1, b: 2, [k]: v, (k2): 3, 4: 5, true: 6, nil: 7}"#),
        r#"x = {"a": 1, "b": 2, k: v, k2: 3, 4: 5, true: 6, nil: 7}"#
    );
    assert_eq!(p("x = [e for x in it]"), "x = [e for x in it]");
    assert_eq!(p("x = [x * 2 for x in 0..10 if x % 2 == 0]"), "x = [(* x 2) for x in (.. 0 10) if (== (% x 2) 0)]");
    assert_eq!(p("f({a: 1})"), r#"(call f {"a": 1})"#);
    assert_eq!(p("x = {chan: 1, select: 2, go: 3, true: 4}"), r#"x = {"chan": 1, "select": 2, "go": 3, true: 4}"#);
    assert_eq!(p("m.select"), "(. m select)");
    assert_eq!(p("m.go = 1"), "(. m go) = 1");
    assert_eq!(p("co.throw(e).if"), "(. (method co throw e) if)");
    assert_eq!(p("x = m.go\ny = 1"), "x = (. m go); y = 1");
    errs("let go = 1");
    assert_eq!(p("x = [{a: 1}]"), r#"x = [{"a": 1}]"#);
}

#[test]
fn functions() {
    assert_eq!(p("fn f(a, b = 2, ...rest) { return a }"), "(fn f (a b=2 ...rest) {return a})");
    assert_eq!(p("fn f(...r) {}"), "(fn f (...r) {})");
    assert_eq!(p("fn f(a,) {}"), "(fn f (a) {})");
    assert_eq!(p("let f = fn(x) { return x }"), "let f = (fn (x) {return x})");
    assert_eq!(p("let f = fn(x) => x + 1"), "let f = (fn (x) {return (+ x 1)})");
    assert_eq!(p("let f = fn(x) => fn(y) => x + y"), "let f = (fn (x) {return (fn (y) {return (+ x y)})})");
    assert_eq!(p("xs.map(fn(x) => x * 2)"), "(method xs map (fn (x) {return (* x 2)}))");
    assert_eq!(p("let f = fn() => {a: 1}"), r#"let f = (fn () {return {"a": 1}})"#);
    assert_eq!(p("fn(x) { return x }(1)"), "(call (fn (x) {return x}) 1)");
}

#[test]
fn lambda_span_and_desugaring() {
    let prog = ok("let f = fn(x) => x + 1");
    let StmtKind::Let { value, .. } = &prog.stmts[0].kind else { panic!() };
    assert_eq!(value.span, Span::new(8, 22));
    let ExprKind::Func(f) = &value.kind else { panic!() };
    assert!(f.name.is_none());
    assert_eq!(f.body.len(), 1);
    assert_eq!(f.body[0].span, Span::new(17, 22));
    assert!(matches!(f.body[0].kind, StmtKind::Return(Some(_))));
}

// ---------------------------------------------------------------- statements

#[test]
fn let_and_assign() {
    assert_eq!(p("let x = 1"), "let x = 1");
    assert_eq!(p("let a, b = e"), "let a,b = e");
    assert_eq!(p("let v, ok = <-ch"), "let v,ok = (<- ch)");
    assert_eq!(p("x = e"), "x = e");
    assert_eq!(p("xs[i] = e"), "(index xs i) = e");
    assert_eq!(p("m.k = e"), "(. m k) = e");
    assert_eq!(p("x += 1; x -= 1; x *= 2; x /= 2; x %= 3"), "x += 1; x -= 1; x *= 2; x /= 2; x %= 3");
    assert_eq!(p("m.k[0] += 1"), "(index (. m k) 0) += 1");
    assert_eq!(p("x = {a: 1}"), r#"x = {"a": 1}"#);
}

#[test]
fn control_flow() {
    assert_eq!(p("if c { a } else if d { b } else { e }"), "if c {a} else {if d {b} else {e}}");
    assert_eq!(p("if c {} else {}"), "if c {} else {}");
    assert_eq!(p("while c { x += 1 }"), "while c {x += 1}");
    assert_eq!(p("for x in it { print(x) }"), "for x in it {(call print x)}");
    assert_eq!(p("for i, x in it { x }"), "for i,x in it {x}");
    assert_eq!(p("let a, b, c = xs"), "let a,b,c = xs");
    errs("for i, x, y in it { x }");
    assert_eq!(p("for i in 1..=3 { go worker(i, jobs) }"), "for i in (..= 1 3) {(go (call worker i jobs))}");
    assert_eq!(p("return"), "return");
    assert_eq!(p("return 1, 2"[..8].trim()), "return 1");
    assert_eq!(p("throw error(\"x\")"), "throw (call error \"x\")");
    assert_eq!(p("{ let x = 1 }"), "{let x = 1}");
}

#[test]
fn if_heads_take_the_brace_as_block() {
    assert_eq!(p("if x == y { a }"), "if (== x y) {a}");
    assert_eq!(p("for k in m { a }"), "for k in m {a}");
    assert_eq!(p("while f(a) { b }"), "while (call f a) {b}");
    assert_eq!(p("if x == ({\"a\": 1}) { a }"), r#"if (== x {"a": 1}) {a}"#);
    assert_eq!(p("lock m { a }"), "lock m {a}");
    assert_eq!(p("if a.b(c) { d }"), "if (method a b c) {d}");
    assert_eq!(p("if xs[0] { d }"), "if (index xs 0) {d}");
    assert_eq!(p("if !done { d }"), "if (! done) {d}");
    assert_eq!(p("while yield { a }"), "while (yield) {a}");
}

#[test]
fn statement_level_brace_is_a_block() {
    assert_eq!(p("{}"), "{}");
    errs("{ a: 1 }");
    // A map literal as an expression statement must be parenthesised.
    assert_eq!(p("({a: 1})"), r#"{"a": 1}"#);
}

#[test]
fn closing_brace_of_a_block_statement_ends_it() {
    assert_eq!(
        p("fn fib(n) { if n < 2 { return n } return fib(n - 1) }"),
        "(fn fib (n) {if (< n 2) {return n}; return (call fib (- n 1))})"
    );
    assert_eq!(
        p("go fn() { for v in xs { ch <- v } close(ch) }()"),
        "(go (call (fn () {for v in xs {ch <- v}; (call close ch)})))"
    );
    assert_eq!(p("if a { b } else { c } d"), "if a {b} else {c}; d");
    assert_eq!(p("while a { b } c"), "while a {b}; c");
    assert_eq!(p("try { a } catch e { b } finally { c } d"), "try {a} catch e {b} finally {c}; d");
    assert_eq!(p("lock m { a } wait { b } c"), "lock m {a}; wait {b}; c");
    assert_eq!(p("select { default { a } } b"), "select {default {a}}; b");
    assert_eq!(p("go { a } b"), "(go {a}); b");
    assert_eq!(p("fn f() { a } (b)"), "(fn f () {a}); b");
    assert_eq!(p("{ a } b"), "{a}; b");
    assert_eq!(p("if a { b } ; c"), "if a {b}; c");
    // The `}` of an expression does not end the statement.
    assert_eq!(p("let f = fn() { return 1 }(x)"), "let f = (call (fn () {return 1}) x)");
    assert_eq!(p("let t = go { a } + 1"), "let t = (+ (go {a}) 1)");
    errs("let m = {a: 1} b");
    errs("x = 1 y = 2");
}

#[test]
fn try_catch() {
    assert_eq!(p("try { a } catch e { b } finally { c }"), "try {a} catch e {b} finally {c}");
    assert_eq!(p("try { a } catch { b }"), "try {a} catch {b}");
    assert_eq!(p("try { a } finally { c }"), "try {a} finally {c}");
    assert_eq!(p("try {\n a\n} catch e {\n b\n}"), "try {a} catch e {b}");
    errs("try { a }");
}

#[test]
fn concurrency() {
    assert_eq!(p("ch <- v"), "ch <- v");
    assert_eq!(p("results <- \"w ${id}\""), "results <- (interp \"w \" ${id})");
    assert_eq!(p("go f(x)"), "(go (call f x))");
    assert_eq!(p("let t = go f(x)"), "let t = (go (call f x))");
    assert_eq!(p("go { a }"), "(go {a})");
    assert_eq!(p("go fn() { a }()"), "(go (call (fn () {a})))");
    assert_eq!(p("wait { go f() }"), "wait {(go (call f))}");
    assert_eq!(p("wait t"), "(wait t)");
    assert_eq!(p("let r = wait t"), "let r = (wait t)");
    assert_eq!(p("lock m {\n a\n}"), "lock m {a}");
    assert_eq!(
        p("select {\n case v = <-a {\n x\n }\n case v, ok = <-b { y }\n case c <- x { z }\n case <-after(50) { w }\n default { d }\n}"),
        "select {case [v] <- a {x}; case [v,ok] <- b {y}; case c <- x {z}; case [] <- (call after 50) {w}; default {d}}"
    );
    assert_eq!(p("select {}"), "select {}");
    assert_eq!(p("select { case <-t.done() { } }"), "select {case [] <- (method t done) {}}");
}

#[test]
fn imports() {
    assert_eq!(p("import \"std/sync\""), "import \"std/sync\"");
    assert_eq!(p("import \"./x.csp\" as x"), "import \"./x.csp\" as x");
}

#[test]
fn language_md_example() {
    let src = r#"
let results = chan(10)
fn worker(id, jobs) {
    for j in jobs {
        sleep(1)                  // blocks this fiber only
        results <- "worker ${id} did ${j}"
    }
}
let jobs = chan()
wait {
    for i in 1..=3 { go worker(i, jobs) }
    for j in 1..=6 { jobs <- j }
    close(jobs)
}
close(results)
let n = 0
for r in results { n += 1 }
print(n)                          // 6
"#;
    assert_eq!(ok(src).stmts.len(), 8);
}

// ---------------------------------------------------------------- spans

#[test]
fn spans() {
    let prog = ok("let abc = f(x) + 1\nfoo.bar = 2");
    let s0 = &prog.stmts[0];
    assert_eq!(s0.span, Span::new(0, 18));
    let StmtKind::Let { names, value } = &s0.kind else { panic!() };
    assert_eq!(names[0].span, Span::new(4, 7));
    assert_eq!(value.span, Span::new(10, 18));
    let ExprKind::Binary(_, l, r) = &value.kind else { panic!() };
    assert_eq!(l.span, Span::new(10, 14));
    assert_eq!(r.span, Span::new(17, 18));
    let s1 = &prog.stmts[1];
    assert_eq!(s1.span, Span::new(19, 30));
    let StmtKind::Assign { target, .. } = &s1.kind else { panic!() };
    let ExprKind::Field(o, f) = &target.kind else { panic!() };
    assert_eq!(o.span, Span::new(19, 22));
    assert_eq!(f.span, Span::new(23, 26));

    let prog = ok("fn f(a) {\n}");
    let StmtKind::Fn(f) = &prog.stmts[0].kind else { panic!() };
    assert_eq!(f.span, Span::new(0, 11));
    assert_eq!(f.params[0].name.span, Span::new(5, 6));
}

// ---------------------------------------------------------------- errors

#[test]
fn error_messages_are_readable() {
    let e = err1("x = )");
    assert!(e.message.starts_with("unexpected ')', expected an expression"), "{}", e.message);
    assert!(!e.message.contains('"'), "{}", e.message);
    let e = err1("let = 3");
    assert_eq!(e.message, "unexpected '=', expected identifier");
    let e = err1("if x\n{ }");
    assert!(e.message.starts_with("unexpected newline"), "{}", e.message);
    let e = err1("f(a b)");
    assert!(e.message.starts_with("unexpected identifier 'b'"), "{}", e.message);
    assert!(e.message.contains("')'"), "{}", e.message);
    let e = err1("x = 1 }");
    assert!(e.message.starts_with("unexpected '}'"), "{}", e.message);
    assert_eq!(e.span, Span::new(6, 7));
    let e = errs("let x = @");
    assert!(e.iter().any(|e| e.message == "unexpected character '@'" && e.span == Span::new(8, 9)), "{e:?}");
    let e = errs("let x = 1 # 2");
    assert!(e.iter().any(|e| e.message == "unexpected character '#'"), "{e:?}");
}

#[test]
fn expected_lists_are_summarised() {
    assert_eq!(err1("f(a b)").message, "unexpected identifier 'b', expected one of: ')', ',', an operator");
    assert_eq!(err1("let x = 1 2").message, "unexpected number '2', expected one of: end of statement, an operator");
    assert_eq!(err1("x +").message, "unexpected end of input, expected an expression");
    let e = err1("{a: 1}");
    assert!(e.help.as_deref().unwrap_or("").contains("parentheses"), "{e:?}");
    let e = err1("x = 1 }");
    assert!(e.help.as_deref().unwrap_or("").contains("no matching"), "{e:?}");
}

#[test]
fn shebang_and_bom() {
    assert_eq!(p("#!/usr/bin/env csp\nx = 1"), "x = 1");
    assert_eq!(p("\u{feff}x = 1"), "x = 1");
    let prog = ok("#!/usr/bin/env csp\nx");
    assert_eq!(prog.stmts[0].span, Span::new(19, 20));
}

#[test]
fn several_errors_in_one_pass() {
    let e = errs("let = 1\nx = 2\nlet y = )\nz = 3\nfoo(,)\n");
    assert_eq!(e.len(), 3, "{e:#?}");
    assert!(e.windows(2).all(|w| w[0].span.start < w[1].span.start));
    let e = errs("fn f() {\n  let = 1\n  x = )\n}\nlet y = 0x");
    assert_eq!(e.len(), 3, "{e:#?}");
    // lexical and syntax errors together
    let e = errs("let a = \"\\q\"\nlet = 2");
    assert_eq!(e.len(), 2, "{e:#?}");
}

#[test]
fn at_eof() {
    for src in ["fn f() {", "\"abc", "x = 1 +", "f(1,", "if x {", "let xs = [1, 2", "\"a ${b", "/* c"] {
        let e = errs(src);
        assert!(e.iter().any(|e| e.at_eof), "{src:?}: {e:#?}");
    }
    for src in ["x = )", "}", "let = 1"] {
        let e = errs(src);
        assert!(e.iter().all(|e| !e.at_eof), "{src:?}: {e:#?}");
    }
    let e = err1("x = 1 +");
    assert!(e.message.starts_with("unexpected end of input"), "{}", e.message);
    // Ending inside an unclosed bracket points at the bracket.
    let e = err1("fn f() {\n  if x > 0 {\n    print(x)\n");
    assert_eq!(e.message, "`{` is never closed");
    assert_eq!((e.span.start, e.span.end), (20, 21));
    assert!(e.at_eof && e.help.as_deref().unwrap().contains("line 4, column 1"), "{e:?}");
    let e = err1("let xs = [1, (2");
    assert_eq!((e.message.as_str(), e.span.start), ("`(` is never closed", 13));
}

#[test]
fn hints_for_common_mistakes() {
    let e = errs("let x = 3\nif x = 3 { print(1) }");
    assert_eq!(e[0].help.as_deref(), Some("`=` assigns; to compare, use `==`"));
    let e = errs("let chan = 1");
    assert_eq!(e[0].help.as_deref(), Some("`chan` is a keyword and cannot be used as a name"));
}

// ---------------------------------------------------------------- limits

fn on_small_stack<F: FnOnce() + Send + 'static>(f: F) {
    std::thread::Builder::new().stack_size(256 * 1024).spawn(f).unwrap().join().unwrap();
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    on_small_stack(|| {
        for open in ["[", "(", "{", "-", "!", "<-", "\"${"] {
            let src = open.repeat(100_000);
            let e = errs(&src);
            assert!(e.iter().any(|e| e.message.contains("nested too deeply")), "{open}: {e:?}");
        }
        let src = format!("x = {}1", "1 + ".repeat(100_000));
        let e = errs(&src);
        assert!(e[0].message.contains("nested too deeply"));
        let src = format!("x = a{}", ".b".repeat(100_000));
        assert!(errs(&src)[0].message.contains("nested too deeply"));
        let src = format!("x = f{}", "()".repeat(100_000));
        assert!(errs(&src)[0].message.contains("nested too deeply"));
    });
}

#[test]
fn nesting_within_the_limit_parses_on_a_small_stack() {
    on_small_stack(|| {
        let n = crate::syntax::lexer::MAX_DEPTH - 2;
        let src = format!("x = {}1{}", "[".repeat(n), "]".repeat(n));
        ok(&src);
        let src = format!("x = {}1{}", "(".repeat(n), ")".repeat(n));
        ok(&src);
        let src = format!("x = {}1", "-".repeat(n));
        ok(&src);
        let src = format!("x = 1{}", " + 1".repeat(n));
        ok(&src);
        let src = format!("{}{}", "{".repeat(n), "}".repeat(n));
        ok(&src);
    });
}

#[test]
fn long_flat_programs_are_fine() {
    let src = "x = x + 1\n".repeat(20_000);
    assert_eq!(ok(&src).stmts.len(), 20_000);
    let src = format!("x = [{}]", "1, ".repeat(50_000));
    ok(&src);
}

#[test]
#[ignore]
fn show_messages() {
    for src in [
        "x = )",
        "let = 1",
        "if x\n{ }",
        "f(a b)",
        "x = 1 }",
        "fn f() {",
        "fn (",
        "x = [1, 2",
        "if c {\n}\nelse {}",
        "let x = 1 2",
        "select { case 1 {} }",
        "for in x {}",
        "x +",
        "import foo",
        "\"${}\"",
        "{a: 1}",
    ] {
        println!("{src:?}");
        for e in parse(src).unwrap_err() {
            println!("   {}..{} {} | help: {:?} eof={}", e.span.start, e.span.end, e.message, e.help, e.at_eof);
        }
    }
}

#[test]
fn no_cascade_after_an_error() {
    // An unclosed bracket before a function: one error, at the function, naming the opener.
    let e =
        errs("let xs = [1, 2, 3\nfn double(xs) {\n    let out = []\n    return out\n}\nfn t(xs) {\n    return xs\n}\n");
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].message.starts_with("unexpected 'fn'"), "{e:#?}");
    assert_eq!(e[0].help.as_deref(), Some("the `[` on line 1 is not closed by `]`"));
    // Errors in a nested block, a multi-line literal and a later function are
    // each reported once, and nothing else.
    let src = "fn p(items) {\n    for x in items {\n        if x > 2 {\n            out.push(x +)\n        }\n        let m = {\n            name: \"a\",\n            size: 2,\n        }\n    }\n    return out\n}\nlet cfg = {\n    a: 1,\n    b: [1, 2\n}\nfn ok() { let xs = [1]; return xs }\nfn bad() {\n    let = 3\n    return 1\n}\nlet q = 5 +* 3\n";
    let e = errs(src);
    let lines: Vec<usize> = e.iter().map(|e| src[..e.span.start as usize].matches('\n').count() + 1).collect();
    assert_eq!(lines, [4, 16, 19, 22], "{e:#?}");
    assert!(e[1].help.as_deref().unwrap().contains("`[` on line 15"), "{e:#?}");
    assert!(e[2].help.is_none(), "being inside a block is no error: {e:#?}");
}

#[test]
fn a_bracket_never_closed_is_one_error() {
    // `//` starts a comment (Python's floor division does not exist), so the
    // `(` is never closed and the lines after it are inside it.
    let e = errs("t(\"a\", fn() => 7 // 2)\nlet x = 1\nprint(x)\nlet y = 2\n");
    assert_eq!(e.len(), 1, "{e:#?}");
    let help = e[0].help.as_deref().unwrap();
    assert!(help.contains("the `(` on line 1 is not closed by `)`: `//` starts a comment"), "{help}");
}

#[test]
fn else_on_its_own_line_says_so_inside_a_function() {
    let e = errs("fn f(x) {\n    if x {\n        print(1)\n    }\n    else {\n        print(2)\n    }\n}\n");
    assert_eq!(e[0].help.as_deref(), Some("`else` must be on the same line as the `}` that closes the previous block"));
}
