"""Mandelbrot beside mandelbrot.csp with Python's multiprocessing: the same
grid and iterations, counted in the main process, then over the same row
chunks (2 per worker) with Pool(2).map, the pool started (and sent a first
job) before the timing. Usage: python3 mandelbrot.py [N]
"""
import multiprocessing as mp
import sys
import time


def rows(n, start, stop):
    """The points of rows start..stop (excluded) that stay bounded."""
    count = 0
    for y in range(start, stop):
        ci = 2.0 * y / n - 1.0
        for x in range(n):
            cr = 2.0 * x / n - 1.5
            zr = zi = 0.0
            inside = 1
            for _ in range(50):
                zr2 = zr * zr
                zi2 = zi * zi
                if zr2 + zi2 > 4.0:
                    inside = 0
                    break
                zi = 2.0 * zr * zi + ci
                zr = zr2 - zi2 + cr
            count += inside
    return count


def chunk(c):
    return rows(*c)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1200
    workers = 2
    parts = 2 * workers
    chunks = [(n, n * i // parts, n * (i + 1) // parts) for i in range(parts)]
    with mp.Pool(workers) as pool:
        pool.map(chunk, [(2, 0, 1)] * workers, chunksize=1)  # the workers start here
        t0 = time.perf_counter()
        serial = rows(n, 0, n)
        t1 = time.perf_counter()
        parallel = sum(pool.map(chunk, chunks, chunksize=1))
        t2 = time.perf_counter()
    if serial != parallel:
        print("counts differ: %d %d" % (serial, parallel))
        sys.exit(1)
    print("mandelbrot %d: %d points, serial %d ms, parallel %d ms, ratio %.3f"
          % (n, serial, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t2 - t1) / (t1 - t0)))


if __name__ == "__main__":
    main()
