"""The ruling on a signed change from an enrolled device (engine step 3b): allowed as "sync from
NAME" for memory (and file) in either mode, without asking; never for net; never where the
person tightened the cell to deny; a bad device name is a deny."""

from __future__ import annotations

import pytest

from policy.engine import Session, decide


@pytest.mark.parametrize("mode", ["watched", "unattended"])
def test_an_enrolled_devices_change_is_allowed_with_its_reason(mode):
    r = decide("memory", "people/lina.md", mode, Session("r", channel="none"), device="laptop")
    assert (r.verdict, r.reason) == ("allow", "sync from laptop")


def test_without_a_device_the_same_call_is_asked_or_denied():
    assert decide("memory", "n.md", "unattended", Session("r", channel="none")).verdict == "deny"


def test_a_device_never_widens_net_and_a_bad_name_is_a_deny():
    assert decide("net", "example.org", "unattended", Session("r"), device="laptop").verdict == "deny"
    for name in ("", "a/b", "x" * 65, "lap top", 3):
        assert decide("memory", "n.md", "unattended", Session("r"), device=name).verdict == "deny"


def test_a_cell_the_person_tightened_to_deny_still_denies():
    session = Session("r", policy={"memory_unattended": "deny"})
    assert decide("memory", "n.md", "unattended", session, device="laptop").verdict == "deny"


def test_an_invalid_target_is_denied_even_from_a_device():
    assert decide("memory", "../escape.md", "unattended", Session("r"), device="laptop").verdict == "deny"
