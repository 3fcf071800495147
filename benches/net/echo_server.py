"""TCP echo server (asyncio streams): a task per connection, echoing each chunk
of up to 64 bytes as it comes. Usage: python3 echo_server.py HOST:PORT"""
import asyncio
import sys


async def handle(reader, writer):
    try:
        while True:
            b = await reader.read(64)
            if not b:
                break
            writer.write(b)
            await writer.drain()
    except ConnectionError:
        pass
    writer.close()


async def main():
    host, port = sys.argv[1].rsplit(":", 1)
    server = await asyncio.start_server(handle, host, int(port), backlog=1024)
    await server.serve_forever()


asyncio.run(main())
