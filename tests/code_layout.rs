//! Code placement (benches/README.md, "Code placement"): link/startup.ld starts
//! the interpreter's loop on a 64-byte line, so that where its blocks cross
//! lines does not move with edits elsewhere in the binary. Reads the symbol
//! table with binutils' `nm`, which is on any machine that links with cc.

const CSP: &str = env!("CARGO_BIN_EXE_csp");

#[test]
fn dispatch_starts_on_a_cache_line() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return; // the linker script is for ELF linkers on glibc (build.rs)
    }
    let out = std::process::Command::new("nm").args(["--defined-only", CSP]).output().expect("run nm");
    assert!(out.status.success(), "nm failed: {}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    // The function itself, not closures in it (their names extend its own):
    // v0 mangling (.cargo/config.toml) ends the name there, legacy adds a hash.
    let at: Vec<u64> = table
        .lines()
        .filter_map(|l| {
            let (addr, name) = (l.split_whitespace().next()?, l.split_whitespace().last()?);
            let legacy = name.strip_prefix("_ZN3csp2vm4exec8dispatch17h").is_some_and(|h| h.len() == 17);
            (name.ends_with("3csp2vm4exec8dispatch") || legacy).then(|| u64::from_str_radix(addr, 16).unwrap())
        })
        .collect();
    assert_eq!(at.len(), 1, "expected one vm::exec::dispatch symbol, found {at:x?}");
    assert_eq!(at[0] % 64, 0, "vm::exec::dispatch at {:#x}, not on a 64-byte line", at[0]);
}
