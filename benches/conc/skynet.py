# skynet: a 10-ary tree of asyncio tasks, 1,000,000 leaves; sums flow up unbuffered channels.
# Chan (chanlib.py) is the rendezvous channel the asyncio peers share.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chanlib import Chan  # noqa: E402

SIZE = 1000000
DIV = 10


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
