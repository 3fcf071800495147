#!/usr/bin/env python3
"""HTTP soak (by hand, not in CI; issue 37): benches/soak/http_server.csp under
wrk for MINUTES (default 30) with a slowloris client beside it, sampled once a
minute: wrk's requests/s and latency percentiles over the minute, the server's
resident set (VmRSS) and open descriptors (/proc/PID/fd). The server is flat
when, after the first minute, RSS max/min and p99 max/min stay within 1.10 and
the descriptor count does not grow.

    benches/soak/http_soak.py              30 minutes
    benches/soak/http_soak.py --minutes 2  a check
    CSP=path/to/csp benches/soak/http_soak.py
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Slowloris(threading.Thread):
    """Holds CONNS connections that send a request head one byte every few
    seconds, opening a new one whenever the server closes one."""

    def __init__(self, addr, conns, every):
        super().__init__(daemon=True)
        self.addr, self.conns, self.every = addr, conns, every
        self.cut = 0
        self.stop = False

    def open(self):
        s = socket.create_connection(self.addr)
        s.sendall(b"GET / HTTP/1.1\r\nHost: soak\r\n")
        return s

    def run(self):
        socks = [self.open() for _ in range(self.conns)]
        while not self.stop:
            time.sleep(self.every)
            for i, s in enumerate(socks):
                try:
                    s.sendall(b"X")
                except OSError:
                    self.cut += 1
                    s.close()
                    try:
                        socks[i] = self.open()
                    except OSError:
                        pass
        for s in socks:
            s.close()


def ms(text):
    """wrk's duration (`812.00us`, `1.20ms`, `2.01s`, `1.00m`) in milliseconds."""
    m = re.match(r"([\d.]+)(us|ms|s|m|h)$", text)
    if not m:
        return float("nan")
    return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}[m.group(2)]


def wrk(url, seconds, conns):
    out = subprocess.run(
        ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", url],
        capture_output=True, text=True, check=True,
    ).stdout
    # Anchored at a line's start: a "+/- Stdev" column ending in "99%" (87.99%)
    # would otherwise be taken for the distribution's 99% line.
    if not re.search(r"^\s*99%\s+\S+", out, re.M):
        sys.stderr.write("wrk printed no latency distribution:\n" + out)
        return 0.0, float("nan"), float("nan"), "no latencies"
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = ms(re.search(r"^\s*50%\s+(\S+)", out, re.M).group(1))
    p99 = ms(re.search(r"^\s*99%\s+(\S+)", out, re.M).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out)
    return rps, p50, p99, errors.group(0) if errors else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=int, default=30)
    ap.add_argument("--conns", type=int, default=32, help="wrk's connections")
    ap.add_argument("--loris", type=int, default=200, help="slowloris connections")
    args = ap.parse_args()
    csp = os.environ.get("CSP", os.path.join(ROOT, "target/release/csp"))
    port = free_port()
    server = subprocess.Popen([csp, "run", os.path.join(HERE, "http_server.csp"), f"127.0.0.1:{port}"])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.05)
    loris = Slowloris(("127.0.0.1", port), args.loris, 3)
    loris.start()
    rows = []
    print("minute  req/s    p50 ms  p99 ms  rss KB   fds  loris cut  errors")
    try:
        for m in range(1, args.minutes + 1):
            rps, p50, p99, errors = wrk(f"http://127.0.0.1:{port}/", 55, args.conns)
            rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{server.pid}/status").read()).group(1))
            fds = len(os.listdir(f"/proc/{server.pid}/fd"))
            rows.append((rps, p50, p99, rss, fds))
            print(f"{m:6d}  {rps:7.0f}  {p50:6.2f}  {p99:6.2f}  {rss:7d}  {fds:4d}  {loris.cut:9d}  {errors}", flush=True)
            time.sleep(5)
    finally:
        loris.stop = True
        server.terminate()
        server.wait()
    after = rows[1:] or rows
    spread = lambda i: max(r[i] for r in after) / min(r[i] for r in after)
    print(f"after the first minute: rss max/min {spread(3):.3f}, p99 max/min {spread(2):.3f}, "
          f"req/s max/min {spread(0):.3f}, fds {min(r[4] for r in after)}..{max(r[4] for r in after)}")


if __name__ == "__main__":
    sys.exit(main())
