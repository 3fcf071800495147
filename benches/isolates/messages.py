"""Python's multiprocessing beside chan_roundtrip.csp and roundtrip.csp: N
round trips of a small message with a worker process over two Queues, N
values streamed one way through a Queue (the worker counts them), a
1,000-item list of maps there and back, and a worker's start (Process.start
until its first message). Prints microseconds. Usage: python3 messages.py [N]
"""
import multiprocessing as mp
import sys
import time


def worker(inq, outq):
    outq.put("ready")
    count = 0
    while True:
        kind, v = inq.get()
        if kind == "echo" or kind == "rows":
            outq.put(v)
        elif kind == "value":
            count += 1
        elif kind == "end":
            outq.put(count)
            count = 0
        else:
            return


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    inq, outq = mp.Queue(), mp.Queue()
    t = time.perf_counter()
    p = mp.Process(target=worker, args=(inq, outq))
    p.start()
    outq.get()
    start = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(n):
        inq.put(("echo", i))
        outq.get()
    rt = (time.perf_counter() - t) / n * 1e6
    t = time.perf_counter()
    for i in range(n):
        inq.put(("value", i))
    inq.put(("end", None))
    outq.get()
    stream = (time.perf_counter() - t) / n * 1e6
    rows = [{"id": i, "name": "row %d" % i, "tags": ["a", "b"]} for i in range(1000)]
    m = max(1, n // 100)
    t = time.perf_counter()
    for i in range(m):
        inq.put(("rows", rows))
        outq.get()
    maps = (time.perf_counter() - t) / m * 1e6
    inq.put(("stop", None))
    p.join()
    print("round trip %.2f us, streamed %.2f us/value, 1,000 maps there and back %.2f us, worker start %.2f ms"
          % (rt, stream, maps, start * 1e3))


if __name__ == "__main__":
    main()
