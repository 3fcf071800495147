use super::ast::*;
use super::{parse, SyntaxError};

// ---------------------------------------------------------------- helpers

/// A compact S-expression rendering of the AST, for readable assertions.
fn sx(e: &Expr) -> String {
    use ExprKind::*;
    match &e.kind {
        Nil => "nil".into(),
        Bool(b) => b.to_string(),
        Int(i) => i.to_string(),
        Float(f) => format!("{f:?}"),
        Str(s) => format!("{s:?}"),
        Interp(parts) => {
            let ps: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    InterpPart::Lit(s) => format!("{s:?}"),
                    InterpPart::Expr(e) => format!("${{{}}}", sx(e)),
                })
                .collect();
            format!("(interp {})", ps.join(" "))
        }
        Name(n) => n.clone(),
        List(xs) => format!("[{}]", xs.iter().map(sx).collect::<Vec<_>>().join(" ")),
        ListComp { expr, var, iter, cond } => match cond {
            Some(c) => format!("[{} for {} in {} if {}]", sx(expr), var.name, sx(iter), sx(c)),
            None => format!("[{} for {} in {}]", sx(expr), var.name, sx(iter)),
        },
        Map(kv) => {
            format!("{{{}}}", kv.iter().map(|(k, v)| format!("{}: {}", sx(k), sx(v))).collect::<Vec<_>>().join(", "))
        }
        Unary(UnOp::Neg, x) => format!("(neg {})", sx(x)),
        Unary(UnOp::Not, x) => format!("(! {})", sx(x)),
        Binary(op, a, b) => format!("({} {} {})", binop(*op), sx(a), sx(b)),
        And(a, b) => format!("(&& {} {})", sx(a), sx(b)),
        Or(a, b) => format!("(|| {} {})", sx(a), sx(b)),
        Range { lo, hi, inclusive } => {
            format!("({} {} {})", if *inclusive { "..=" } else { ".." }, sx(lo), sx(hi))
        }
        Index(a, i) => format!("(index {} {})", sx(a), sx(i)),
        Field(a, f) => format!("(. {} {})", sx(a), f.name),
        Call(f, args) => format!("(call {}{})", sx(f), args_sx(args)),
        Method(o, m, args) => format!("(method {} {}{})", sx(o), m.name, args_sx(args)),
        Func(f) => func_sx(f),
        Recv(c) => format!("(<- {})", sx(c)),
        Go(x) => format!("(go {})", sx(x)),
        GoBlock(b) => format!("(go {})", block_sx(b)),
        Yield(None) => "(yield)".into(),
        Yield(Some(x)) => format!("(yield {})", sx(x)),
        Wait(x) => format!("(wait {})", sx(x)),
    }
}

fn binop(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
    }
}

fn args_sx(args: &[Expr]) -> String {
    args.iter().map(|a| format!(" {}", sx(a))).collect()
}

fn func_sx(f: &FuncDecl) -> String {
    let mut ps: Vec<String> = f
        .params
        .iter()
        .map(|p| match &p.default {
            Some(d) => format!("{}={}", p.name.name, sx(d)),
            None => p.name.name.clone(),
        })
        .collect();
    if let Some(r) = &f.rest {
        ps.push(format!("...{}", r.name));
    }
    let name = f.name.as_ref().map(|n| format!(" {}", n.name)).unwrap_or_default();
    format!("(fn{name} ({}) {})", ps.join(" "), block_sx(&f.body))
}

fn block_sx(b: &[Stmt]) -> String {
    format!("{{{}}}", b.iter().map(stmt_sx).collect::<Vec<_>>().join("; "))
}

fn names(ns: &[Ident]) -> String {
    ns.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(",")
}

fn stmt_sx(s: &Stmt) -> String {
    use StmtKind::*;
    match &s.kind {
        Let { names: ns, value } => format!("let {} = {}", names(ns), sx(value)),
        Assign { target, op: None, value } => format!("{} = {}", sx(target), sx(value)),
        Assign { target, op: Some(op), value } => format!("{} {}= {}", sx(target), binop(*op), sx(value)),
        Expr(e) => sx(e),
        Fn(f) => func_sx(f),
        If { cond, then, els: None } => format!("if {} {}", sx(cond), block_sx(then)),
        If { cond, then, els: Some(e) } => format!("if {} {} else {}", sx(cond), block_sx(then), block_sx(e)),
        While { cond, body } => format!("while {} {}", sx(cond), block_sx(body)),
        For { var, iter, body } => format!("for {} in {} {}", var.name, sx(iter), block_sx(body)),
        Break => "break".into(),
        Continue => "continue".into(),
        Return(None) => "return".into(),
        Return(Some(e)) => format!("return {}", sx(e)),
        Throw(e) => format!("throw {}", sx(e)),
        Try { body, catch, finally } => {
            let mut out = format!("try {}", block_sx(body));
            if let Some((name, b)) = catch {
                match name {
                    Some(n) => out += &format!(" catch {} {}", n.name, block_sx(b)),
                    None => out += &format!(" catch {}", block_sx(b)),
                }
            }
            if let Some(f) = finally {
                out += &format!(" finally {}", block_sx(f));
            }
            out
        }
        Block(b) => block_sx(b),
        Send { chan, value } => format!("{} <- {}", sx(chan), sx(value)),
        Select(cases) => {
            let cs: Vec<String> = cases
                .iter()
                .map(|c| match &c.kind {
                    CaseKind::Recv { names: ns, chan } => {
                        format!("case [{}] <- {} {}", names(ns), sx(chan), block_sx(&c.body))
                    }
                    CaseKind::Send { chan, value } => {
                        format!("case {} <- {} {}", sx(chan), sx(value), block_sx(&c.body))
                    }
                    CaseKind::Default => format!("default {}", block_sx(&c.body)),
                })
                .collect();
            format!("select {{{}}}", cs.join("; "))
        }
        Lock { mutex, body } => format!("lock {} {}", sx(mutex), block_sx(body)),
        WaitBlock(b) => format!("wait {}", block_sx(b)),
        Import { path, alias: None } => format!("import {path:?}"),
        Import { path, alias: Some(a) } => format!("import {path:?} as {}", a.name),
    }
}

#[track_caller]
fn ok(src: &str) -> Program {
    match parse(src) {
        Ok(p) => p,
        Err(errs) => panic!("parse failed for {src:?}: {errs:#?}"),
    }
}

/// The program rendered, statements joined by "; ".
#[track_caller]
fn p(src: &str) -> String {
    ok(src).stmts.iter().map(stmt_sx).collect::<Vec<_>>().join("; ")
}

#[track_caller]
fn errs(src: &str) -> Vec<SyntaxError> {
    match parse(src) {
        Ok(p) => panic!("expected errors for {src:?}, got {:?}", p.stmts.iter().map(stmt_sx).collect::<Vec<_>>()),
        Err(e) => e,
    }
}

#[track_caller]
fn err1(src: &str) -> SyntaxError {
    let e = errs(src);
    assert!(!e.is_empty());
    e[0].clone()
}

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
    let e = err1("fn f() {");
    assert!(e.message.starts_with("unexpected end of input"), "{}", e.message);
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
        let n = super::lexer::MAX_DEPTH - 2;
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
