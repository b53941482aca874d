"""The action and check registries: each kind is documented and messages list them in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.actions import ACTION_KINDS
from scenarios.checks import CHECK_KINDS
from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario

DOC = (Path(__file__).resolve().parents[2] / "docs" / "scenarios.md").read_text(encoding="utf-8")
BASE = """\
version: 1
name: registry
cluster: {topics: {T1: 2}}
consumers: [{id: C1, group: g1, topics: [T1]}]
"""


@pytest.mark.parametrize("kind", [*ACTION_KINDS, *CHECK_KINDS])
def test_every_kind_is_documented(kind: str):
    assert f"`{kind}`" in DOC or f"{kind}:" in DOC


def test_each_kind_is_registered_under_its_own_name():
    assert all(cls.kind == key for key, cls in ACTION_KINDS.items())
    assert all(cls.name == key for key, cls in CHECK_KINDS.items())


def test_messages_list_the_registered_kinds_in_order():
    with pytest.raises(ScenarioError) as err:
        load_scenario(BASE + "timeline: [{at: 0s}]\nexpect: [{at: 1s}]\n")
    text = err.value.format()
    assert f"one of {', '.join(ACTION_KINDS)}" in text
    assert f"at least one check: {', '.join(CHECK_KINDS)}" in text
