#!/bin/sh
# Messages between isolates beside Go (goroutines, GOMAXPROCS=2 and =1), Node
# (worker_threads) and Python (multiprocessing): round trips, streamed values,
# a 1,000-item list of maps there and back, a worker's start and memory.
# Runs alternate between them. Usage: benches/isolates/compare.sh [RUNS] [N]
set -e
here=$(dirname "$0")
csp=${CSP:-$here/../../target/release/csp}
runs=${1:-3}
n=${2:-20000}
go build -o /tmp/csp_bench_messages_go "$here/messages.go"
i=0
while [ "$i" -lt "$runs" ]; do
    printf 'csp channels: %s\n' "$("$csp" run "$here/chan_roundtrip.csp" "$n")"
    printf 'csp jobs: %s\n' "$("$csp" run "$here/roundtrip.csp" "$n")"
    printf 'csp start: %s\n' "$("$csp" --isolates 1 run "$here/startup.csp")"
    printf 'node: %s\n' "$(node "$here/messages.js" "$n")"
    printf 'python: %s\n' "$(python3 "$here/messages.py" "$n")"
    printf 'go GOMAXPROCS=2: %s\n' "$(GOMAXPROCS=2 /tmp/csp_bench_messages_go "$n")"
    printf 'go GOMAXPROCS=1: %s\n' "$(GOMAXPROCS=1 /tmp/csp_bench_messages_go "$n")"
    i=$((i + 1))
done
# Resident memory per worker: peak RSS with 16 workers against 1, over 15.
one=$(/usr/bin/time -f %M "$csp" --isolates 1 run "$here/startup.csp" 2>&1 >/dev/null)
many=$(/usr/bin/time -f %M "$csp" --isolates 16 run "$here/startup.csp" 2>&1 >/dev/null)
echo "csp memory: 1 worker ${one} KB, 16 workers ${many} KB: $(( (many - one) / 15 )) KB per worker"
nodeone=$(/usr/bin/time -f %M node -e "require('worker_threads')" 2>&1)
nodew=$(/usr/bin/time -f %M node "$here/messages.js" 1 2>&1 >/dev/null)
echo "node memory: no worker ${nodeone} KB, one worker ${nodew} KB"
