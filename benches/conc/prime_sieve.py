# prime_sieve: Go's classic concurrent prime sieve with asyncio tasks; prints the 2000th prime.
# Chan is a minimal unbuffered (rendezvous) channel over futures.
import asyncio
from collections import deque

COUNT = 2000


class Chan:
    __slots__ = ("senders", "receivers")

    def __init__(self):
        self.senders = deque()    # (value, future) of blocked senders
        self.receivers = deque()  # futures of blocked receivers

    async def send(self, v):
        if self.receivers:
            self.receivers.popleft().set_result(v)
            return
        fut = asyncio.get_running_loop().create_future()
        self.senders.append((v, fut))
        await fut

    async def recv(self):
        if self.senders:
            v, fut = self.senders.popleft()
            fut.set_result(None)
            return v
        fut = asyncio.get_running_loop().create_future()
        self.receivers.append(fut)
        return await fut


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
