"""The MCP SDK serves a client's requests concurrently (one task each). MemoryServer.call checks
`refusals.ended` before its first await and counts the refusal later, in a worker thread, so a
client that sends many calls at once gets every one of them scanned and answered: each call
carrying a vault value is refused on its own (one bit each), and the session ends only after
all of them. With a word list sent in one burst that is a full oracle; the rule allows two.
(Over the real stdio door the transport hands the SDK one line per thread round-trip, which
narrowed the window enough that a 40-call burst got 2 refusals in two trials: a race, not
an atomic rule.)"""

from __future__ import annotations

import anyio

from assistant.mcp.calls import CallRegistry
from assistant.mcp.server import SECRET_REFUSED, SESSION_CLOSED, MemoryServer
from assistant.secrets.refusals import MAX_SECRET_REFUSALS

WIFI = "correct-horse-battery-93kd"
BURST = 8


def test_a_burst_of_calls_gets_at_most_two_secret_refusals(vault_ws, sessions):
    session = sessions(vault_ws, "watched", kind="mcp", vault={"WIFI": WIFI})
    server = MemoryServer(session, CallRegistry())
    answers: list[str] = []

    async def burst() -> None:
        async def one() -> None:
            result = await server.call("memory_read", {"path": f"{WIFI}.md"})
            answers.append(result.content[0].text)
        async with anyio.create_task_group() as tg:
            for _ in range(BURST):
                tg.start_soon(one)

    anyio.run(burst)
    refused = [a for a in answers if a.startswith(SECRET_REFUSED)]
    closed = [a for a in answers if a == SESSION_CLOSED]
    assert len(refused) <= MAX_SECRET_REFUSALS and len(closed) == BURST - len(refused)
    assert session.refusals.count <= MAX_SECRET_REFUSALS
