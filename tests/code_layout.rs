//! Code placement (benches/README.md, "Code placement"): link/startup.ld places
//! the interpreter's loop so that its central dispatch block (the fetch, the
//! jump-table load and the indirect jump every instruction runs) lies within one
//! 64-byte line, wherever edits elsewhere move the rest of the binary. Reads the
//! code with binutils' `nm` and `objdump`, which are on any machine that links
//! with cc. When it fails after an edit of the loop: `benches/startup_order.py --pin`.

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn tool(name: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(name).args(args).output().unwrap_or_else(|e| panic!("run {name}: {e}"));
    assert!(out.status.success(), "{name} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn dispatch_block_is_within_a_cache_line() {
    if !cfg!(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64")) || cfg!(debug_assertions) {
        return; // the linker script is for ELF linkers on glibc (build.rs); the layout matters optimized, on x86-64
    }
    // The pad was measured with the pinned compiler; another may lay the loop out otherwise.
    let pinned = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/rust-toolchain.toml")).unwrap();
    let channel = pinned.lines().find_map(|l| l.strip_prefix("channel = ")).unwrap_or("").trim_matches('"');
    if !env!("CSP_RUSTC").starts_with(&format!("rustc {channel} ")) {
        eprintln!(
            "skipped: built with {}, the layout is pinned for rustc {channel} (rust-toolchain.toml)",
            env!("CSP_RUSTC")
        );
        return;
    }
    // The function itself, not closures in it (their names extend its own):
    // v0 mangling (.cargo/config.toml) ends the name there, legacy adds a hash.
    let table = tool("nm", &["-S", "--defined-only", CSP]);
    let found: Vec<(u64, u64)> = table
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.last()?;
            let legacy = name.strip_prefix("_ZN3csp2vm4exec8dispatch17h").is_some_and(|h| h.len() == 17);
            (f.len() == 4 && (name.ends_with("3csp2vm4exec8dispatch") || legacy))
                .then(|| (u64::from_str_radix(f[0], 16).unwrap(), u64::from_str_radix(f[1], 16).unwrap()))
        })
        .collect();
    assert_eq!(found.len(), 1, "expected one vm::exec::dispatch symbol, found {found:x?}");
    let (start, size) = found[0];
    let code = tool(
        "objdump",
        &[
            "-d",
            "--no-show-raw-insn",
            &format!("--start-address={start:#x}"),
            &format!("--stop-address={:#x}", start + size),
            CSP,
        ],
    );
    let ins: Vec<(u64, &str)> = code
        .lines()
        .filter_map(|l| {
            let (addr, text) = l.split_once(':')?;
            Some((u64::from_str_radix(addr.trim(), 16).ok()?, text.trim()))
        })
        .collect();
    // The block starts where the handlers jump back to, the most frequent
    // direct jump target, and ends with the first indirect jump from there.
    let mut targets = std::collections::HashMap::new();
    for (_, text) in &ins {
        if let Some(t) = text.strip_prefix("jmp").map(str::trim).and_then(|t| t.split_whitespace().next()) {
            if let Ok(t) = u64::from_str_radix(t, 16) {
                *targets.entry(t).or_insert(0) += 1;
            }
        }
    }
    let (&head, _) = targets.iter().max_by_key(|(_, &n)| n).expect("jumps in dispatch");
    let last = ins.iter().position(|(a, t)| *a >= head && t.starts_with("jmp") && t.contains('*'));
    let end = ins[last.expect("the indirect jump") + 1].0; // the next instruction's address
    assert!(
        head / 64 == (end - 1) / 64,
        "the dispatch block {head:#x}..{end:#x} (dispatch + {:#x}) crosses a 64-byte line: run benches/startup_order.py --pin (it rewrites link/dispatch-pad)",
        head - start
    );
}
