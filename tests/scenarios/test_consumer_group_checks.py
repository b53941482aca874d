"""`members` and `leader` expectations on a KIP-848 consumer group (group.protocol: consumer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario

SCENARIO = """\
version: 1
name: consumer-group-members
cluster:
  topics: {T: 6}
defaults:
  group.protocol: consumer
consumers:
  - {count: 3, first: 1, id: "C{i}", group: g, topics: [T]}
timeline:
  - {at: 0s, start: all}
  - {at: 20s, close: C1}
  - {at: 30s, start: C1}
expect:
  - {label: all three, at: 15s, members: [C1, C2, C3]}
  - {label: C1 left with epoch -1, at: 21s, members: [C2, C3]}
  - {label: a count, at: 21s, members: 2}
  - {label: wrong on purpose, at: 21s, members: [C1, C2, C3]}
  - {label: back, at: 40s, members: 3}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_members_of_a_consumer_group(tmp_path: Path) -> None:
    result = run_scenario(load_scenario(str(_write(tmp_path, SCENARIO))))
    assert result.error is None
    by_label = {e.label: e for e in result.expectations}
    assert by_label["all three"].passed
    assert by_label["C1 left with epoch -1"].passed
    assert by_label["a count"].passed
    assert by_label["back"].passed
    wrong = by_label["wrong on purpose"]
    assert not wrong.passed
    assert wrong.checks[0].actual == ["C2", "C3"]
    (group,) = result.groups
    assert group.protocol == "consumer" and len(group.members) == 3


def test_leader_is_refused_for_a_consumer_group_at_its_line(tmp_path: Path) -> None:
    text = SCENARIO.replace(
        "  - {label: back, at: 40s, members: 3}\n",
        "  - {label: back, at: 40s, members: 3}\n  - {at: 15s, leader: C1}\n",
    )
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(path))
    (issue,) = info.value.issues
    line = text.splitlines().index("  - {at: 15s, leader: C1}") + 1
    assert (issue.source, issue.line) == (str(path), line)
    assert "expect" in str(issue.path) and "leader" in str(issue.path)
    formatted = info.value.format()
    assert f"{path}:{line}" in formatted
    assert "has no leader" in formatted and "KIP-848" in formatted


def test_leader_still_checks_a_classic_group(tmp_path: Path) -> None:
    text = SCENARIO.replace("  group.protocol: consumer\n", "  group.protocol: classic\n")
    text = text.replace("  - {label: wrong on purpose, at: 21s, members: [C1, C2, C3]}\n", "")
    text += "  - {label: leader, at: 15s, leader: C1}\n"
    result = run_scenario(load_scenario(str(_write(tmp_path, text))))
    assert result.error is None
    assert [e.label for e in result.expectations if not e.passed] == []


def test_leader_is_allowed_when_a_restart_brings_a_classic_member(tmp_path: Path) -> None:
    """A downgrade (a restart into group.protocol: classic) makes the group not consumer-only."""
    text = SCENARIO.replace(
        "  - {at: 30s, start: C1}\n",
        "  - {at: 30s, start: C1}\n  - {at: 35s, restart: {C2: {group.protocol: classic}}}\n",
    ).replace(
        "  - {label: back, at: 40s, members: 3}\n",
        "  - {label: back, at: 40s, members: 3}\n  - {at: 39s, leader: C2}\n",
    )
    scenario = load_scenario(str(_write(tmp_path, text)))
    assert [c.name for e in scenario.expect for c in e.checks.values()][-1] == "leader"
