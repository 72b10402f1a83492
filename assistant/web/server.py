"""`assistant approvals serve`: where the approval page listens, and for how long anything waits.

Guards the page's exposure and its bounds:
- it binds to loopback unless told otherwise: any other address needs --allow-remote, and then
  says what that exposes (every pending request's content to whoever holds a link or the login
  token, over plain HTTP unless a TLS reverse proxy is in front) and how to limit it (a VPN, or a
  TLS reverse proxy with [approvals] web_url set to its https address);
- the Host header must name this server (loopback names, the bound address, web_url's host;
  on a wildcard bind, instead of the bound address, any numeric IP address, which a DNS-rebinding
  page cannot present): a DNS-rebinding page gets a 400, not our pages;
- every wait is bounded: a connection lives at most CONNECTION_LIFETIME seconds whatever it
  sends (uvicorn alone would let a client that never finishes its headers hold a connection
  forever), one that has not sent a whole request head within FIRST_REQUEST_TIMEOUT seconds is
  closed, idle keep-alive ends after 5 s, headers are at most 16 KiB, at most MAX_CONNECTIONS
  connections are kept (beyond that the oldest one that has sent no request yet is closed, so
  idle sockets cannot lock the person out) and at most MAX_IN_FLIGHT requests are served at once
  (then 503); bodies are bounded by the app (assistant.web.app);
- the access log is off: request lines carry link signatures and the login token.

Web stack: Starlette (the app) on uvicorn with h11 (the server). Both are small, maintained,
pure Python with few dependencies, already installed with llama-cpp-python's server extra and
used by the MCP SDK; an ASGI app is tested over real HTTP as easily as http.server, and uvicorn
gives bounded keep-alive, concurrency and header sizes that http.server would need by hand.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import sys
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from assistant.approvals.links import load_signer
from assistant.secrets.audit_key import audit_key, unattended_unlock
from assistant.web.app import ApprovalApp
from assistant.web.hosts import HostRule
from assistant.workspace.layout import Workspace

DEFAULT_LISTEN = "127.0.0.1:8765"
CONNECTION_LIFETIME = 30.0
FIRST_REQUEST_TIMEOUT = 5.0    # seconds from connecting to a whole request head
MAX_CONNECTIONS = 256          # open connections kept; beyond it the oldest idle one is closed
MAX_IN_FLIGHT = 512            # uvicorn's limit_concurrency: connections or requests, then 503
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class ServeError(Exception):
    """The server cannot start as asked (bad --listen, a remote address without --allow-remote,
    the port taken, the key unusable). The message says the fix."""


@dataclass(frozen=True)
class Listen:
    host: str          # an IP address (localhost is taken as 127.0.0.1)
    port: int

    @property
    def shown(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.host).is_loopback

    @property
    def wildcard(self) -> bool:
        return ipaddress.ip_address(self.host).is_unspecified


# How a phone reaches this page (README, "Approve from your phone"; docs/usage.md has the set-ups).
PHONE_REACH = ("from a phone: through a VPN (WireGuard, Tailscale: --listen on the VPN address with "
               "--allow-remote) or a TLS reverse proxy (Caddy, nginx) in front of 127.0.0.1 with [approvals] "
               "web_url set to its https:// address; see docs/usage.md, \"Approving from a phone\"")


def parse_listen(text: str) -> Listen:
    """HOST:PORT ([v6]:PORT for IPv6; localhost means 127.0.0.1; port 0 = any free port)."""
    text = text.strip()
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ServeError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8765 or [::1]:8765")
    if host == "localhost":
        host = "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise ServeError(f"--listen {text!r}: the host must be an IP address (or localhost), so that what it "
                         "binds to is what you read") from None
    return Listen(ip.compressed, int(port))


def bind(listen: Listen) -> socket.socket:
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    try:
        sock = socket.create_server((listen.host, listen.port), family=family, backlog=128)
    except OSError as exc:
        raise ServeError(f"cannot listen on {listen.shown}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


def exposure_text(listen: Listen) -> str:
    where = "every network this machine is on" if listen.wildcard else f"the network of {listen.host}"
    return (f"warning: --allow-remote: the approval page listens on {listen.shown}, reachable from {where}. "
            "Anyone who can reach it and holds a signed link or the login URL can read those pending requests "
            "(their full content and diff) and answer them; over plain HTTP, anyone on the path can read the "
            "links too. Reach it through a VPN (WireGuard, Tailscale) or put a TLS reverse proxy in front and "
            "set [approvals] web_url to its https:// address.")


def allowed_hosts(listen: Listen, web_url: str) -> HostRule:
    """The host names this server answers to: loopback names, web_url's host, and the bound
    address (on a wildcard bind: any IP literal, see HostRule). Never "any name"."""
    hosts = set(_LOOPBACK_NAMES)
    if not listen.wildcard:
        hosts.add(listen.host)
    if web_url:
        name = urlsplit(web_url).hostname
        if name:
            hosts.add(name.lower())
    return HostRule(frozenset(hosts), ip_literals=listen.wildcard)


def _bounded_protocol(lifetime: float = CONNECTION_LIFETIME, first_request: float = FIRST_REQUEST_TIMEOUT,
                      max_connections: int = MAX_CONNECTIONS):
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11(H11Protocol):
        """uvicorn's h11 protocol with a hard lifetime per connection, a deadline for the first
        request head, and a cap on open connections that closes the oldest idle one (one that
        has sent no request yet) rather than refusing the newcomer."""

        def connection_made(self, transport):  # type: ignore[override]
            super().connection_made(transport)
            self.opened_at = self.loop.time()
            self._lifetime = self.loop.call_later(lifetime, transport.close)
            self._first = self.loop.call_later(first_request, self._no_request_yet)
            self._make_room()

        def is_idle(self) -> bool:
            return self.cycle is None and not self.transport.is_closing()

        def _no_request_yet(self) -> None:
            if self.is_idle():
                self.transport.close()

        def _make_room(self) -> None:
            live = [c for c in self.connections
                    if isinstance(c, BoundedH11) and c.transport is not None and not c.transport.is_closing()]
            if len(live) <= max_connections:
                return
            idle = sorted((c for c in live if c is not self and c.is_idle()), key=lambda c: c.opened_at)
            for c in idle[:len(live) - max_connections]:
                c.transport.close()

        def connection_lost(self, exc):  # type: ignore[override]
            for name in ("_lifetime", "_first"):
                handle = getattr(self, name, None)
                if handle is not None:
                    handle.cancel()
            super().connection_lost(exc)

    return BoundedH11


def make_server(app: Callable, *, log_level: str = "warning", lifetime: float = CONNECTION_LIFETIME):
    import uvicorn

    config = uvicorn.Config(app, http=_bounded_protocol(lifetime), ws="none", lifespan="off", log_level=log_level,
                            access_log=False, timeout_keep_alive=5, limit_concurrency=MAX_IN_FLIGHT,
                            h11_max_incomplete_event_size=16 * 1024, server_header=False, date_header=False,
                            proxy_headers=False, timeout_graceful_shutdown=3)
    return uvicorn.Server(config)


def serve(ws: Workspace, listen_text: str, *, allow_remote: bool, echo: Callable[[str], None],
          warn: Callable[[str], None], lifetime: float = CONNECTION_LIFETIME) -> None:
    """Run the approval page until interrupted. ServeError if it cannot start."""
    listen = parse_listen(listen_text)
    if not listen.loopback and not allow_remote:
        raise ServeError(f"--listen {listen.shown} is not a loopback address: add --allow-remote to expose the "
                         "approval page beyond this machine (better: keep 127.0.0.1 and reach it through a VPN "
                         "or a TLS reverse proxy)")
    settings = ws.config.approvals
    try:
        ws.ensure_state()
        signer = load_signer(ws.state_dir, settings.web_url)
    except OSError as exc:
        raise ServeError(f"the approval-link key cannot be set up in {ws.state_dir}: {exc}") from None
    # the audit key the way a scheduled run unlocks the vault (env, key_file, keyring), never a
    # prompt: without it the page's audit lines are written unkeyed, and that is said here
    vault, unkeyed = unattended_unlock(ws)
    if unkeyed:
        warn(f"warning: {unkeyed}")
    sock = bind(listen)
    port = sock.getsockname()[1]
    bound = Listen(listen.host, port)
    token = secrets.token_urlsafe(32)
    prefix = urlsplit(settings.web_url).path.rstrip("/") if settings.web_url else ""
    app = ApprovalApp(ws, signer, login_token=token, prefix=prefix,
                      secure_cookies=urlsplit(settings.web_url).scheme == "https" if settings.web_url else False,
                      allowed_hosts=allowed_hosts(bound, settings.web_url), audit_key=audit_key(vault),
                      scanner=vault.scanner() if vault is not None else None)
    local_host = "127.0.0.1" if bound.wildcard and ":" not in bound.host else "::1" if bound.wildcard else bound.host
    local = f"http://{Listen(local_host, port).shown}"
    if not bound.loopback:
        warn(exposure_text(bound))
    echo(f"approval page for {ws.root} on http://{bound.shown}/")
    echo(f"log in: {local}{prefix}/login?token={token}")
    if settings.web_url:
        echo(f"  (through [approvals] web_url: {settings.web_url}/login?token={token})")
        echo("signed links in notifications use [approvals] web_url; each works for its request only, until it "
             "is answered or expires")
    else:
        echo("[approvals] web_url is not set: notifications carry no links (set it to this page's address)")
    echo(PHONE_REACH)
    echo("the login URL is a password until this server stops; Ctrl-C stops it")
    sys.stdout.flush()
    server = make_server(app.asgi(), lifetime=lifetime)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


__all__ = ["DEFAULT_LISTEN", "Listen", "ServeError", "allowed_hosts", "bind", "exposure_text", "make_server",
           "parse_listen", "serve"]
