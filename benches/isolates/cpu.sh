#!/bin/sh
# CPU-bound work on 2 workers beside Go (goroutines, GOMAXPROCS=2 and =1),
# Node (worker_threads) and Python (multiprocessing): mandelbrot, spectral-norm
# and a pure function mapped over 10,000 items. Each program computes its
# result serially, then in parallel, checks the two are equal and prints both
# times and their ratio (parallel / serial); each line below is one run,
# prefixed with the language, and runs alternate between languages. Ends with
# the medians per benchmark and language. Exits 1 if any program fails.
# Usage: benches/isolates/cpu.sh [RUNS]   (CSP=path/to/csp to pick the binary)
set -e
here=$(dirname "$0")
csp=${CSP:-$here/../../target/release/csp}
runs=${1:-3}
benches="mandelbrot spectral_norm map_items"
for b in $benches; do
    go build -o "/tmp/csp_bench_cpu_${b}_go" "$here/$b.go"
done
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0

# one LANG COMMAND...: runs a program, prints its line after LANG and keeps
# it for the medians; a failure is reported and remembered.
one() {
    lang=$1
    shift
    if out=$("$@" 2>&1); then
        printf '%s %s\n' "$lang" "$out"
        printf '%s\t%s\n' "$lang" "$out" >>"$results"
    else
        printf '%s FAILED (%s): %s\n' "$lang" "$*" "$out"
        status=1
    fi
}

i=0
while [ "$i" -lt "$runs" ]; do
    for b in $benches; do
        one csp "$csp" run "$here/$b.csp"
        one 'go P2' env GOMAXPROCS=2 "/tmp/csp_bench_cpu_${b}_go"
        one 'go P1' env GOMAXPROCS=1 "/tmp/csp_bench_cpu_${b}_go"
        one node node "$here/$b.js"
        one python python3 "$here/$b.py"
    done
    i=$((i + 1))
done

python3 - "$results" <<'PY'
import re
import statistics
import sys

line = re.compile(r"^(.*?)\t(\S+) .*serial (\d+) ms, parallel (\d+) ms, ratio ([\d.]+)$")
runs = {}
for text in open(sys.argv[1]):
    m = line.match(text.rstrip("\n"))
    if m:
        lang, bench = m.group(1), m.group(2)
        runs.setdefault((bench, lang), []).append([float(x) for x in m.group(3, 4, 5)])
print()
print("| benchmark | language | serial ms | parallel ms | ratio (median) | ratios |")
print("|---|---|---|---|---|---|")
for (bench, lang), rs in runs.items():
    med = [statistics.median(r[k] for r in rs) for k in range(3)]
    ratios = ", ".join("%.3f" % r[2] for r in sorted(rs, key=lambda r: r[2]))
    print("| %s | %s | %d | %d | %.3f | %s |" % (bench, lang, med[0], med[1], med[2], ratios))
PY
exit $status
