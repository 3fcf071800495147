# thread_ring (Benchmarks Game): 503 asyncio tasks in a ring, a token passed 5,000,000 times.
# Chan is a minimal unbuffered (rendezvous) channel over futures.
import asyncio
from collections import deque

FIBERS = 503
N = 5000000


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
