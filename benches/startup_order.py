#!/usr/bin/env python3
"""Regenerates link/startup.ld, the linker script that puts the functions
`csp run` executes to start and run `print(1)` first in the binary's code, so
that the pages they fill are few and together (benches/README.md, "Startup
memory").

    cargo build --release && benches/startup_order.py [target/release/csp]
    benches/startup_order.py --pin [target/release/csp]   (only re-pins the loop)

The kernel maps a file's pages 64 KB around each page a process first touches
("fault-around"): start-up code here and there across the 5 MB of .text cost
2.7 MB of resident size, the same functions together about 0.6 MB. This runs
the binary under callgrind, maps every instruction it executes to its
function (`nm`), and writes one input-section pattern per function, with the
parts of a symbol that change from build to build as wildcards: v0 mangling's
crate disambiguators and back references (.cargo/config.toml asks for v0,
whose names carry generic arguments instead of a hash), legacy mangling's hash,
LLVM's `.llvm.N` suffixes. So edits, the `dist` profile and new dependencies
keep the order; a pattern that matches nothing is ignored, and a function it
misses only lands where it would have anyway. Rerun it when start-up changes
(tests/startup_rss.rs fails when it has grown well past this). Needs valgrind
and binutils' nm.
"""
import bisect
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "link", "startup.ld")
# The one setting `--pin` changes: build.rs puts it where startup.ld says PAD.
PAD_FILE = os.path.join(ROOT, "link", "dispatch-pad")
# Start-up code outside per-function sections: `_start` (crt1) and psm's
# stack-pointer routine (assembly; the compiler's recursion checks call it).
FIXED = ["*crt1.o(.text)", "*libpsm-*:*(.text)"]
# The interpreter's loop is placed so that its central dispatch block (the
# fetch, the jump-table load and the indirect jump every instruction runs)
# lies within one 64-byte line: loop.csp ran 1.2-1.3x as long when it
# straddled one (benches/README.md, "Code placement"). The function starts on
# a line plus PAD bytes: LLVM aligns the block to 16 within the function, so
# an edit of the loop can move it by 16 and need a new PAD (`--pin`).
# tests/code_layout.rs checks it.
# (Its v0 name, and the legacy one for builds without .cargo/config.toml.)
ALIGNED = ["_RNvNtNtCs*_3csp2vm4exec8dispatch", "_ZN3csp2vm4exec8dispatch17h*E"]


def executed(binary, program):
    """The addresses executed in `binary` running `program`, and where its `main` ran."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "p.csp"), os.path.join(tmp, "cg.out")
        with open(src, "w") as f:
            f.write(program)
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no",
             f"--callgrind-out-file={out}", binary, "run", src],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mine, ob, fn, addrs, main_at = os.path.realpath(binary), None, None, set(), None
        with open(out) as f:
            for line in f:
                if line.startswith("ob="):
                    ob = line[3:].strip()
                    ob = os.path.realpath(ob) if ob.startswith("/") else ob
                elif line.startswith("fn="):
                    fn = line[3:].strip()
                elif line.startswith("0x") and ob == mine:
                    a = int(line.split()[0], 16)
                    addrs.add(a)
                    if fn == "main" and (main_at is None or a < main_at):
                        main_at = a
    return addrs, main_at


def functions(binary):
    """Address -> (size, names): several names may share one function."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], check=True, capture_output=True, text=True).stdout
    funcs = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW":
            funcs.setdefault(int(p[0], 16), (int(p[1], 16), []))[1].append(p[3])
    return funcs


def pattern(name):
    """The symbol with its build-specific parts as wildcards."""
    name = re.sub(r"\.llvm\.\d+$", ".llvm.*", name)
    if name.startswith("_R"):
        name = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)
        return re.sub(r"B[0-9A-Za-z]{0,3}_", "B*_", name)
    return re.sub(r"17h[0-9a-f]{16}E", "17h*E", name)


def dispatch_block(binary):
    """The central dispatch block of vm::exec::dispatch: (its start, its end)
    as offsets from the function's start. Its start is where the handlers
    jump back to (the most frequent direct jump target in the function); it
    ends with the first indirect jump from there."""
    fs = [(a, size) for a, (size, names) in functions(binary).items()
          if any(n.endswith("3csp2vm4exec8dispatch") or re.fullmatch(r"_ZN3csp2vm4exec8dispatch17h[0-9a-f]{16}E", n)
                 for n in names)]
    (start, size), = fs
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
                          f"--stop-address={start + size:#x}", binary], check=True, capture_output=True, text=True).stdout
    ins = [(int(m.group(1), 16), m.group(2)) for m in re.finditer(r"^\s*([0-9a-f]+):\s*(.*)$", dis, re.M)]
    targets = {}
    for _, text in ins:
        m = re.match(r"jmp\s+([0-9a-f]+) ", text)
        if m:
            targets[int(m.group(1), 16)] = targets.get(int(m.group(1), 16), 0) + 1
    head = max(targets, key=targets.get)
    last = next(i for i, (a, text) in enumerate(ins) if a >= head and re.match(r"jmp\s+\*", text))
    return head - start, ins[last + 1][0] - start


def pad(binary):
    """Bytes past a 64-byte line to start dispatch at, so its block starts on one."""
    head, end = dispatch_block(binary)
    assert end - head <= 64, f"the dispatch block is {end - head} bytes"
    return -head % 64


def main():
    if sys.argv[1:2] == ["--pin"]:
        binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target", "release", "csp")
        with open(PAD_FILE, "w") as f:
            f.write(f"{pad(binary)}\n")
        print(f"{os.path.relpath(PAD_FILE, ROOT)}: dispatch at a line + {pad(binary)}")
        return
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "csp")
    funcs = functions(binary)
    starts = sorted(funcs)
    main_nm = next(a for a, (_, names) in funcs.items() if "main" in names)
    addrs, main_run = executed(binary, "print(1)\n")
    hit = set()
    for a in addrs:
        j = bisect.bisect_right(starts, a - (main_run - main_nm)) - 1
        if j >= 0 and a - (main_run - main_nm) < starts[j] + max(funcs[starts[j]][0], 1):
            hit.add(starts[j])
    size = sum(funcs[a][0] for a in hit)
    pats = [p for p in dict.fromkeys(pattern(n) for a in sorted(hit) for n in funcs[a][1]) if p not in ALIGNED]
    lines = [
        "/* Generated by benches/startup_order.py: do not edit. The functions `csp run`",
        f"   executes to start and run print(1) ({len(hit)} functions, {size // 1024} KB), first",
        "   in the code so their pages are together (benches/README.md). */",
        "SECTIONS {",
        "  .text : {",
    ]
    lines += [f"    {p}" for p in FIXED]
    # `#[cold]` functions are in `.text.unlikely.*`, C constructors in `.text.startup.*`.
    section = lambda p: f"    *(.text.{p} .text.unlikely.{p} .text.startup.{p})"
    lines += ["    . = ALIGN(64); . += PAD;"] + [section(p) for p in ALIGNED]
    lines += [section(p) for p in pats]
    lines += ["    *(.text .text.*)", "  }", "} INSERT BEFORE .init;", ""]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print(f"{os.path.relpath(OUT, ROOT)}: {len(pats)} patterns for {len(hit)} functions ({size // 1024} KB)")


main()
