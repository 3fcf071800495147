# thread_ring (Benchmarks Game): 503 asyncio tasks in a ring, a token passed 5,000,000 times.
# Chan (chanlib.py) is the rendezvous channel the asyncio peers share.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chanlib import Chan  # noqa: E402

FIBERS = 503
N = 5000000


async def worker(ident, inbox, nxt, result):
    while True:
        token = await inbox.recv()
        if token == 0:
            await result.send(ident)
            return
        await nxt.send(token - 1)


async def main():
    result = Chan()
    first = Chan()
    inbox = first
    tasks = []
    for ident in range(1, FIBERS + 1):
        nxt = first if ident == FIBERS else Chan()
        tasks.append(asyncio.create_task(worker(ident, inbox, nxt, result)))
        inbox = nxt
    await first.send(N)
    print(await result.recv())
    for t in tasks:  # the others are blocked forever; cancel them as csp does
        t.cancel()


asyncio.run(main())
