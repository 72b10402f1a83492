"""The stdio transport of `assistant mcp serve`: JSON-RPC lines in on stdin, out on stdout.

Guards the protocol stream, which a stray byte would corrupt:
- stdout carries nothing but protocol messages. `claim_stdout()` runs before anything else:
  it keeps a private duplicate of fd 1 for the protocol and points fd 1 (and `sys.stdout`) at
  stderr, so a print, a library's warning or a C library writing to fd 1 lands on stderr.
- every incoming line is bounded (`max_line` bytes): a longer one is read through and dropped
  (never held in memory whole) and answered with an error naming the limit;
- a line that is not a JSON-RPC message (not UTF-8, not JSON, not a request, notification or
  response) is answered with a JSON-RPC error (and the door is told, `on_bad_line`, to say so on
  stderr in words) (parse error or invalid request, with the
  message's id when one can be found and written as UTF-8, else id null; a request whose id
  is neither a string nor an integer is invalid) and the server reads on; nothing from the bad
  line is echoed back, and no one message, however malformed, ends the server;
- the end of input (the client closed the pipe, or died) is reported once through `on_eof`
  *before* the SDK sees the stream end, so calls waiting for an approval are closed as denied.

The SDK (mcp.server.lowlevel.Server) reads and writes the two memory streams this yields,
exactly as it does with its own `mcp.server.stdio.stdio_server`, which has no line bound and
answers garbage with an uninformative log notification.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator, Callable

import anyio
import anyio.to_thread
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

DRAIN_CHUNK = 64 * 1024
SNIFF_BYTES = 4096          # of an oversized line, looked at for its id
_ID_BEFORE_PARAMS = re.compile(rb'^\s*\{(?:(?!"params")[^{}\[\]])*?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,64}")')


def claim_stdout() -> int:
    """Keep the real stdout for the protocol (returned as a private fd) and send everything
    else written to fd 1 or sys.stdout to stderr from now on."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    protocol = os.dup(1)
    os.set_inheritable(protocol, False)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


@dataclass(frozen=True)
class Line:
    """One line from stdin: its bytes (without the line break), or `too_long` (then `data`
    holds only its first SNIFF_BYTES)."""

    data: bytes
    too_long: bool = False


class LineReader:
    """Bounded lines from a file descriptor (blocking; run it in a worker thread)."""

    def __init__(self, fd: int, max_line: int) -> None:
        self.max_line = max_line
        self.file = os.fdopen(fd, "rb", buffering=DRAIN_CHUNK, closefd=False)

    def next(self) -> Line | None:
        """The next line, or None at the end of input."""
        line = self.file.readline(self.max_line + 1)
        if not line:
            return None
        if line.endswith(b"\n"):
            return Line(line.rstrip(b"\r\n"))
        if len(line) <= self.max_line:
            return Line(line.rstrip(b"\r"))      # the last line, without a line break
        head = line[:SNIFF_BYTES]
        while line and not line.endswith(b"\n"):   # read through the rest of it, keeping nothing
            line = self.file.readline(DRAIN_CHUNK)
        return Line(head, too_long=True)


def error_line(request_id: str | int | None, code: int, message: str) -> bytes:
    """One JSON-RPC error response (id null when the message's id is unknown, or cannot be
    written as UTF-8: a string id holding a lone surrogate)."""
    def line(rid: str | int | None) -> bytes:
        return (json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}},
                           ensure_ascii=False) + "\n").encode("utf-8")
    try:
        return line(request_id)
    except UnicodeEncodeError:
        return line(None)


def _valid_id(value: object) -> str | int | None:
    """A JSON-RPC id (a string or an integer) that can be echoed back, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and len(value) <= 64:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None           # a lone surrogate: legal JSON, not writable as UTF-8
        return value
    return None


def _sniff_id(head: bytes) -> str | int | None:
    """The top-level id of a message cut short, when it comes before its params."""
    m = _ID_BEFORE_PARAMS.match(head)
    if m is None:
        return None
    try:
        return _valid_id(json.loads(m.group(1)))
    except ValueError:
        return None


def parse(line: Line, max_line: int) -> SessionMessage | bytes | None:
    """A protocol message, or the error line to answer with, or None for a blank line."""
    if line.too_long:
        return error_line(_sniff_id(line.data), types.INVALID_REQUEST,
                          f"message too large: over {max_line} bytes; it was dropped unread, "
                          "nothing was done")
    if not line.data.strip():
        return None
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return error_line(None, types.PARSE_ERROR, f"parse error: the message is not UTF-8 (byte {exc.start})")
    try:
        message = types.JSONRPCMessage.model_validate_json(text)
    except Exception:  # noqa: BLE001 - pydantic's error would echo the input; say it in our words
        pass
    else:
        if isinstance(message.root, types.JSONRPCNotification) and "id" in (message.root.model_extra or {}):
            # The SDK's model reads a request whose id is no JSON-RPC id (true, 1e3, null) as a
            # notification with an extra field, and would never answer it.
            return error_line(None, types.INVALID_REQUEST,
                              "invalid request: the id must be a string or an integer")
        return SessionMessage(message)
    try:
        doc = json.loads(text)
    except RecursionError:
        return error_line(None, types.PARSE_ERROR, "parse error: the message is nested too deeply")
    except ValueError as exc:
        where = f" (line {exc.lineno} column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        return error_line(None, types.PARSE_ERROR, f"parse error: the message is not JSON{where}")
    request_id = _valid_id(doc.get("id")) if isinstance(doc, dict) else None
    return error_line(request_id, types.INVALID_REQUEST,
                      "invalid request: not a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\" "
                      "and a method, or a result or error for an id; batches are not supported)")


def _goes_on(item: SessionMessage, on_cancel: Callable[[str | int], bool]) -> bool:
    """False for a notifications/cancelled that `on_cancel` declines (too late to cancel)."""
    root = item.message.root
    if not isinstance(root, types.JSONRPCNotification) or root.method != "notifications/cancelled":
        return True
    request_id = _valid_id((root.params or {}).get("requestId"))
    return request_id is None or on_cancel(request_id)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


@asynccontextmanager
async def stdio_transport(in_fd: int, out_fd: int, *, max_line: int, on_eof: Callable[[], None],
                          on_cancel: Callable[[str | int], bool] = lambda request_id: True,
                          on_bad_line: Callable[[], None] = lambda: None,
                          ) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                                                   MemoryObjectSendStream[SessionMessage]]]:
    """(read stream, write stream) for `Server.run`, over `in_fd` and `out_fd`. `on_cancel(id)`
    sees every notifications/cancelled first: False drops it (the request goes on).
    `on_bad_line()` is told of each line that was not a JSON-RPC message (after its error is sent)."""
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    out_send, out_recv = anyio.create_memory_object_stream[bytes](32)
    reader = LineReader(in_fd, max_line)

    async def read_loop() -> None:
        async with read_send:
            try:
                while True:
                    line = await anyio.to_thread.run_sync(reader.next, abandon_on_cancel=True)
                    if line is None:
                        return
                    try:
                        item = parse(line, max_line)
                    except Exception as exc:  # noqa: BLE001 - one bad message never ends the server
                        print(f"assistant mcp serve: a message could not be read ({type(exc).__name__}); "
                              "answered as an invalid request", file=sys.stderr, flush=True)
                        item = error_line(None, types.INVALID_REQUEST,
                                          "invalid request: the message could not be read")
                    if isinstance(item, bytes):
                        await out_send.send(item)
                        on_bad_line()
                    elif item is not None and _goes_on(item, on_cancel):
                        await read_send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return       # the server stopped reading, or stdout is gone
            finally:
                on_eof()     # before the SDK sees the end: waiting calls are closed first

    async def forward_loop() -> None:
        async with write_recv:
            async for message in write_recv:
                try:
                    data = (message.message.model_dump_json(by_alias=True, exclude_none=True) + "\n").encode("utf-8")
                except Exception as exc:  # noqa: BLE001 - one message that cannot be written ends nothing
                    print(f"assistant mcp serve: a reply could not be written ({type(exc).__name__}); "
                          "it was dropped", file=sys.stderr, flush=True)
                    continue
                try:
                    await out_send.send(data)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass     # stdout is gone: what the server says is dropped, it keeps reading

    async def write_loop() -> None:
        async with out_recv:
            async for data in out_recv:
                try:
                    # abandoned when the server stops: a client that no longer reads its stdout
                    # must not keep the server from closing its requests and its session
                    await anyio.to_thread.run_sync(_write_all, out_fd, data, abandon_on_cancel=True)
                except OSError:
                    return    # the client closed its end: nothing more can be said to it

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_loop)
        tg.start_soon(forward_loop)
        tg.start_soon(write_loop)
        try:
            yield read_recv, write_send
        finally:
            tg.cancel_scope.cancel()


__all__ = ["Line", "LineReader", "claim_stdout", "error_line", "parse", "stdio_transport"]
