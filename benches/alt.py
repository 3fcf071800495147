#!/usr/bin/env python3
"""Alternating runs of any commands, for ratios on a noisy machine.

    benches/alt.py ROUNDS 'label=command' 'label=command' ...

Each round runs every command once, the first one rotating from round to
round, so drift hits all alike. Prints the median CPU (user + system, from
wait4) and wall seconds of each, and CPU time over the first command's.
(benches/ab.py compares two csp binaries over benchmark files, with RSS.)
"""
import os
import shlex
import statistics
import subprocess
import sys
import time

rounds = int(sys.argv[1])
peers = [a.split("=", 1) for a in sys.argv[2:]]
res = {label: [] for label, _ in peers}
for r in range(rounds):
    for label, cmd in peers[r % len(peers):] + peers[: r % len(peers)]:
        t = time.perf_counter()
        p = subprocess.Popen(shlex.split(cmd), stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"{label}: exit status {status}")
        res[label].append((ru.ru_utime + ru.ru_stime, time.perf_counter() - t))
first = None
for label, _ in peers:
    cpu = statistics.median(x[0] for x in res[label])
    wall = statistics.median(x[1] for x in res[label])
    first = first or cpu
    print(f"{label:12s} cpu {cpu:7.3f}  wall {wall:7.3f}  cpu/first {cpu / first:5.2f}")
