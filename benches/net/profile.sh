#!/usr/bin/env bash
# System calls and CPU per round trip of the echo benchmark, per server, counted
# with `perf stat` on syscall tracepoints (no ptrace: strace -c slows the server
# so much that reads rarely find the socket empty, which changes the counts).
#
#   benches/net/profile.sh                      csp, go1, go, node; 100 x 2000
#   CONNS=10 ROUNDS=1000 benches/net/profile.sh csp go1
#
# Prints, per server: CPU µs per round trip (user + system), then read, write,
# epoll_ctl, epoll_wait(+pwait) and all system calls per round trip. Needs perf
# with access to the syscalls tracepoints (root, or perf_event_paranoid <= -1).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CSP="${CSP:-$root/target/release/csp}"
CONNS="${CONNS:-100}"
ROUNDS="${ROUNDS:-2000}"
GO="${GO:-go}"
NODE="${NODE:-node}"
PYTHON="${PYTHON:-python3}"
servers=("$@")
[[ ${#servers[@]} -gt 0 ]] || servers=(csp go1 go node)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for n in echo_client echo_server; do
    (cd "$here" && GO111MODULE=off "$GO" build -o "$tmp/$n" "$n.go")
done

events=task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_write
events+=,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "# $(uptime)"
echo "# $CONNS connections x $ROUNDS round trips; per round trip:"
printf '%-8s %10s %8s %8s %10s %10s %10s\n' server "CPU us" read write epoll_ctl epoll_wait syscalls
for s in "${servers[@]}"; do
    env=(env -u GOMAXPROCS)
    case "$s" in
        csp) cmd=("$CSP" run "$here/echo.csp") ;;
        go1) cmd=("$tmp/echo_server"); env=(env GOMAXPROCS=1) ;;
        go) cmd=("$tmp/echo_server") ;;
        node) cmd=("$NODE" "$here/echo_server.js") ;;
        python) cmd=("$PYTHON" "$here/echo_server.py") ;;
        *) echo "error: no server '$s' (csp go1 go node python)" >&2; exit 64 ;;
    esac
    port="$(free_port)"
    "${env[@]}" perf stat -x, -e "$events" -o "$tmp/$s.perf" -- "${cmd[@]}" "127.0.0.1:$port" &
    perf_pid=$!
    python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit("server never accepted")
PY
    GOMAXPROCS=1 "$tmp/echo_client" "127.0.0.1:$port" "$CONNS" "$ROUNDS" >/dev/null
    kill -TERM "$(pgrep -P "$perf_pid")"
    wait "$perf_pid" || true
    python3 - "$tmp/$s.perf" "$s" "$((CONNS * ROUNDS))" <<'PY'
import sys
path, name, rt = sys.argv[1], sys.argv[2], int(sys.argv[3])
v = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[0].replace(".", "").isdigit():
        v[f[2]] = float(f[0])
get = lambda k: v.get(k, 0.0) / rt
print("%-8s %10.2f %8.2f %8.2f %10.2f %10.2f %10.2f" % (
    name, v.get("task-clock", 0) * 1000 / rt, get("syscalls:sys_enter_read"),
    get("syscalls:sys_enter_write"), get("syscalls:sys_enter_epoll_ctl"),
    get("syscalls:sys_enter_epoll_wait") + get("syscalls:sys_enter_epoll_pwait"),
    get("raw_syscalls:sys_enter")))
PY
done
