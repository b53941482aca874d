"""CLI correctness (issue 15): diagrams (formats, exit codes, Mermaid ids, labelled coordinator
states), --version, step --limit 0, seeds that mean what a scenario file means."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from coordinator.state_machine import VALID_PREVIOUS_STATES
from scenarios.cli import app
from scenarios.cli_tools import COORDINATOR_CAUSES

runner = CliRunner()

ODD_IDS = """\
version: 1
name: odd-ids
cluster: {topics: {T1: 2}}
defaults: {partition.assignment.strategy: [range]}
consumers:
  - {id: "app:1", group: g1, topics: [T1]}
  - {id: "app-2", group: g1, topics: [T1]}
  - {id: "app_2", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
  - {at: 20s, crash: app-2}
expect:
  - {at: 10s, state: Stable, members: ["app:1", app-2, app_2]}
"""


def test_every_coordinator_transition_is_labelled() -> None:
    edges = {(src, dst) for dst, srcs in VALID_PREVIOUS_STATES.items() for src in srcs}
    assert edges == set(COORDINATOR_CAUSES)
    mermaid = runner.invoke(app, ["diagram"]).output
    assert "Stable --> PreparingRebalance: member joins or leaves" in mermaid
    arrows = [line for line in mermaid.splitlines() if "-->" in line and "[*]" not in line]
    assert len(arrows) == len(edges) and all(": " in line for line in arrows)
    dot = runner.invoke(app, ["diagram", "--format", "dot"]).output
    assert dot.startswith("digraph ClassicGroupState {")
    assert (
        '"CompletingRebalance" -> "Stable" [label="leader\'s SyncGroup assignment stored"];' in dot
    )


def test_sequence_diagram_ids_are_safe_and_notes_on_the_right_lifeline(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(ODD_IDS)
    result = runner.invoke(app, ["diagram", "--scenario", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    heads = [line for line in lines if line.startswith("    participant")]
    assert heads[:4] == [
        "    participant app_1 as app#58;1",
        "    participant app_2 as app-2",
        "    participant app_2_2 as app_2",  # not merged with app-2
        "    participant broker_0 as broker-0",
    ]
    ids = {line.split()[1] for line in heads}
    for line in lines[1 + len(heads) :]:
        m = re.match(r"    (?:Note over (\w+):|(\w+)--?>>(\w+):)", line)
        assert m, line
        assert {g for g in m.groups() if g} <= ids
        text = line.split(": ", 1)[1]
        assert ":" not in text.replace("#58;", "")  # no bare ':' after the separator
    crash = next(line for line in lines if "crash" in line)
    assert crash.startswith("    Note over app_2:"), crash  # app-2's own lifeline


def test_diagram_scenario_refuses_dot_and_fails_with_the_run(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(ODD_IDS)
    result = runner.invoke(app, ["diagram", "--scenario", str(path), "--format", "dot"])
    assert result.exit_code == 2 and "Mermaid sequence diagram only" in result.output
    failing = tmp_path / "failing.yaml"
    failing.write_text(ODD_IDS.replace("state: Stable", "state: Empty"))
    result = runner.invoke(app, ["diagram", "--scenario", str(failing)])
    assert result.exit_code == 1
    assert "sequenceDiagram\n" in result.output and "the run failed" in result.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and re.fullmatch(
        r"groupsim \S+ \((pure|compiled)\)\n", result.output
    )


def test_step_limit_zero_shows_everything_and_negative_is_refused() -> None:
    one = runner.invoke(app, ["step", "seed003-range", "--auto", "--limit", "1"])
    everything = runner.invoke(app, ["step", "seed003-range", "--auto", "--limit", "0"])
    assert "1 events shown" in one.output
    shown = int(re.search(r"(\d+) events shown", everything.output).group(1))  # type: ignore[union-attr]
    assert shown > 10 and everything.exit_code == 0
    assert runner.invoke(app, ["step", "seed003-range", "--limit", "-1"]).exit_code == 2


def test_negative_seed_is_refused_like_in_a_scenario_file() -> None:
    result = runner.invoke(app, ["run", "seed003-range", "--seed", "-1"])
    assert result.exit_code == 2 and "--seed" in result.output
    assert runner.invoke(app, ["run", "seed003-range", "--seed", "0", "-q"]).exit_code == 0
