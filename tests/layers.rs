//! The layers of `src/` (src/README.md): the core (the VM, the scheduler, the
//! compiler) must not import its libraries. `tools/cycle.py` measures the
//! largest import cycle among the source files; the libraries (`natives/`,
//! `os/`, `sqlite/`), the program runner and the checker must stay out of it,
//! and the cycle must not grow back.

use std::process::Command;

/// The heap's types, `Vm` and `Sched` form one cycle (21 files now); the
/// interpreter and the scheduler's operations another above them (a fiber's
/// code calls the scheduler, which runs fibers' code). Joined, they would be
/// over 40 files: the data layer must not reach up into what runs fibers.
const MOST_FILES: usize = 35;

#[test]
fn the_core_does_not_import_its_libraries() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3").arg(format!("{root}/tools/cycle.py")).arg(root).output();
    let out = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        other => panic!("tools/cycle.py did not run: {other:?}"),
    };
    // "largest cycle: 21 of 209 files; folders: bytecode compile sched vm"
    let size: usize = out.split_whitespace().nth(2).and_then(|n| n.parse().ok()).expect(&out);
    let folders: Vec<&str> = out.split("folders:").nth(1).expect(&out).split_whitespace().collect();
    for library in ["natives", "os", "sqlite", "runner", "check", "embed", "repl", "lsp", "lint"] {
        assert!(!folders.contains(&library), "{library} is in the core's import cycle: {out}");
    }
    assert!(size <= MOST_FILES, "the core's import cycle grew: {out}");
}
