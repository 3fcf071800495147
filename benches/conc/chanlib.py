"""The rendezvous channel the asyncio peers share: unbuffered, closable."""
import asyncio
from collections import deque


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
