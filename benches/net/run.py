#!/usr/bin/env python3
"""Network benchmarks: a csp server beside Go (GOMAXPROCS=1 and default), Node
and Python asyncio servers, in one run, every server loaded by the same client.

    benches/net/run.sh                        echo, http and idle, 3 runs each
    RUNS=1 ROUNDS=1000 benches/net/run.sh echo  a quick run of one benchmark

echo: a Go load generator (GOMAXPROCS=1) makes CONNS connections x ROUNDS
      round trips of 64 bytes against each server's echo_server / echo.csp.
http: `wrk -t1 -cCONNS -dDURATION --latency` against each http_hello server.
idle: a Go client holds IDLE connections to each echo server, each having
      echoed one message; the server's peak RSS (VmHWM) then.

Each benchmark's runs alternate between the servers (forwards, then
backwards), so drift of a noisy machine hits them alike; medians are printed.
A server that fails to start (the csp http row before std/http exists) is
shown as FAIL and the others still run; any failure makes the script exit 1.
"""
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ALL = ["echo", "http", "idle"]
PEERS = {"echo": ["csp", "go1", "go", "node", "python"],
         "http": ["csp", "go1", "go", "node", "python"],
         "idle": ["csp", "go1", "node", "python"]}


def env_num(name, default, kind=int):
    try:
        v = kind(os.environ.get(name, default))
        if v <= 0:
            raise ValueError
        return v
    except ValueError:
        sys.exit("error: %s must be a positive number, got %r" % (name, os.environ.get(name)))


RUNS = env_num("RUNS", "3")
CONNS = env_num("CONNS", "100")
ROUNDS = env_num("ROUNDS", "10000")
DURATION = env_num("DURATION", "10")
IDLE = env_num("IDLE", "10000")
TIMEOUT = env_num("TIMEOUT", "300", float)
CSP = os.environ.get("CSP", os.path.join(ROOT, "target/release/csp"))
GO = os.environ.get("GO", "go")
NODE = os.environ.get("NODE", "node")
PYTHON = os.environ.get("PYTHON", "python3")
WRK = os.environ.get("WRK", "wrk")
ENV_DEFAULT = {k: v for k, v in os.environ.items() if k != "GOMAXPROCS"}
ENV_GO1 = dict(ENV_DEFAULT, GOMAXPROCS="1")
failed = False


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def fail(msg):
    global failed
    failed = True
    log("!!! " + msg)


def raise_nofile():
    """Both sides of `idle` need IDLE + ~100 descriptors; children inherit this."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = IDLE + 100
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit("error: idle needs %d descriptors, the hard limit is %d (lower IDLE)" % (need, hard))
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else need, hard))


def free_addr():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


class Server:
    """A server process on a fresh port, up once it accepts a connection."""

    def __init__(self, cmd, env, name):
        self.addr = free_addr()
        self.name = name
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(cmd + [self.addr], env=env, stdout=subprocess.DEVNULL,
                                  stderr=self.err)
        host, port = self.addr.split(":")
        deadline = time.time() + 15
        while True:
            if self.p.poll() is not None:
                self.err.seek(0)
                raise RuntimeError("%s server exited (%s): %s" % (
                    name, self.p.returncode, self.err.read().decode(errors="replace").strip()[-400:]))
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return
            except OSError:
                if time.time() > deadline:
                    self.stop()
                    raise RuntimeError("%s server never accepted on %s" % (name, self.addr))
                time.sleep(0.05)

    def status(self, field):
        """A /proc/PID/status field in KiB (VmRSS, VmHWM)."""
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def cpu(self):
        """User + system CPU seconds so far."""
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(3)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()


def server_cmd(peer, bench, gobin):
    """The command line (without the address) and environment of PEER's server."""
    base = "http_hello" if bench == "http" else "echo_server"
    if peer == "csp":
        src = "http_hello.csp" if bench == "http" else "echo.csp"
        return [CSP, "run", os.path.join(HERE, src)], ENV_DEFAULT
    if peer in ("go1", "go"):
        return [os.path.join(gobin, base)], ENV_GO1 if peer == "go1" else ENV_DEFAULT
    if peer == "node":
        return [NODE, os.path.join(HERE, base + ".js")], ENV_DEFAULT
    return [PYTHON, os.path.join(HERE, base + ".py")], ENV_DEFAULT


def run(cmd, env=None, timeout=TIMEOUT):
    p = subprocess.run(cmd, env=env or ENV_GO1, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (os.path.basename(cmd[0]), p.returncode,
                                                 p.stderr.decode(errors="replace").strip()[-400:]))
    return p.stdout.decode()


def once_echo(srv, gobin):
    out = run([os.path.join(gobin, "echo_client"), srv.addr, str(CONNS), str(ROUNDS)])
    secs, rate = out.split()
    return {"secs": float(secs), "rate": float(rate), "cpu": srv.cpu()}


def wrk_ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def once_http(srv, gobin):
    out = run([WRK, "-t1", "-c%d" % CONNS, "-d%ds" % DURATION, "--latency",
               "http://%s/" % srv.addr], env=ENV_DEFAULT, timeout=DURATION + 60)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    if not rps or not p99:
        raise RuntimeError("cannot read wrk's output:\n" + out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out)
    if bad:
        raise RuntimeError("wrk: " + bad.group(0))
    # CPU per request: in a fixed time, a faster server also spends more CPU.
    reqs = float(re.search(r"(\d+) requests in", out).group(1))
    return {"rps": float(rps.group(1)), "p99": wrk_ms(*p99.groups()), "cpu": srv.cpu() / reqs * 1e6}


def once_idle(srv, gobin):
    base = srv.status("VmRSS")
    t0 = time.perf_counter()
    c = subprocess.Popen([os.path.join(gobin, "idle_client"), srv.addr, str(IDLE)], env=ENV_GO1,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    timer = threading.Timer(TIMEOUT, c.kill)
    timer.start()
    try:
        line = c.stdout.readline().decode().strip()
        secs = time.perf_counter() - t0
        if line != "ready":
            c.wait()
            raise RuntimeError("idle_client: " + c.stderr.read().decode(errors="replace").strip()[-400:])
        time.sleep(0.5)  # let the server finish its last echoes
        hwm, rss = srv.status("VmHWM"), srv.status("VmRSS")
    finally:
        timer.cancel()
        if c.poll() is None:
            c.stdin.close()
            try:
                c.wait(10)
            except subprocess.TimeoutExpired:
                c.kill()
                c.wait()
    return {"hwm": hwm / 1024, "per": (hwm - base) / IDLE, "secs": secs, "rss": rss / 1024}


ONCE = {"echo": once_echo, "http": once_http, "idle": once_idle}


def measure(bench, gobin, peers):
    """{peer: {metric: [values]}} or {peer: None} for a peer that failed."""
    res = {p: {} for p in peers}
    for i in range(RUNS):
        for peer in (peers if i % 2 == 0 else peers[::-1]):
            if res[peer] is None:
                continue
            log("%s: %s (run %d of %d)" % (bench, peer, i + 1, RUNS))
            cmd, env = server_cmd(peer, bench, gobin)
            srv = None
            try:
                srv = Server(cmd, env, peer)
                for k, v in ONCE[bench](srv, gobin).items():
                    res[peer].setdefault(k, []).append(v)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                fail("%s %s: %s" % (bench, peer, e))
                res[peer] = None
            finally:
                if srv:
                    srv.stop()
    return {p: (None if r is None else {k: statistics.median(v) for k, v in r.items()})
            for p, r in res.items()}


def fmt(v, spec):
    return "FAIL" if v is None else format(v, spec)


def table(title, cols, rows):
    """cols: [(header, key, format spec, ratio kind)]; ratio kind "low" (csp/peer)
    or "high" (peer/csp), so that below 1 always means csp does better."""
    print("\n" + title)
    head = "%-8s" % "server" + "".join("%15s" % h for h, _, _, _ in cols)
    ratio_cols = [c for c in cols if c[3]]
    head += "".join("%14s" % (("csp/peer " if c[3] == "low" else "peer/csp ") + c[1]) for c in ratio_cols)
    print(head)
    csp = rows.get("csp")
    for peer, r in rows.items():
        line = "%-8s" % peer
        for _, key, spec, _ in cols:
            line += "%15s" % fmt(None if r is None else r[key], spec)
        for _, key, _, kind in ratio_cols:
            if r is None or csp is None or not r[key] or not csp[key]:
                line += "%14s" % "-"
            else:
                q = csp[key] / r[key] if kind == "low" else r[key] / csp[key]
                line += "%14.2f" % q
        print(line)


def build_go(tmp, benches):
    gobin = os.path.join(tmp, "go")
    os.makedirs(gobin)
    names = set()
    if "echo" in benches:
        names |= {"echo_server", "echo_client"}
    if "http" in benches:
        names.add("http_hello")
    if "idle" in benches:
        names |= {"echo_server", "idle_client"}
    for n in sorted(names):
        log("building %s.go ..." % n)
        subprocess.run([GO, "build", "-o", os.path.join(gobin, n), n + ".go"], cwd=HERE, check=True,
                       env=dict(ENV_DEFAULT, GO111MODULE="off"))
    return gobin


def main():
    benches = sys.argv[1:] or ALL
    for b in benches:
        if b not in ALL:
            sys.exit("error: no benchmark %r (have: %s)" % (b, " ".join(ALL)))
    for tool in [GO] + ([WRK] if "http" in benches else []):
        if not shutil.which(tool):
            sys.exit("error: %s not found (apt-get install -y %s)" % (
                tool, "wrk" if tool == WRK else "golang-go"))
    if not os.access(CSP, os.X_OK):
        log("warning: csp binary %r not found (cargo build --release); its rows will fail" % CSP)
    raise_nofile()
    uptime = lambda: subprocess.run(["uptime"], stdout=subprocess.PIPE).stdout.decode().strip()
    print("# start: " + uptime())
    print("# RUNS=%d CONNS=%d ROUNDS=%d DURATION=%ds IDLE=%d, %d cores, %s" % (
        RUNS, CONNS, ROUNDS, DURATION, IDLE, os.cpu_count(),
        subprocess.run([GO, "version"], stdout=subprocess.PIPE).stdout.decode().strip()))
    with tempfile.TemporaryDirectory() as tmp:
        gobin = build_go(tmp, benches)
        for b in benches:
            rows = measure(b, gobin, PEERS[b])
            if b == "echo":
                table("echo: %d connections x %d round trips of 64 bytes (client: Go, GOMAXPROCS=1); "
                      "median of %d" % (CONNS, ROUNDS, RUNS),
                      [("seconds", "secs", ".2f", "low"), ("round trips/s", "rate", ",.0f", None),
                       ("server CPU s", "cpu", ".2f", "low")], rows)
            elif b == "http":
                table("http: wrk -t1 -c%d -d%ds --latency, hello world; median of %d" % (
                    CONNS, DURATION, RUNS),
                      [("requests/s", "rps", ",.0f", "high"), ("p99 ms", "p99", ".2f", "low"),
                       ("CPU us/req", "cpu", ".1f", "low")], rows)
            else:
                table("idle: %d connections held, each echoed once (client: Go); median of %d" % (
                    IDLE, RUNS),
                      [("peak RSS MB", "hwm", ".1f", "low"), ("KB per conn", "per", ".2f", "low"),
                       ("connect s", "secs", ".2f", None)], rows)
            sys.stdout.flush()
    print("\n# end: " + uptime())
    print("# ratios: below 1 means csp does better (less time, CPU, memory or latency; "
          "more requests/s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
