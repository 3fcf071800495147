//! Which loops may write each item over the last (`reuse.rs`).

use crate::bytecode::Op;
use crate::source::SourceFile;
use std::rc::Rc;

/// `reuse` of each loop in the top level of `body` (after `let f = [""]`,
/// the source the loops name, and a function `show`), in order.
fn reuses(body: &str) -> Vec<bool> {
    let mut vm = crate::vm::Vm::new();
    let src = format!("let f = [\"\"]\nlet keep = []\nlet n = 0\nfn show(x) {{ keep.push(x) }}\n{body}\nshow(n)\n");
    let file = Rc::new(SourceFile::new("t.csp", src.as_str()));
    let p = match crate::runner::compile(&mut vm, &file) {
        Ok(p) => p,
        Err(e) => panic!("{body} does not compile: {:?}", e.first().map(|d| &d.message)),
    };
    let heads = p.code.iter().enumerate().filter(|(_, op)| matches!(op, Op::IterNext { .. }));
    heads.map(|(pc, _)| p.reuses.contains(&(pc as u32))).collect()
}

#[test]
fn a_variable_only_tested_is_reused() {
    assert_eq!(reuses("for line in f { if \"x\" in line { n += 1 } }"), [true]);
    assert_eq!(reuses("for line in f { if line == \"\" || line < \"b\" { n += 1 } }"), [true]);
    assert_eq!(reuses("for line in f { if !line || line is nil { continue } n += 1 }"), [true]);
    assert_eq!(reuses("for line in f { if line in keep { break } }"), [true]);
    assert_eq!(reuses("for a in f { for b in f { if a == b { n += 1 } } }"), [true, true]);
}

#[test]
fn a_variable_whose_value_can_get_out_is_not() {
    for body in [
        "for line in f { keep.push(line) }",
        "for line in f { let t = line\n keep.push(t) }",
        "for line in f { show(line) }",
        "for line in f { n = \"${line}\" }",
        "for line in f { n = line + \"x\" }",
        "for line in f { n = line[0] }",
        "for line in f { n = line.trim() }",
        "for line in f { line = \"x\" }",
        "for line in f { keep.push(fn() => line) }",
        "for line in f { go show(line) }",
        "for line in f { for c in line { n += 1 } }",
        "for line in f { n = [line] }",
        "for line in f { n = {\"k\": line} }",
        "for line in f { throw line }",
    ] {
        assert!(!reuses(body)[0], "{body}");
    }
}

#[test]
fn two_variable_loops_and_ranges_are_left_alone() {
    assert_eq!(reuses("for i, line in f { if line == \"\" { n += i } }"), [false]);
    assert_eq!(reuses("for i in 0..3 { n += i }"), Vec::<bool>::new());
}

#[test]
fn loops_in_functions_are_marked_too() {
    let mut vm = crate::vm::Vm::new();
    let src = "fn count(f) {\n let n = 0\n for l in f { if l == \"\" { n += 1 } }\n return n\n}\ncount([\"\"])\n";
    let file = Rc::new(SourceFile::new("t.csp", src));
    let Ok(p) = crate::runner::compile(&mut vm, &file) else { panic!("{src} does not compile") };
    let inner = p.protos.iter().find(|q| q.name == "count").expect("count's proto");
    assert_eq!(inner.reuses.len(), 1);
}
