"""The approval page's HTML: server-rendered, phone-sized, no script.

Guards "what the person sees is what is written" on a web page: every text that comes from a
request (target, summary, reason, content, diff, run id, the task, an answer's reason) is first
made visible the way the terminal shows it (assistant.display.terminal.escape: control, bidi,
zero-width and every other invisible character as \\u escapes, counted once under the diff)
and then HTML-escaped (html.escape, quotes too), so a note cannot inject markup, hide a line or
reorder text; content that could carry hidden text (a run of invisible characters, any tag
character) is flagged at the top. Nothing is cut: the whole diff is on the page (or, past the
diff's bounds, both whole texts with a sentence saying no diff was computed).
The page is in plain words: the diff's `---`/`+++`/`@@` lines are said as a sentence ("Lines
3-5:"), the policy's reason is said as what it means (never "root policy"), every time is
local with its zone, and no shell command is given in backticks.
The scope choices are explained in words before they are chosen; `once` is preselected, and a
durable scope says that it is remembered and how to take it back. The page carries no script at
all (the server's Content-Security-Policy forbids it).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from dataclasses import dataclass
from typing import Sequence

from policy.approvals import APPROVED, Answer, Entry, Request, read_before

from assistant.approvals.answering import REDACTED_MARK, Requester, diff_line_kinds, diff_text, flag_warning
from assistant.display.localtime import local_time
from assistant.display.terminal import characters, escape, hidden_text_warning, url_rows
from assistant.tools import fetch_summary

CSS = """
*{box-sizing:border-box}
body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:12px;
 max-width:760px;margin:auto;color:#111;background:#fafafa}
h1{font-size:1.25rem;margin:.2rem 0 .6rem}
h2{font-size:1.05rem;margin:1rem 0 .4rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .7rem;margin:.4rem 0}
dt{color:#555}dd{margin:0;overflow-wrap:anywhere}
pre.diff{background:#fff;border:1px solid #ccc;border-radius:6px;padding:8px;font:13px/1.35 ui-monospace,
 "DejaVu Sans Mono",monospace;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.diff span{display:block}.add{background:#e6ffec}.del{background:#ffebe9}.hunk{color:#0550ae}
.meta{color:#555}.red{background:#fff8c5}
.state{display:inline-block;padding:.1rem .5rem;border-radius:4px;background:#eee;font-weight:600}
.card{background:#fff;border:1px solid #ddd;border-radius:8px;padding:10px;margin:.6rem 0}
label.scope{display:block;border:1px solid #ccc;border-radius:8px;padding:10px;margin:.4rem 0;background:#fff}
label.scope input{transform:scale(1.4);margin-right:.6rem}
.why{display:block;color:#444;font-size:.92rem;margin-left:2rem}
button{display:block;width:100%;font-size:1.15rem;padding:14px;border-radius:8px;border:0;margin:.6rem 0;
 min-height:52px;cursor:pointer}
.approve{background:#1a7f37;color:#fff}.deny{background:#cf222e;color:#fff}
textarea{width:100%;font-size:1rem;padding:8px;border-radius:6px;border:1px solid #ccc}
a{color:#0550ae}.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:8px}
.bad{background:#ffebe9;border:1px solid #cf222e;border-radius:6px;padding:10px}
ul.list{list-style:none;padding:0}ul.list li{margin:.5rem 0}
ul.list a{display:block;padding:12px;background:#fff;border:1px solid #ddd;border-radius:8px;text-decoration:none}
"""


# The one style block's hash, for the Content-Security-Policy: no inline style but ours applies.
CSS_HASH = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode("utf-8")).digest()).decode("ascii")


def esc(text: object) -> str:
    """Shown on the page: visible (terminal.escape) and HTML-escaped."""
    return html.escape(escape(str(text), newlines=True), quote=True)


def esc1(text: object) -> str:
    """One line: newlines shown as escapes too."""
    return html.escape(escape(str(text), newlines=False), quote=True)


def layout(title: str, body: str) -> str:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta name=\"referrer\" content=\"no-referrer\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>"
            f"<body>{body}</body></html>\n")


def message_page(title: str, text: str, *, bad: bool = True, more: str = "") -> str:
    """A refusal or a result. The text may quote a request or an answer (an answer's reason, an
    error naming a target), so it is made visible like every other text (esc: control, bidi and
    zero-width characters as escapes) and then HTML-escaped; `more` is our own markup."""
    cls = "bad" if bad else "card"
    return layout(title, f"<h1>{esc1(title)}</h1><div class=\"{cls}\"><p>{esc(text)}</p>"
                         f"{more}</div>")


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def hunk_words(line: str) -> str:
    """A diff's `@@ -a,b +c,d @@` line in words: where in the new text the lines below are."""
    m = _HUNK.match(line)
    if m is None:
        return line
    start, count = int(m.group(3)), int(m.group(4) if m.group(4) is not None else 1)
    if count == 0:
        return f"Lines taken out after line {start}:"
    return f"Line {start}:" if count == 1 else f"Lines {start}-{start + count - 1}:"


HEADER_WORDS = ("The change to this note: lines marked - (red) are taken out, lines marked + (green) are put in, "
                "the others stay as they are.")


def diff_html(req: Request) -> str:
    """The full diff (or the new note's whole text), escaped, one span per line. The file
    header (`---`/`+++`) becomes one sentence saying how to read the lines, and each `@@` line
    says which lines of the new text follow."""
    out = []
    styles = {"header": "meta", "note": "meta", "hunk": "hunk", "add": "add", "del": "del", "context": ""}
    said_header = False
    for kind, line in diff_line_kinds(diff_text(req).splitlines()):
        cls = styles[kind]       # by position: only the real file header is styled as one
        if kind == "header":
            if said_header:
                continue
            said_header = True
            line = HEADER_WORDS
        elif kind == "hunk":
            line = hunk_words(line)
        elif REDACTED_MARK in line:
            cls += " red"
        out.append(f"<span class=\"{cls.strip()}\">{html.escape(line, quote=True) or '&#8203;'}</span>")
    return "<pre class=\"diff\">" + "".join(out) + "</pre>"


_WHAT = {"memory": "change to your notes", "file": "write to your files", "net": "fetch from the internet"}
_ROOT_REASON = re.compile(r"^root policy for (\w+) in (a watched chat|an unattended run) is (\w+)$")


def reason_words(reason: str) -> str:
    """Why the gate asked, in words: the built-in rule ("root policy for memory in an unattended
    run is ask") as what it means for you; any other reason (your config.toml's rule) as it is."""
    m = _ROOT_REASON.match(reason)
    if m is None:
        return reason
    kind, where, verdict = m.groups()
    what = _WHAT.get(kind, f"{kind} action")
    who = "A chat" if where == "a watched chat" else "A run you are not watching"
    if verdict == "ask":
        return f"{who} always asks you before any {what}."
    return f"{who} may {verdict} any {what}."


def fetch_html(req: Request) -> str:
    """A net request: what leaves, shown before the answer forms. The whole URL, then each part
    (scheme, host, port, path, query: data can leave in the path and the query) in full, escaped,
    with its length, and the vault secret (by name) it would send, as `approvals show` and the
    terminal's question (assistant.display.terminal.url_rows) show them."""
    fetch = fetch_summary.parse(req.summary)
    if fetch is None:
        rows = [("Summary", esc1(req.summary) + f" <span class=\"meta\">({characters(len(req.summary))})</span>")]
    else:
        rows = [("URL", f"<code>{esc1(fetch.url)}</code> <span class=\"meta\">({characters(len(fetch.url))})</span>")]
        for label, value in url_rows(fetch.url):
            if label == "url":
                continue
            shown = f"<code>{esc1(value)}</code>" if value else "(none)"
            rows.append((label.capitalize(), f"{shown} <span class=\"meta\">({characters(len(value))})</span>"))
        rows.append(("Vault secret sent", f"<b>{esc1(fetch.secret)}</b> (its value goes out as a bearer token; "
                     "it is never shown)" if fetch.secret else "none"))
    return ("<h2>What would be fetched</h2><p>Approving lets this whole address leave this machine: data can "
            "leave in its path and its query.</p><dl class=\"card\">"
            + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>")


def scope_words(req: Request, offer: dict[str, str]) -> str:
    """What choosing this scope does, in words."""
    scope, pattern = offer.get("scope", ""), offer.get("pattern", "")
    what = {"memory": "write to the note", "file": "write to the file", "net": "fetch from"}.get(req.kind, "reach")
    if scope == "once":
        return "Only this one call. If the run asks again, you are asked again."
    if scope == "run":
        return (f"This call, and any later one by this same run ({req.run_id}) to {what} {pattern}. "
                "Forgotten when that run ends.")
    if scope == "exact":
        return (f"Remembered: every future run may {what} {pattern} without asking. Kept in grants.json; "
                "you can take it back on your computer (assistant grants revoke).")
    if scope == "dir":
        reach = ("every subdomain too" if req.kind == "net"
                 else "every note directly in that folder, not in folders below it")
        return (f"Remembered and wider: every future run may {what} {pattern} ({reach}) without asking. "
                "Kept in grants.json; you can take it back on your computer (assistant grants revoke).")
    return ""


@dataclass(frozen=True)
class FormAuth:
    """What a form carries besides its answer: the CSRF token, and for a signed link the link's
    own expiry and signature for that action (empty when the person is logged in)."""

    csrf: str
    exp: str = ""
    sig: str = ""

    def fields(self) -> str:
        out = f"<input type=\"hidden\" name=\"csrf\" value=\"{html.escape(self.csrf, quote=True)}\">"
        if self.sig:
            out += (f"<input type=\"hidden\" name=\"exp\" value=\"{html.escape(self.exp, quote=True)}\">"
                    f"<input type=\"hidden\" name=\"sig\" value=\"{html.escape(self.sig, quote=True)}\">")
        return out


def approve_form(req: Request, action_path: str, auth: FormAuth) -> str:
    choices = []
    for o in req.offers:
        scope = o.get("scope", "")
        checked = " checked" if scope == "once" else ""
        choices.append(
            f"<label class=\"scope\"><input type=\"radio\" name=\"remember\" value=\"{html.escape(scope, quote=True)}\""
            f"{checked}><b>{esc1(o.get('label', scope))}</b><span class=\"why\">{esc(scope_words(req, o))}</span></label>")
    return (f"<form method=\"post\" action=\"{html.escape(action_path, quote=True)}\" class=\"card\">"
            "<h2>Approve</h2><p>Approving allows exactly the content shown above "
            f"(sha256 {req.sha256[:16]}…). Choose how far it reaches:</p>"
            + "".join(choices) + auth.fields() +
            "<button type=\"submit\" class=\"approve\">Approve</button></form>")


def deny_form(action_path: str, auth: FormAuth) -> str:
    return (f"<form method=\"post\" action=\"{html.escape(action_path, quote=True)}\" class=\"card\">"
            "<h2>Deny</h2><label for=\"reason\">Reason (optional; the run and the audit log see it):</label>"
            "<textarea id=\"reason\" name=\"reason\" rows=\"2\" maxlength=\"500\"></textarea>"
            + auth.fields() + "<button type=\"submit\" class=\"deny\">Deny</button></form>")


def answer_words(ans: Answer) -> str:
    who = {"cli": "a person at a terminal", "web": "a person on the approval page"}.get(ans.by, "the run")
    text = f"{ans.verdict} by {who} at {local_time(ans.answered_at)}"
    if ans.verdict == APPROVED:
        text += f" (remember: {ans.remember})"
    if ans.reason:
        text += f": {ans.reason}"
    return text


def request_page(req: Request, state: str, ans: Answer | None, who: Requester, *, forms: str, note: str = "",
                 home: str = "") -> str:
    """One request: first what a person decides on (who asked, for what task, until when, and the
    full diff), then the answer forms, then the technical details (kind, run, sha256, offers)."""
    top = [("State", f"<span class=\"state\">{esc1(state)}</span>"),
           ("Who asked", esc1(who.describe()))]
    if who.task:
        top.append(("Task", esc(who.task)))
    if req.sources:
        # what the run had read from untrusted places (pages, files, flagged notes) before asking
        top.append(("Read first", esc1(read_before(req.sources, "this run"))))
    top += [("Why asked", esc1(reason_words(req.reason))), ("Expires", esc1(local_time(req.expires_at)) + " (then it is denied)")]
    if ans is not None:
        top.append(("Answer", esc1(answer_words(ans))))
    details = [("Kind", esc1(req.kind)), ("Target", esc1(req.target)), ("Summary", esc1(req.summary)),
               ("Run", esc1(req.run_id)), ("Filed", esc1(local_time(req.created_at))), ("Request", esc1(req.id)),
               ("sha256", f"<code>{esc1(req.sha256)}</code>"),
               ("Offers", esc1("; ".join(o.get("label", "") for o in req.offers)))]

    def dl(rows: list[tuple[str, str]]) -> str:
        return "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"

    shown = ""
    if not req.content_exact:
        shown = ("<p class=\"warn\">The content is shown redacted (it holds a secret's place); approving binds "
                 "the exact bytes by their sha256.</p>")
    what = "Proposed change" if req.current is not None else "Proposed new note" if req.content is not None else "Content"
    if req.content is not None and hidden_text_warning(req.content):
        note = f"<p class=\"warn\">{esc(hidden_text_warning(req.content).rstrip())}</p>" + note
    flagged = flag_warning(req.current, req.content)
    if flagged:
        note = f"<p class=\"warn\">{esc(flagged.rstrip())}</p>" + note
    back = f"<p><a href=\"{html.escape(home, quote=True)}\">All pending requests</a></p>" if home else ""
    body = fetch_html(req) if req.kind == "net" else f"<h2>{what}</h2>{shown}{diff_html(req)}"
    return layout(f"Approval {req.id}",
                  f"<h1>Approve {esc1(req.kind)} {esc1(req.target)}?</h1>{note}{dl(top)}"
                  f"{body}{forms}"
                  f"<details class=\"card\"><summary>Details</summary>{dl(details)}</details>{back}")


def list_page(entries: Sequence[Entry], link_of, expired: int) -> str:
    items = []
    for e in entries:
        if e.request is None:
            items.append(f"<li><div class=\"bad\">{esc1(e.id)}: corrupt: {esc1(e.error)}</div></li>")
            continue
        r = e.request
        items.append(f"<li><a href=\"{html.escape(link_of(e.id), quote=True)}\"><b>{esc1(r.kind)} {esc1(r.target)}</b>"
                     f"<br><span class=\"meta\">{esc1(r.summary)} · expires {esc1(local_time(r.expires_at))} · {esc1(e.id)}"
                     "</span></a></li>")
    body = "<h1>Pending approvals</h1>"
    body += "<ul class=\"list\">" + "".join(items) + "</ul>" if items else "<p>No pending approvals.</p>"
    if expired:
        body += (f"<p class=\"meta\">{expired} expired without an answer (your computer lists them all: "
                 "assistant approvals list --all).</p>")
    return layout("Pending approvals", body)


__all__ = ["FormAuth", "approve_form", "deny_form", "esc", "fetch_html", "layout", "list_page", "message_page", "request_page"]
