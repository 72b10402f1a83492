"""The reflection at the end of a chat (`[memory] reflect`), and after a clean unattended run ("always").

Guards what the person leaving sees and decides: the reflection runs only when they can answer
(a chat whose stdin is a terminal), any Ctrl-C skips it, and each proposal is put to them in
full by the gate itself (the inline question a watched write gets: the whole text or diff, y/N;
after a run: one approval request each), so a no, no answer or Ctrl-C writes nothing. At a
bound (time, or the number of proposals) what was completed is shown and what was dropped is
counted. A run's exit code is settled before and never changed by it.
"""

from __future__ import annotations

import click

from assistant.agent.loop import Agent
from assistant.agent.reflection import MAX_PROPOSALS, REFLECT_SECONDS, Reflection, reflect, write_proposal
from assistant.display.terminal import one_line


def _bound_note(outcome: Reflection, seconds: float, max_proposals: int) -> str | None:
    """The line said at a bound: what was completed is shown, what was dropped counted."""
    if not outcome.at_bound:
        return None
    bits = []
    if outcome.ended == "time":
        bits.append(f"it stopped at its {seconds:g} s bound")
    if outcome.dropped:
        bits.append(f"{outcome.dropped} proposal{'s' if outcome.dropped != 1 else ''} beyond the first "
                    f"{max_proposals} {'were' if outcome.dropped != 1 else 'was'} dropped")
    if outcome.unfinished:
        bits.append("the one still being written was dropped")
    shown = len(outcome.proposals)
    if not shown:
        return f"reflection: {'; '.join(bits)}; nothing was proposed before it"
    return (f"reflection: {'; '.join(bits)}; the {shown} proposal{'s' if shown != 1 else ''} it completed "
            f"{'are' if shown != 1 else 'is'} shown")


def _uses_no_tools(agent: Agent) -> bool:
    """A model on the completion protocol (a base model, like the embedded default) is offered no
    tools, so it cannot propose a memory change: its reflection is skipped (recorded, not shown),
    instead of spending up to the bound on a turn that can only end with nothing proposed."""
    if getattr(agent, "protocol", "actions") != "completion":
        return False
    if agent.transcript is not None:
        try:
            agent.transcript.append("reflection_skipped", reason="the model uses no tools (completion protocol)")
        except Exception:   # noqa: BLE001 - a record only
            pass
    return True


def chat_reflection(agent: Agent, echo, *, seconds: float = REFLECT_SECONDS,
                    max_proposals: int = MAX_PROPOSALS) -> None:
    """At the end of a chat: the reflection turn, then each proposal put to the person by the
    gate's inline question. Ctrl-C anywhere skips the rest (nothing more is written)."""
    if _uses_no_tools(agent):
        return
    log = agent.transcript
    try:
        echo(f"  (before you go: looking for anything worth remembering from this chat, up to {seconds:g} s; "
             "Ctrl-C skips)")
        outcome = reflect(agent, seconds=seconds, max_proposals=max_proposals, label="chat")
        note = _bound_note(outcome, seconds, max_proposals)
        if note:
            echo(f"  ({note})")
        if not outcome.proposals:
            if note is None:
                # the model's error itself is in the transcript (a chat shows a turn's error once)
                echo("  (reflection: nothing to remember was proposed)" if outcome.error is None else
                     "  (reflection: nothing proposed: the model failed; the transcript has its error)")
            return
        total = len(outcome.proposals)
        echo(f"  (reflection: {total} proposed change{'s' if total != 1 else ''} to your notes; each is shown "
             "in full: y writes it, anything else writes nothing)")
        for number, proposal in enumerate(outcome.proposals, 1):
            written = write_proposal(agent, proposal, number=number, total=total, door="chat")
            echo(f"  {'saved' if written.written else 'not saved'}: {one_line(written.message, 300)}")
    except KeyboardInterrupt:
        echo("\n  (reflection skipped: nothing more was saved)")
        if log is not None:
            try:
                log.append("reflection_skipped", reason="Ctrl-C")
            except Exception:   # noqa: BLE001 - a record only
                pass


def run_reflection(agent: Agent, *, seconds: float = REFLECT_SECONDS, max_proposals: int = MAX_PROPOSALS) -> None:
    """After a clean unattended run (reflect = "always"): the reflection turn, then one approval
    request per proposal (each waits approvals.timeout). Progress on stderr only; the run's
    outcome line and exit code were settled before."""
    def say(text: str) -> None:
        click.echo(f"[reflection] {text}", err=True)

    if _uses_no_tools(agent):
        return
    outcome = reflect(agent, seconds=seconds, max_proposals=max_proposals, label="run")
    note = _bound_note(outcome, seconds, max_proposals)
    if note:
        say(note.removeprefix("reflection: "))
    if not outcome.proposals:
        if note is None:
            say("nothing to remember was proposed" if outcome.error is None else
                "nothing proposed: the model failed; the transcript has its error")
        return
    total = len(outcome.proposals)
    say(f"{total} proposed change{'s' if total != 1 else ''} to memory: each is an approval request")
    for number, proposal in enumerate(outcome.proposals, 1):
        written = write_proposal(agent, proposal, number=number, total=total, door="run")
        say(f"{'written' if written.written else 'not written'}: {one_line(written.message, 300)}")


__all__ = ["chat_reflection", "run_reflection"]
