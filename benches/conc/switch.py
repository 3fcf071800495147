# switch: two asyncio tasks alternate with `await asyncio.sleep(0)`, 500,000 each.
import asyncio

PER_FIBER = 500000
switches = 0


async def bouncer():
    global switches
    for _ in range(PER_FIBER):
        switches += 1
        await asyncio.sleep(0)


async def main():
    await asyncio.gather(bouncer(), bouncer())
    print(switches)


asyncio.run(main())
