# ping_pong: 500,000 round trips over two unbuffered channels between two asyncio tasks.
# Chan (chanlib.py) is the rendezvous channel the asyncio peers share.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chanlib import Chan  # noqa: E402

N = 500000


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
