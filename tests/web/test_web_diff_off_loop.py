"""Item 9 of issue 23: one proposed write froze the approval page. The diff (quadratic or worse in
the line counts) ran inside the request handler, on the server's event loop, so while it ran no
other page was served. Now the page is rendered off the loop: while a request page's diff is held
mid-computation (a hook blocks the diff on an Event), another GET is answered. The real page and
uvicorn server on loopback, in this process so that the hook can hold the diff."""

from __future__ import annotations

import threading

import httpx

from assistant.approvals import answering
from assistant.approvals.links import load_signer
from assistant.web.app import ApprovalApp
from assistant.web.server import Listen, allowed_hosts, bind, make_server, parse_listen
from assistant.workspace.layout import open_workspace

from web_approvals_support import file_request, make_ws, wait_for

TOKEN = "a-login-token-for-this-test-only"


def _served(ws):
    """The approval page of ws on 127.0.0.1 in a thread: (base URL, stop function)."""
    workspace = open_workspace(ws)
    sock = bind(parse_listen("127.0.0.1:0"))
    port = sock.getsockname()[1]
    app = ApprovalApp(workspace, load_signer(workspace.state_dir, ""), login_token=TOKEN,
                      allowed_hosts=allowed_hosts(Listen("127.0.0.1", port), ""))
    server = make_server(app.asgi())
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert wait_for(lambda: server.started, timeout=30), "the page did not start"

    def stop():
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
    return f"http://127.0.0.1:{port}", stop


def test_another_page_is_served_while_a_diff_is_being_computed(tmp_path, monkeypatch):
    ws = make_ws(tmp_path)
    req = file_request(ws, "Ana likes coffee now\n", current="Ana likes tea\n")
    real_diff = answering.unified_diff
    entered, release = threading.Event(), threading.Event()

    def held_diff(*args, **kwargs):
        entered.set()
        release.wait(60)          # bounded: a broken test does not hang the suite
        return real_diff(*args, **kwargs)

    monkeypatch.setattr(answering, "unified_diff", held_diff)
    base, stop = _served(ws)
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            assert client.get(f"/login?token={TOKEN}").status_code == 303
            cookies = dict(client.cookies)
        shown: dict = {}

        def open_the_request():
            with httpx.Client(base_url=base, cookies=cookies, timeout=90) as c:
                shown["page"] = c.get(f"/r/{req.id}")

        viewer = threading.Thread(target=open_the_request, daemon=True)
        viewer.start()
        assert entered.wait(30), "the request page never started its diff"
        # the diff is held now: the list of requests must still be served (10 s: far beyond a
        # served page, far below the held diff; today's loop-blocking handler never answers)
        try:
            with httpx.Client(base_url=base, cookies=cookies, timeout=10) as c:
                listed = c.get("/")
        except httpx.TimeoutException:
            listed = None
        served_meanwhile = listed is not None and listed.status_code == 200 and req.id in listed.text
        release.set()
        viewer.join(60)
        assert served_meanwhile, "no other page was served while a diff was being computed"
        page = shown["page"]
        assert page.status_code == 200 and "coffee" in page.text
    finally:
        release.set()
        stop()
