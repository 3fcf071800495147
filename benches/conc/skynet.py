# skynet: a 10-ary tree of asyncio tasks, 1,000,000 leaves; sums flow up unbuffered channels.
# Chan is a minimal unbuffered (rendezvous) channel over futures.
import asyncio
from collections import deque

SIZE = 1000000
DIV = 10


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


async def skynet(out, num, size):
    if size == 1:
        await out.send(num)
        return
    rc = Chan()
    sub = size // DIV
    for i in range(DIV):
        asyncio.create_task(skynet(rc, num + i * sub, sub))
    total = 0
    for _ in range(DIV):
        total += await rc.recv()
    await out.send(total)


async def main():
    c = Chan()
    t = asyncio.create_task(skynet(c, 0, SIZE))
    print(await c.recv())
    await t


asyncio.run(main())
