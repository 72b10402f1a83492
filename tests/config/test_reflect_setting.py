"""`[memory] reflect` (issue 24 item 2): "chat" | "always" | "off", the default set by
bench/reflection.py's figure; any other value is a config problem naming the choices."""

from __future__ import annotations

import pytest

from assistant.workspace.config import ConfigError, parse


def test_the_three_values_and_the_default():
    assert parse({}).memory.reflect == "chat"
    for value in ("chat", "always", "off"):
        assert parse({"memory": {"reflect": value}}).memory.reflect == value


@pytest.mark.parametrize("value", ["yes", "Chat", "", True, 1])
def test_any_other_value_is_a_problem_that_names_the_choices(value):
    config = parse({"memory": {"reflect": value}})
    with pytest.raises(ConfigError) as caught:
        config.require("memory")
    message = str(caught.value)
    assert "memory.reflect" in message and '"chat" or "always" or "off"' in message
