"""Spectral-norm beside spectral_norm.csp with Python's multiprocessing: the
same algorithm and N, run in the main process, then with every
matrix-vector product split over the same row chunks (one per worker) with
Pool(2).map, the pool started (and sent a first job) before the timing.
Usage: python3 spectral_norm.py [N]
"""
import math
import multiprocessing as mp
import sys
import time


def a(i, j):
    ij = i + j
    return 1.0 / (ij * (ij + 1) // 2 + i + 1)


def av(v, start, stop):
    """Rows start..stop (excluded) of A v."""
    n = len(v)
    out = []
    for i in range(start, stop):
        s = 0.0
        for j in range(n):
            s += a(i, j) * v[j]
        out.append(s)
    return out


def atv(v, start, stop):
    """Rows start..stop (excluded) of At v."""
    n = len(v)
    out = []
    for i in range(start, stop):
        s = 0.0
        for j in range(n):
            s += a(j, i) * v[j]
        out.append(s)
    return out


def job(args):
    f, v, start, stop = args
    return f(v, start, stop)


def product(f, v, pool, workers):
    """f over all the rows: here when pool is None, else one job per worker,
    the parts joined in order."""
    n = len(v)
    if pool is None:
        return f(v, 0, n)
    jobs = [(f, v, n * i // workers, n * (i + 1) // workers) for i in range(workers)]
    out = []
    for part in pool.map(job, jobs, chunksize=1):
        out.extend(part)
    return out


def norm(n, pool=None, workers=0):
    u = [1.0] * n
    v = []
    for _ in range(10):
        v = product(atv, product(av, u, pool, workers), pool, workers)
        u = product(atv, product(av, v, pool, workers), pool, workers)
    vbv = vv = 0.0
    for i in range(n):
        vbv += u[i] * v[i]
        vv += v[i] * v[i]
    return math.sqrt(vbv / vv)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 800
    workers = 2
    with mp.Pool(workers) as pool:
        norm(2, pool, workers)  # the workers start here, not in the timing
        t0 = time.perf_counter()
        serial = norm(n)
        t1 = time.perf_counter()
        parallel = norm(n, pool, workers)
        t2 = time.perf_counter()
    if serial != parallel:
        print("norms differ: %.9f %.9f" % (serial, parallel))
        sys.exit(1)
    print("spectral-norm %d: %.9f, serial %d ms, parallel %d ms, ratio %.3f"
          % (n, serial, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t2 - t1) / (t1 - t0)))


if __name__ == "__main__":
    main()
