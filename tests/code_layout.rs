//! The dispatch loop's machine code (src/vm/exec.rs, benches/README.md,
//! "Threaded handlers"): every instruction's handler goes on to the next one
//! by a jump through the handler table, never by a call, which would grow
//! the machine stack with every instruction run (`tick!` would then hand
//! back to `dispatch` every 256 KB, a slow way round). Rust does not promise
//! the tail calls; LLVM makes them in optimised builds, and this checks the
//! binary. Reads the code with binutils' `nm` and `objdump`, which are on any
//! machine that links with cc.

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn tool(name: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(name).args(args).output().unwrap_or_else(|e| panic!("run {name}: {e}"));
    assert!(out.status.success(), "{name} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The handlers (`h_*`, the fast halves), their slow halves (`s_*`) and
/// `call_quick`, which finishes a call instruction: (name, start, size).
fn handlers() -> Vec<(String, u64, u64)> {
    let table = tool("nm", &["-S", "--defined-only", CSP]);
    table
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.last()?;
            // v0 mangling (.cargo/config.toml): `...3csp2vm4exec5h_mul`.
            let (_, tail) = name.split_once("3csp2vm4exec")?;
            let short = tail.trim_start_matches(|c: char| c.is_ascii_digit());
            let handler = (short.starts_with("h_") || short.starts_with("s_") || short == "call_quick")
                && !short.contains(char::is_uppercase);
            (f.len() == 4 && handler).then(|| {
                (short.to_string(), u64::from_str_radix(f[0], 16).unwrap(), u64::from_str_radix(f[1], 16).unwrap())
            })
        })
        .collect()
}

#[test]
fn handlers_go_on_by_tail_jumps() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) || cfg!(debug_assertions) {
        return; // unoptimised builds return to `dispatch` after each instruction
    }
    let found = handlers();
    assert!(found.len() > 100, "expected the handlers and their slow halves, found {}", found.len());
    for (name, start, size) in found {
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
        // The table is indexed by the next instruction's tag: `*(%r8,%rax,8)`.
        let through_table = |l: &&str| l.contains('*') && l.contains(",8)");
        let jumps = code.lines().filter(|l| l.contains("\tjmp")).filter(through_table).count();
        let calls: Vec<&str> = code.lines().filter(|l| l.contains("\tcall")).filter(through_table).collect();
        // Known: the general call's slow half (a builtin, or `call_value`)
        // calls on, as it did before the handlers had helpers out of line
        // (benches/README.md, "Threaded handlers"); `tick!` bounds it.
        if !matches!(name.as_str(), "s_call" | "s_call_global") {
            assert!(calls.is_empty(), "{name} calls the next handler instead of jumping to it: {calls:?}");
        }
        // A throw and a debugger's trap always stop.
        assert!(jumps > 0 || matches!(name.as_str(), "h_trap" | "h_throw"), "{name} never jumps to a next handler");
    }
}
