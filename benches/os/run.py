#!/usr/bin/env python3
"""OS benchmarks: csp beside Go (GOMAXPROCS=1), Python 3 and Node, in one run.

    benches/os/run.sh                     spawn, grep and walk, 3 runs each
    RUNS=5 GB=0.1 benches/os/run.sh grep  only grep, on a 100 MB file

Generates the data once in a temporary directory (removed at the end): a text
file of GB gigabytes for grep, a tree of FILES files for walk. Each benchmark's
runs alternate between the peers (forwards, then backwards), so drift of a noisy
machine hits them alike. Every peer must print the same text; a difference or a
failed run is reported with '!!!' and makes the script exit 1 after the table.
"""
import difflib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ALL = ["spawn", "grep", "walk"]
PEERS = ["csp", "go1", "python", "node"]
WORD = "needle"
# The issues' goals: (max csp/go1, must csp beat python, max csp peak RSS in MB).
# grep's was 1.5x when the OS layer was built; issue 40 asks for 1.2x.
GOALS = {"spawn": (1.2, False, None), "grep": (1.2, True, 20), "walk": (1.2, False, None)}


def env_num(name, default, kind=float):
    try:
        v = kind(os.environ.get(name, default))
        if v <= 0:
            raise ValueError
        return v
    except ValueError:
        sys.exit("error: %s must be a positive number, got %r" % (name, os.environ.get(name)))


RUNS = env_num("RUNS", "3", int)
GB = env_num("GB", "1")
FILES = env_num("FILES", "100000", int)
TIMEOUT = env_num("TIMEOUT", "600")
CSP = os.environ.get("CSP", os.path.join(ROOT, "target/release/csp"))
GO = os.environ.get("GO", "go")
NODE = os.environ.get("NODE", "node")
PYTHON = os.environ.get("PYTHON", "python3")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def make_text(path, size):
    """About SIZE bytes of lines of 0 to ~150 characters made of words; about 2 %
    of them contain WORD. An 8 MB block of distinct lines is repeated."""
    rnd = random.Random(7)
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(1, 10)))
             for _ in range(5000)]
    vocab = [w for w in vocab if WORD not in w]
    lines, n = [], 0
    while n < 8 << 20:
        words = [rnd.choice(vocab) for _ in range(rnd.choice([0, 1, 3, 6, 10, 15, 25]))]
        if rnd.random() < 0.02:
            words.insert(rnd.randint(0, len(words)), rnd.choice([WORD, WORD + "s", "x" + WORD]))
        if rnd.random() < 0.0005:
            words = words * 40  # now and then a long line (a few KB)
        line = " ".join(words) + "\n"
        lines.append(line)
        n += len(line)
    block = "".join(lines).encode()
    with open(path, "wb") as f:
        written = 0
        while written + len(block) <= size:
            f.write(block)
            written += len(block)
        rest = block[: size - written]
        f.write(rest[: rest.rfind(b"\n") + 1])


def make_tree(root, count):
    """COUNT files of 0 to 999 bytes, 100 to a directory, the directories nested
    three deep (10 x 10 x 10 for 100,000 files); a symbolic link to its parent in
    every top directory, which a walk must list but not follow."""
    for j in range(count):
        leaf = j // 100
        d = os.path.join(root, "d%d" % (leaf // 100), "e%d" % (leaf // 10 % 10), "f%d" % (leaf % 10))
        if j % 100 == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "file%03d.txt" % (j % 100)), "wb") as f:
            f.write(b"x" * (j * 37 % 1000))
    for top in os.listdir(root):
        os.symlink("..", os.path.join(root, top, "up"))


def build_go(tmp, benches):
    """Compiles each NAME.go once (go run would time the compiler); {name: exe}."""
    if not shutil.which(GO):
        log("warning: %s not found (apt-get install -y golang-go); skipping Go" % GO)
        return {}
    env = dict(os.environ, GOCACHE=os.path.join(tmp, "gocache"), GOPATH=os.path.join(tmp, "gopath"),
               GO111MODULE="off")
    exes = {}
    for b in benches:
        exe = os.path.join(tmp, "go", b)
        log("building %s.go ..." % b)
        p = subprocess.run([GO, "build", "-o", exe, b + ".go"], cwd=HERE, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            log("!!! go build %s.go failed:\n%s" % (b, p.stdout))
        else:
            exes[b] = exe
    return exes


def commands(b, data, goexe):
    """{peer: (argv, env)} for benchmark B."""
    args = {"spawn": [], "grep": [data["grep"], WORD], "walk": [data["walk"]]}[b]
    env = {k: v for k, v in os.environ.items() if k != "GOMAXPROCS"}
    src = lambda ext: os.path.join(HERE, b + ext)
    cmds = {}
    if os.access(CSP, os.X_OK):
        cmds["csp"] = ([CSP, "run", src(".csp")] + args, env)
    if b in goexe:
        cmds["go1"] = ([goexe[b]] + args, dict(env, GOMAXPROCS="1"))
    if shutil.which(PYTHON):
        cmds["python"] = ([PYTHON, src(".py")] + args, env)
    if shutil.which(NODE):
        cmds["node"] = ([NODE, src(".js")] + args, env)
    return cmds


TIME = "/usr/bin/time"


def run_once(argv, env, tmp):
    """(wall seconds, peak RSS in KiB, exit status, stdout, stderr, timed out).
    The peak RSS comes from /usr/bin/time -f %M when it is there: a child's own
    ru_maxrss (wait4) starts at this script's size, as its fork shares our pages."""
    out_f, err_f, rss_f = (os.path.join(tmp, n) for n in ("out", "err", "rss"))
    timed = os.access(TIME, os.X_OK)
    if timed:
        argv = [TIME, "-o", rss_f, "-f", "%M"] + argv
    with open(out_f, "wb") as out, open(err_f, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)
        timed_out = []
        timer = threading.Timer(TIMEOUT, lambda: (timed_out.append(1), os.killpg(p.pid, 9)))
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss
    if timed and p.returncode == 0:
        with open(rss_f) as r:
            rss = int(r.read().split()[-1])
    with open(out_f) as o, open(err_f) as e:
        return wall, rss, p.returncode, o.read(), e.read(), bool(timed_out)


def measure(b, cmds, tmp):
    """{peer: {"time", "rss", "out"} or None if it failed}; runs alternate."""
    runs = {p: [] for p in cmds}
    failed = set()
    order = [p for p in PEERS if p in cmds]
    for i in range(RUNS):
        for peer in order if i % 2 == 0 else order[::-1]:
            if peer in failed:
                continue
            argv, env = cmds[peer]
            wall, rss, rc, out, err, timed_out = run_once(argv, env, tmp)
            if rc != 0 or timed_out:
                why = "timed out after %gs" % TIMEOUT if timed_out else "exited with %d" % rc
                log("!!! %s %s %s; stderr:" % (b, peer, why))
                for line in err.splitlines()[:20]:
                    log("    " + line)
                failed.add(peer)
                continue
            runs[peer].append((wall, rss, out))
    res = {}
    for p, rs in runs.items():
        if p in failed:
            res[p] = None
        else:
            res[p] = {"time": statistics.median(r[0] for r in rs), "rss": max(r[1] for r in rs) / 1024,
                      "out": rs[0][2], "outs": {r[2] for r in rs}}
    return res


def check(b, res):
    """Reports differing outputs; True if all agree."""
    ok = [(p, r) for p, r in res.items() if r is not None]
    good = all(r is not None for r in res.values())
    for p, r in ok:
        if len(r["outs"]) > 1:
            log("!!! %s %s printed different text in different runs" % (b, p))
            good = False
    if ok:
        ref_p, ref = ok[0]
        for p, r in ok[1:]:
            if r["out"] != ref["out"]:
                log("!!! OUTPUT MISMATCH in %s: %s differs from %s" % (b, p, ref_p))
                diff = difflib.unified_diff(ref["out"].splitlines(), r["out"].splitlines(), ref_p, p, lineterm="")
                for line in list(diff)[:20]:
                    log("    " + line)
                good = False
    return good


def main():
    benches = sys.argv[1:] or ALL
    for b in benches:
        if b not in ALL:
            sys.exit("error: no benchmark %r (choose from %s)" % (b, " ".join(ALL)))
    if not os.access(CSP, os.X_OK):
        log("warning: csp binary %r not found (build with: cargo build --release); timing peers only" % CSP)
    tmp = tempfile.mkdtemp(prefix="csp-os-bench-")
    try:
        return run(benches, tmp)
    finally:
        log("removing %s ..." % tmp)
        shutil.rmtree(tmp, ignore_errors=True)


def run(benches, tmp):
    data = {"grep": os.path.join(tmp, "lines.txt"), "walk": os.path.join(tmp, "tree")}
    if "grep" in benches:
        log("writing %.2f GB of lines ..." % GB)
        make_text(data["grep"], int(GB * 1e9))
    if "walk" in benches:
        log("writing a tree of %d files ..." % FILES)
        os.mkdir(data["walk"])
        make_tree(data["walk"], FILES)
    goexe = build_go(tmp, benches)
    good = True
    table = []
    for b in benches:
        log("running %s ..." % b)
        res = measure(b, commands(b, data, goexe), tmp)
        good &= check(b, res)
        table.append((b, res))
    print_table(table)
    if not good:
        log("\n!!! FAILURES: some outputs differ or some runs failed (see messages above)")
    return 0 if good else 1


def print_table(table):
    t = lambda res, p: res[p]["time"] if res.get(p) else None
    fmt = lambda x, spec="%.3f": "-" if x is None else spec % x
    div = lambda a, b: a / b if a is not None and b else None
    head = ["benchmark", "csp s", "go1 s", "python s", "node s", "csp/go1", "csp/py",
            "csp MB", "go1 MB", "py MB", "node MB"]
    widths = [10, 8, 8, 9, 8, 8, 7, 7, 7, 7, 8]
    line = lambda cells: " ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print()
    print(line(head))
    for b, res in table:
        times = [t(res, p) for p in PEERS]
        rss = [res[p]["rss"] if res.get(p) else None for p in PEERS]
        print(line([b] + [fmt(x) for x in times] + [fmt(div(times[0], times[1]), "%.2f"),
                   fmt(div(times[0], times[2]), "%.2f")] + [fmt(x, "%.1f") for x in rss]))
    print()
    print("median of %d runs each (seconds, wall clock, alternating peers); MB = peak RSS, the most of any run"
          % RUNS)
    what = {"spawn": "spawn: 2,000 x true, 16 at once", "grep": "grep: %.2f GB, word %r" % (GB, WORD),
            "walk": "walk: %d files" % FILES}
    print("go1 = Go with GOMAXPROCS=1; " + "; ".join(what[b] for b, _ in table))
    for b, res in table:
        max_go, beat_py, max_mb = GOALS[b]
        csp, go1, py = t(res, "csp"), t(res, "go1"), t(res, "python")
        if csp is None:
            continue
        parts = []
        if go1:
            parts.append("csp/go1 %.2f (goal <= %.1f: %s)" % (csp / go1, max_go, "met" if csp / go1 <= max_go else "MISSED"))
        if beat_py and py:
            parts.append("faster than python: %s" % ("yes" if csp < py else "NO"))
        if max_mb:
            mb = res["csp"]["rss"]
            parts.append("peak RSS %.1f MB (goal < %d: %s)" % (mb, max_mb, "met" if mb < max_mb else "MISSED"))
        print("goal %-6s %s" % (b, "; ".join(parts)))


if __name__ == "__main__":
    sys.exit(main())
