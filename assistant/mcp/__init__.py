"""The MCP door: `assistant mcp serve` exposes this workspace's memory to any MCP client (Claude
Desktop, Claude Code, Cursor, ...) through the same session as chat and run.

transport.py  bounded JSON-RPC lines over stdio; stdout holds nothing but the protocol
calls.py      one gated call: its authority, its cancellation, the request it filed
tools.py      the tools, their schemas and descriptions, resource addresses, data markers
server.py     the SDK server wired to the session
"""
