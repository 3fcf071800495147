# prime_sieve: Go's classic concurrent prime sieve with asyncio tasks; prints the 2000th prime.
# Chan (chanlib.py) is the rendezvous channel the asyncio peers share.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chanlib import Chan  # noqa: E402

COUNT = 2000


async def generate(out):
    i = 2
    while True:
        await out.send(i)
        i += 1


async def filter_(inp, out, prime):
    while True:
        i = await inp.recv()
        if i % prime != 0:
            await out.send(i)


async def main():
    tasks = []
    ch = Chan()
    tasks.append(asyncio.create_task(generate(ch)))
    prime = 0
    for _ in range(COUNT):
        prime = await ch.recv()
        nxt = Chan()
        tasks.append(asyncio.create_task(filter_(ch, nxt, prime)))
        ch = nxt
    print(prime)
    for t in tasks:  # the others are blocked forever; cancel them as csp does
        t.cancel()


asyncio.run(main())
