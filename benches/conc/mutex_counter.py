# mutex_counter: 1000 asyncio tasks × 1000 increments of a shared counter under an
# asyncio.Lock, with `await asyncio.sleep(0)` inside the critical section.
import asyncio

FIBERS = 1000
INCREMENTS = 1000

counter = 0


async def worker(m):
    global counter
    for _ in range(INCREMENTS):
        async with m:
            v = counter
            await asyncio.sleep(0)
            counter = v + 1


async def main():
    m = asyncio.Lock()
    await asyncio.gather(*(worker(m) for _ in range(FIBERS)))
    print(counter)


asyncio.run(main())
