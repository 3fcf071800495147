//! The `csp fmt [--check] [PATHS]` command.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: csp fmt [--check] [PATH ...]   (PATH `-` formats stdin to stdout)";

/// Runs `csp fmt` with the arguments after `fmt`; returns the exit code: 0,
/// 1 when `--check` finds files to reformat, 2 on a syntax error (as
/// `csp check`), 64 on a bad command line or an unreadable path.
pub fn run(args: &[String], color: bool) -> i32 {
    let mut check = false;
    let mut paths = Vec::new();
    for a in args {
        match a.as_str() {
            "--check" => check = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                return 0;
            }
            s if s.starts_with("--") => {
                crate::err_println!("csp: unknown option '{s}' for `csp fmt`\n{USAGE}");
                return 64;
            }
            _ => paths.push(a.clone()),
        }
    }
    if paths.iter().any(|p| p == "-") {
        if paths.len() > 1 {
            crate::err_println!("csp: `csp fmt -` reads stdin and takes no other PATH\n{USAGE}");
            return 64;
        }
        return stdin(check, color);
    }
    if paths.is_empty() {
        paths.push(".".into());
    }
    let mut files = Vec::new();
    for p in &paths {
        if let Err(e) = collect(Path::new(p), true, &mut files) {
            crate::err_println!("csp: cannot read {p}: {}", crate::os::io_reason(&e));
            return 64;
        }
    }
    let mut code = 0;
    for f in &files {
        code = code.max(file(f, check, color));
    }
    code
}

/// The files to format under `path`: a file named on the command line as it
/// is, `*.csp` files in directories (skipping hidden ones), in name order.
fn collect(path: &Path, named: bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_dir() {
        if named || path.extension().is_some_and(|e| e == "csp") {
            out.push(path.to_path_buf());
        }
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    entries.sort();
    for e in entries {
        if e.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
            continue;
        }
        collect(&e, false, out)?;
    }
    Ok(())
}

/// Formats one file; returns its exit code.
fn file(path: &Path, check: bool, color: bool) -> i32 {
    let name = path.display().to_string();
    let src = match std::fs::read(path) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                crate::err_println!("error[csp::syntax]: {name} is not valid UTF-8 (invalid byte at offset {at})");
                return 2;
            }
        },
        Err(e) => {
            crate::err_println!("csp: cannot read {name}: {}", crate::os::io_reason(&e));
            return 64;
        }
    };
    let out = match super::format_source(&src) {
        Ok(out) => out,
        Err(diags) => {
            let file = crate::source::SourceFile::new(name, src);
            crate::err_print!("{}", crate::diag::render_all(&diags, &file, color));
            return 2;
        }
    };
    if out == src {
        return 0;
    }
    if check {
        let line = src.lines().zip(out.lines()).take_while(|(a, b)| a == b).count() + 1;
        println!("{name}: not formatted (first difference on line {line})");
        return 1;
    }
    if let Err(e) = std::fs::write(path, out) {
        crate::err_println!("csp: cannot write {name}: {}", crate::os::io_reason(&e));
        return 64;
    }
    println!("{name}");
    0
}

/// `csp fmt -`: stdin to stdout (`--check`: nothing written, exit 1 if it
/// would change).
fn stdin(check: bool, color: bool) -> i32 {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        crate::err_println!("csp: cannot read stdin: {}", crate::os::io_reason(&e));
        return 64;
    }
    let Ok(src) = String::from_utf8(bytes) else {
        crate::err_println!("error[csp::syntax]: stdin is not valid UTF-8");
        return 2;
    };
    match super::format_source(&src) {
        Ok(out) if check => i32::from(out != src),
        Ok(out) => {
            let mut so = std::io::stdout().lock();
            match so.write_all(out.as_bytes()).and_then(|_| so.flush()) {
                Ok(()) => 0,
                Err(e) => {
                    crate::err_println!("csp: cannot write output: {e}");
                    74
                }
            }
        }
        Err(diags) => {
            let file = crate::source::SourceFile::new("<stdin>", src);
            crate::err_print!("{}", crate::diag::render_all(&diags, &file, color));
            2
        }
    }
}
