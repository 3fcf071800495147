#!/usr/bin/env python3
"""HTTP hello from every isolate (docs/isolates.md, issue "csp on every core"):
std/http on the main isolate alone (N=0), on one worker (N=1) and on two
(N=2, `{isolates: 2}`), each under `wrk -t1 -cCONNS -dDURATION`.

Two measures, as the design asks, since wrk shares this machine's cores:
- shared: server and wrk on all cores; requests/s, and requests per second
  of the server's CPU time (utime+stime of all its threads over the run);
- split: `taskset` puts wrk on core 0 and the server on core 1, so one and two
  isolates get the same single core: two must lose nothing against one.

Runs alternate between the settings (forwards, then backwards); medians.

    benches/isolates/http_every.py            3 runs of 10 s
    RUNS=1 DURATION=3 benches/isolates/http_every.py
"""
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CSP = os.environ.get("CSP", os.path.join(ROOT, "target/release/csp"))
WRK = os.environ.get("WRK", "wrk")
RUNS = int(os.environ.get("RUNS", "3"))
DURATION = int(os.environ.get("DURATION", "10"))
CONNS = int(os.environ.get("CONNS", "100"))
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def wait_listening(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return
        except OSError:
            time.sleep(0.02)
    sys.exit("error: the server did not start")


def run(n, split):
    port = free_port()
    pin = ["taskset", "-c", "1"] if split else []
    server = subprocess.Popen(pin + [CSP, "run", os.path.join(HERE, "http_hello.csp"),
                                     "127.0.0.1:%d" % port, str(n)])
    try:
        wait_listening(port)
        time.sleep(0.3)  # the workers start on first use
        before = cpu_seconds(server.pid)
        wrk = (["taskset", "-c", "0"] if split else []) + [
            WRK, "-t1", "-c%d" % CONNS, "-d%ds" % DURATION, "http://127.0.0.1:%d/" % port]
        out = subprocess.run(wrk, capture_output=True, text=True, check=True).stdout
        cpu = cpu_seconds(server.pid) - before
    finally:
        server.terminate()
        server.wait()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return rps, rps * DURATION / cpu if cpu > 0 else float("nan")


def main():
    settings = [0, 1, 2]
    for split in (False, True):
        results = {n: [] for n in settings}
        for r in range(RUNS):
            order = settings if r % 2 == 0 else settings[::-1]
            for n in order:
                results[n].append(run(n, split))
        title = "split: wrk on core 0, server on core 1" if split else "shared: both on all cores"
        print("## %s (%d runs of %d s, %d connections; medians)" % (title, RUNS, DURATION, CONNS))
        print("| isolates serving | requests/s | requests per server CPU-second | vs main isolate |")
        print("|---|---|---|---|")
        base = statistics.median(x[0] for x in results[0])
        for n in settings:
            rps = statistics.median(x[0] for x in results[n])
            per_cpu = statistics.median(x[1] for x in results[n])
            name = "main isolate (plain http.serve)" if n == 0 else "{isolates: %d}" % n
            print("| %s | %.0f | %.0f | %.2fx |" % (name, rps, per_cpu, rps / base))
        print()


if __name__ == "__main__":
    main()
