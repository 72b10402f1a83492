"""The transport answers every message whose id is no JSON-RPC id (true, 1e3, null, a lone
surrogate) with an invalid-request error carrying id null, and keeps valid ids as they are."""

from __future__ import annotations

import json

import mcp.types as types
import pytest
from mcp.shared.message import SessionMessage

from assistant.mcp.transport import Line, error_line, parse


@pytest.mark.parametrize("rid", [b"true", b"false", b"1e3", b"1.5", b"null", b"[1]", b"{}"])
def test_a_request_with_a_bad_id_type_is_an_invalid_request_with_id_null(rid):
    out = parse(Line(b'{"jsonrpc":"2.0","id":' + rid + b',"method":"ping"}'), 1 << 20)
    assert isinstance(out, bytes)
    reply = json.loads(out)
    assert reply["id"] is None and reply["error"]["code"] == types.INVALID_REQUEST


def test_a_lone_surrogate_id_is_answered_with_id_null():
    out = parse(Line(b'{"jsonrpc":"2.0","id":"\\ud800","method":"nosuch"}'), 1 << 20)
    assert isinstance(out, bytes)
    assert json.loads(out.decode("utf-8"))["id"] is None


def test_error_line_never_raises_for_an_id_it_cannot_write():
    assert json.loads(error_line("\ud800", types.INVALID_REQUEST, "x"))["id"] is None


@pytest.mark.parametrize("rid", [b"7", b'"abc"'])
def test_valid_ids_and_notifications_pass(rid):
    out = parse(Line(b'{"jsonrpc":"2.0","id":' + rid + b',"method":"ping"}'), 1 << 20)
    assert isinstance(out, SessionMessage) and isinstance(out.message.root, types.JSONRPCRequest)
    note = parse(Line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'), 1 << 20)
    assert isinstance(note, SessionMessage) and isinstance(note.message.root, types.JSONRPCNotification)
