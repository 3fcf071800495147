#!/usr/bin/env python3
"""Hostile clients against csp's std/http server and Go's net/http (by hand,
not in CI; issue 37). Each attack runs against a fresh http_hello server of
each kind over loopback while a normal client asks GET / every 100 ms; a row
gives, per server, what the attacker saw (status line, or how the connection
ended), the normal client's worst latency during the attack, and the server's
resident set after it.

    benches/net/attack.py                 every attack, csp and go
    benches/net/attack.py slowloris smuggle
    CSP=path/to/csp benches/net/attack.py

Go's server is net/http's defaults (http.ListenAndServe: no timeouts).
"""
import os
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as harness  # noqa: E402  (Server, server_cmd, build_go)


def connect(addr, timeout=10):
    host, port = addr.split(":")
    s = socket.create_connection((host, int(port)), timeout=timeout)
    return s


def reply(s, limit=1 << 16):
    """What came back until the server stopped or went quiet for the timeout:
    the first status line and how many responses, or how it ended."""
    data = b""
    try:
        while len(data) < limit:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except socket.timeout:
        ended = "open"
    except ConnectionResetError:
        ended = "reset"
    else:
        ended = "closed"
    statuses = [line.split(b" ", 2)[1].decode() for line in data.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    if not statuses:
        return "no reply, " + ended
    more = " x%d" % len(statuses) if len(statuses) > 1 else ""
    return "%s%s, %s" % (statuses[0], more, ended)


def send_raw(addr, data, timeout=3):
    s = connect(addr, timeout)
    try:
        s.sendall(data)
    except OSError as e:
        return "send failed: %s" % e.strerror
    r = reply(s)
    s.close()
    return r


def slowloris(addr, kept_alive=False, conns=300, seconds=15):
    """CONNS connections each sending a header byte every 2 s: how many the
    server had closed when SECONDS were up."""
    socks = []
    for _ in range(conns):
        s = connect(addr)
        if kept_alive:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(4096)
        s.sendall(b"GET / HTTP/1.1\r\n")
        socks.append(s)
    closed = set()
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(2)
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                s.sendall(b"X")
                s.setblocking(False)
                try:
                    if s.recv(4096) == b"":
                        closed.add(i)
                except BlockingIOError:
                    pass
                s.setblocking(True)
            except OSError:
                closed.add(i)
    for s in socks:
        s.close()
    return "%d of %d closed in %ds" % (len(closed), conns, seconds)


def slow_body(addr, seconds=75):
    """A body of 1,000 bytes sent a byte every 2 s: when the server closes."""
    s = connect(addr)
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
    start = time.time()
    while time.time() - start < seconds:
        try:
            s.sendall(b"a")
            s.setblocking(False)
            try:
                if s.recv(4096) == b"":
                    raise OSError
            except BlockingIOError:
                pass
            s.setblocking(True)
        except OSError:
            return "closed after %.0fs" % (time.time() - start)
        time.sleep(2)
    s.close()
    return "open after %ds" % seconds


def pipelined(addr, n=10000):
    s = connect(addr, 10)
    start = time.time()
    threading.Thread(target=lambda: s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * n), daemon=True).start()
    data = b""
    while data.count(b"HTTP/1.1 200") < n:
        try:
            b = s.recv(1 << 20)
        except socket.timeout:
            break
        if not b:
            break
        data += b
    s.close()
    return "%d of %d answered in %.2fs" % (data.count(b"HTTP/1.1 200"), n, time.time() - start)


def simultaneous(addr, n=5000):
    socks, start = [], time.time()
    for _ in range(n):
        socks.append(connect(addr, 20))
    for s in socks:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    ok = sum(1 for s in socks if reply(s).startswith("200"))
    for s in socks:
        s.close()
    return "%d of %d served in %.2fs" % (ok, n, time.time() - start)


def never_reads(addr, n=200000):
    """Requests pipelined by a client that never reads a response: the server
    must stop reading (backpressure) rather than buffer every answer."""
    s = connect(addr, 5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sent = 0
    req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    s.settimeout(5)
    try:
        while sent < n:
            s.sendall(req * 100)
            sent += 100
    except (socket.timeout, OSError):
        pass
    s.close()
    return "%d requests sent before the server stopped reading" % sent


def big_body(addr, mb=2048):
    s = connect(addr, 10)
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (mb << 20))
    chunk, sent = b"a" * (1 << 20), 0
    try:
        for _ in range(mb):
            s.sendall(chunk)
            sent += 1
    except OSError:
        pass
    r = reply(s)
    s.close()
    return "%s after %d MB" % (r, sent)


CRLF = b"\r\n"
ATTACKS = {
    "slowloris": lambda a: slowloris(a),
    "slowloris-kept-alive": lambda a: slowloris(a, kept_alive=True, conns=100),
    "slow-body": slow_body,
    "huge-header-line": lambda a: send_raw(a, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (10 << 20) + CRLF * 2),
    "100k-headers": lambda a: send_raw(a, b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-H: v\r\n" * 100000 + CRLF),
    "bad-request-line": lambda a: send_raw(a, b"GARBAGE\r\n\r\n"),
    "conflicting-length": lambda a: send_raw(
        a, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde"),
    "negative-length": lambda a: send_raw(a, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
    "bad-chunked": lambda a: send_raw(
        a, b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
    "smuggle-cl-te": lambda a: send_raw(
        a, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"),
    "two-hosts": lambda a: send_raw(a, b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
    "te-gzip-chunked": lambda a: send_raw(
        a, b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
    "absolute-form": lambda a: send_raw(a, b"GET http://evil/ HTTP/1.1\r\nHost: x\r\n\r\n"),
    "10k-pipelined": pipelined,
    "5k-connections": simultaneous,
    "never-reads": never_reads,
    "2GB-body": big_body,
}


class Prober(threading.Thread):
    """The normal client: GET / on a new connection every 100 ms."""

    def __init__(self, addr):
        super().__init__(daemon=True)
        self.addr, self.worst, self.failed, self.stop = addr, 0.0, 0, False

    def run(self):
        while not self.stop:
            start = time.time()
            try:
                s = connect(self.addr, 5)
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if not reply(s).startswith("200"):
                    self.failed += 1
                s.close()
            except OSError:
                self.failed += 1
            self.worst = max(self.worst, time.time() - start)
            time.sleep(0.1)


def main():
    names = sys.argv[1:] or list(ATTACKS)
    for n in names:
        if n not in ATTACKS:
            sys.exit("error: no attack %r (have: %s)" % (n, " ".join(ATTACKS)))
    harness.raise_nofile()
    with tempfile.TemporaryDirectory() as tmp:
        gobin = harness.build_go(tmp, ["http"])
        print("| attack | csp | go net/http |\n|---|---|---|")
        for name in names:
            cells = []
            for peer in ("csp", "go"):
                cmd, env = harness.server_cmd(peer, "http", gobin)
                srv = harness.Server(cmd, env, peer)
                probe = Prober(srv.addr)
                probe.start()
                try:
                    seen = ATTACKS[name](srv.addr)
                except OSError as e:
                    seen = "attacker failed: %s" % e
                probe.stop = True
                probe.join()
                cells.append("%s; normal client worst %.0f ms%s; RSS %d MB" % (
                    seen, probe.worst * 1000, ", %d failed" % probe.failed if probe.failed else "",
                    srv.status("VmRSS") >> 10))
                srv.stop()
            print("| %s | %s | %s |" % (name, cells[0], cells[1]), flush=True)


if __name__ == "__main__":
    main()
