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

/// The handler table's offset in the `Vm` (`Vm::handlers`): the displacement
/// most loads scaled by 8 use in the handlers, as in `mov 0x888(%rdx,%rax,8),%rax`.
fn table_offset(codes: &[String]) -> String {
    let mut counts = std::collections::HashMap::<String, usize>::new();
    for l in codes.iter().flat_map(|c| c.lines()) {
        if let Some((_, operands)) = l.split_once("\tmov ") {
            if let Some((disp, _)) = operands.trim().split_once("(%") {
                if operands.contains(",8),%") && disp.starts_with("0x") {
                    *counts.entry(disp.to_string()).or_default() += 1;
                }
            }
        }
    }
    counts.into_iter().max_by_key(|&(_, n)| n).expect("table loads").0
}

#[test]
fn handlers_go_on_by_tail_jumps() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) || cfg!(debug_assertions) {
        return; // unoptimised builds return to `dispatch` after each instruction
    }
    let found = handlers();
    assert!(found.len() > 100, "expected the handlers and their slow halves, found {}", found.len());
    let codes: Vec<String> = found
        .iter()
        .map(|(_, start, size)| {
            tool(
                "objdump",
                &[
                    "-d",
                    "--no-show-raw-insn",
                    &format!("--start-address={start:#x}"),
                    &format!("--stop-address={:#x}", start + size),
                    CSP,
                ],
            )
        })
        .collect();
    let table = format!("{}(", table_offset(&codes));
    for ((name, _, _), code) in found.iter().zip(&codes) {
        // The next handler: loaded from the table into a register
        // (`mov 0x888(%rdx,%rax,8),%rax`), then jumped to (`jmp *%rax`), or
        // jumped to from the table itself.
        let (mut jumps, mut calls) = (0, Vec::new());
        let mut loaded = std::collections::HashSet::new();
        for l in code.lines() {
            let through_table = l.contains(&table) && l.contains(",8)");
            if l.contains("\tmov ") && through_table {
                loaded.insert(l.rsplit(',').next().unwrap().trim().to_string());
            }
            let target = l.split_once('*').map(|(_, t)| t.trim().to_string());
            let to_next = through_table || target.is_some_and(|t| loaded.contains(&t));
            if l.contains("\tjmp") && to_next {
                jumps += 1;
            } else if l.contains("\tcall") && to_next {
                calls.push(l.to_string());
            }
        }
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
