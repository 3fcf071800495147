//! Generates the parser from grammar/, one test function per golden program, and
//! the table of std/ modules embedded in the binary.

use std::fmt::Write;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=grammar");
    lalrpop::Configuration::new().set_in_dir("grammar").emit_rerun_directives(true).process().unwrap();
    golden_tests();
    std_modules();
}

/// `std/NAME.csp` (all but the prelude) becomes `("NAME", include_str!(...))`, so
/// `import "std/NAME"` works from any directory.
fn std_modules() {
    println!("cargo:rerun-if-changed=std");
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let mut names: Vec<String> = std::fs::read_dir("std")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".csp").map(str::to_string))
        .filter(|n| n != "prelude")
        .collect();
    names.sort();
    let mut out = String::from("pub const STD_MODULES: &[(&str, &str)] = &[\n");
    for n in names {
        let _ = writeln!(out, "    ({n:?}, include_str!({:?})),", format!("{root}/std/{n}.csp"));
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("std_modules.rs");
    std::fs::write(dest, out).unwrap();
}

/// `examples/NAME.csp` and `tests/lang/FEATURE/NAME.csp` each become a `#[test]`.
fn golden_tests() {
    let mut out = String::new();
    for (dir, kind) in [("examples", "example"), ("tests/lang", "lang")] {
        println!("cargo:rerun-if-changed={dir}");
        let mut files = Vec::new();
        collect(Path::new(dir), &mut files);
        files.sort();
        for f in files {
            let rel = f.to_string_lossy().replace('\\', "/");
            if dir == "tests/lang" {
                if let Some(parent) = f.parent() {
                    println!("cargo:rerun-if-changed={}", parent.display());
                }
            }
            let name: String = rel
                .trim_start_matches(dir)
                .trim_end_matches(".csp")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
                .collect();
            let _ = writeln!(out, "#[test]\nfn {kind}{name}() {{\n    check_{kind}({rel:?});\n}}\n");
        }
    }
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("golden_tests.rs");
    std::fs::write(dest, out).unwrap();
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            // `lib/` folders hold modules that tests import, not tests.
            if !p.ends_with("lib") {
                collect(&p, files);
            }
        } else if p.extension().is_some_and(|x| x == "csp") && !p.to_string_lossy().ends_with("_test.csp") {
            // `*_test.csp` files hold tests for `csp test`, not programs.
            files.push(p);
        }
    }
}
