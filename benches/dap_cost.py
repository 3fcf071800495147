#!/usr/bin/env python3
"""The cost of running under the debugger (docs/debugging.md): alternating
runs of each program with `csp run` and under `csp dap` with no breakpoints
(a minimal client: initialize, launch, configurationDone, then until the
`terminated` event), timed by perf_counter; medians and their ratio.

    benches/dap_cost.py [CSP] [RUNS] [PROGRAM[:ARG,ARG...]...]

Defaults: target/release/csp, 7 runs, benches' fib, nbody, binary_trees,
strings_maps and ping-pong, and AWFY's Richards, DeltaBlue and NBody
(../shared/bench/awfy; AWFY= to move it)."""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AWFY = os.environ.get("AWFY", os.path.join(ROOT, "..", "shared", "bench", "awfy", "csp"))

args = sys.argv[1:]
csp = os.path.abspath(args[0]) if args else os.path.join(ROOT, "target/release/csp")
runs = int(args[1]) if len(args) > 1 else 7
progs = args[2:] or [
    "benches/fib.csp",
    "benches/nbody.csp",
    "benches/binary_trees.csp",
    "benches/strings_maps.csp",
    "benches/conc/ping_pong.csp",
    AWFY + "/harness.csp:Richards,3,1",
    AWFY + "/harness.csp:DeltaBlue,3,2000",
    AWFY + "/harness.csp:NBody,1,250000",
]


def send(p, msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()


def receive(p):
    length = 0
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("csp dap ended before the program did")
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(p.stdout.read(length))


def under_dap(program, prog_args):
    start = time.perf_counter()
    p = subprocess.Popen([csp, "dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, cwd=os.path.dirname(program) or ".")
    send(p, {"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "csp"}})
    send(p, {"seq": 2, "type": "request", "command": "launch",
             "arguments": {"program": program, "args": prog_args, "cwd": os.path.dirname(program) or "."}})
    send(p, {"seq": 3, "type": "request", "command": "configurationDone"})
    while True:
        m = receive(p)
        if m.get("type") == "response" and not m.get("success", True):
            raise RuntimeError("%s failed: %s" % (m.get("command"), m.get("message")))
        if m.get("type") == "event" and m.get("event") == "terminated":
            break
    p.stdin.close()
    p.wait()
    return time.perf_counter() - start


def plain(program, prog_args):
    start = time.perf_counter()
    subprocess.run([csp, "run", program] + prog_args, stdout=subprocess.DEVNULL, check=True,
                   cwd=os.path.dirname(program) or ".")
    return time.perf_counter() - start


ratios = []
for spec in progs:
    program, _, rest = spec.partition(":")
    program = os.path.abspath(program)
    prog_args = rest.split(",") if rest else []
    times = {"run": [], "dap": []}
    for _ in range(runs):
        times["run"].append(plain(program, prog_args))
        times["dap"].append(under_dap(program, prog_args))
    a, b = statistics.median(times["run"]), statistics.median(times["dap"])
    ratios.append(b / a)
    name = os.path.relpath(program, ROOT) + (" " + " ".join(prog_args) if prog_args else "")
    print("%-48s run %8.1f ms, dap %8.1f ms, ratio %.3f" % (name, a * 1000, b * 1000, b / a), flush=True)
print("geomean ratio %.3f" % statistics.geometric_mean(ratios))
