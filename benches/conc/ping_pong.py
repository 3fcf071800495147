# ping_pong: 500,000 round trips over two unbuffered channels between two asyncio tasks.
# Chan is a minimal unbuffered (rendezvous) channel over futures.
import asyncio
from collections import deque

N = 500000


class Chan:
    __slots__ = ("senders", "receivers", "closed")

    def __init__(self):
        self.senders = deque()    # (value, future) of blocked senders
        self.receivers = deque()  # futures of blocked receivers
        self.closed = False

    async def send(self, v):
        if self.receivers:
            self.receivers.popleft().set_result(v)
            return
        fut = asyncio.get_running_loop().create_future()
        self.senders.append((v, fut))
        await fut

    async def recv(self):  # None once closed and drained
        if self.senders:
            v, fut = self.senders.popleft()
            fut.set_result(None)
            return v
        if self.closed:
            return None
        fut = asyncio.get_running_loop().create_future()
        self.receivers.append(fut)
        return await fut

    def close(self):
        self.closed = True
        while self.receivers:
            self.receivers.popleft().set_result(None)


async def ponger(ping, pong):
    while True:
        v = await ping.recv()
        if v is None:
            return
        await pong.send(v + 1)


async def main():
    ping, pong = Chan(), Chan()
    t = asyncio.create_task(ponger(ping, pong))
    n = 0
    for _ in range(N):
        await ping.send(n)
        n = await pong.recv()
    ping.close()
    await t
    print(n)


asyncio.run(main())
