//! Generates the parser from grammar/, one test function per golden program and
//! the table of std/ modules embedded in the binary; links the binary for a
//! small start-up.

use std::fmt::Write;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=grammar");
    lalrpop::Configuration::new().set_in_dir("grammar").emit_rerun_directives(true).process().unwrap();
    golden_tests();
    std_modules();
    startup_layout();
}

/// Links the `csp` binary for a small start-up (benches/README.md, "Startup
/// memory"): the functions start-up runs together at the front of the code
/// (`link/startup.ld`, written by benches/startup_order.py), so the kernel
/// maps their few pages rather than 64 KB around each of them all over it;
/// and relative relocations packed (DT_RELR), so the loader reads 5 KB of
/// them instead of 390 KB at every start. Linux with glibc only: the script
/// is for ELF linkers, and glibc runs DT_RELR from 2.36.
fn startup_layout() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    println!("cargo:rerun-if-changed=link/startup.ld");
    let script = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/startup.ld");
    println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    if var("HOST") == var("TARGET") && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the glibc this build runs on (the target's, when not cross
/// compiling) is at least `major.minor`.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: returns a static NUL-terminated string such as "2.36".
    let v = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let mut parts = v.to_str().unwrap_or("").split('.').map(|n| n.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
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
