"""map_items.csp's pure function mapped over 10,000 items with Python's
multiprocessing: a list comprehension in the main process, then
Pool(2).map(f, xs, chunksize=1250) (the chunk size Pool.map picks itself
for 10,000 items on 2 workers), the pool started (and sent a first job)
before the timing. Usage: python3 map_items.py [ITEMS]
"""
import multiprocessing as mp
import sys
import time


def f(x):
    s = x
    for i in range(2000):
        s = (s * 31 + i) % 1000003
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    workers = 2
    xs = list(range(n))
    with mp.Pool(workers) as pool:
        pool.map(f, [1, 2], chunksize=1)  # the workers start here
        t0 = time.perf_counter()
        serial = [f(x) for x in xs]
        t1 = time.perf_counter()
        parallel = pool.map(f, xs, chunksize=max(1, -(-n // (4 * workers))))
        t2 = time.perf_counter()
    if serial != parallel:
        print("results differ")
        sys.exit(1)
    print("map %d items: sum %d, serial %d ms, parallel %d ms, ratio %.3f"
          % (n, sum(serial), (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t2 - t1) / (t1 - t0)))


if __name__ == "__main__":
    main()
