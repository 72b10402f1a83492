"""The approval page's audit budget: one client's flood of one kind spends only its own budget,
and what is over budget is counted and summed up, never silently dropped."""

from __future__ import annotations

from assistant.web.audit_budget import AuditBudget, kind_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_spends_only_its_own_client_and_kind():
    clock = Clock()
    budget = AuditBudget(per_minute=3, clock=clock)
    assert [budget.admit("10.0.0.1", "wrong login token").write for _ in range(3)] == [True] * 3
    over = budget.admit("10.0.0.1", "wrong login token")
    assert not over.write and len(over.notes) == 1 and "budget reached" in over.notes[0].why
    assert budget.admit("10.0.0.1", "wrong login token").notes == ()       # said once a minute
    assert budget.admit("10.0.0.1", "bad link signature").write            # another kind
    assert budget.admit("10.0.0.2", "wrong login token").write             # another client
    clock.now += 60
    again = budget.admit("10.0.0.1", "wrong login token")
    assert again.write
    assert [(n.client, n.kind, n.why, n.suppressed) for n in again.notes] == [
        ("10.0.0.1", "wrong login token", "2 refusals suppressed", 2)]


def test_detail_in_parentheses_is_one_kind_and_keys_are_bounded():
    assert kind_of("link for another request (0123456789ab)") == "link for another request"
    budget = AuditBudget(per_minute=1, max_keys=2, clock=Clock())
    assert budget.admit("a", "x").write and budget.admit("b", "x").write
    assert budget.admit("c", "x").write              # the overflow pair's first line
    assert not budget.admit("d", "x").write          # shares the overflow budget
    assert len(budget._windows) == 3                 # two pairs and the overflow, no more
