"""HTTP hello world on asyncio streams: a minimal hand-written HTTP/1.1
keep-alive responder (no aiohttp: it is not in the standard library). It reads
each request's head, skips a Content-Length body, and answers 200 text/plain;
"Connection: close" or HTTP/1.0 without keep-alive ends the connection.
Usage: python3 http_hello.py HOST:PORT"""
import asyncio
import sys

BODY = b"Hello, World!"
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Content-Length: %d\r\n\r\n" % len(BODY)) + BODY


async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            keep = not lines[0].endswith("HTTP/1.0")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name, value = name.strip().lower(), value.strip().lower()
                if name == "content-length":
                    length = int(value)
                elif name == "connection":
                    keep = value == "keep-alive" if not keep else value != "close"
            if length:
                await reader.readexactly(length)
            writer.write(RESPONSE)
            await writer.drain()
            if not keep:
                break
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    writer.close()


async def main():
    host, port = sys.argv[1].rsplit(":", 1)
    server = await asyncio.start_server(handle, host, int(port), backlog=1024)
    await server.serve_forever()


asyncio.run(main())
