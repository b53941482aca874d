"""The groupsim command line through typer's CliRunner: exit codes, JSON against the schema,
plain output (no ANSI escapes) when not writing to a terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scenarios.cli import app
from tests.scenarios.schema_check import errors

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "result-schema.json").read_text(encoding="utf-8"))
ANSI = re.compile(r"\x1b\[")

GOOD = """\
version: 1
name: two
cluster: {topics: {T1: 4}}
defaults: {session.timeout.ms: 10s, partition.assignment.strategy: [range]}
consumers:
  - {count: 2, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
  - {at: 15s, crash: C2}
expect:
  - {at: 10s, state: Stable, generation: 1, assignment: {C1: [T1-0, T1-1], C2: [T1-2, T1-3]}}
  - {state: Stable, generation: 2, members: [C1], assignment: {C1: [T1-0..3]}}
"""


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def good(tmp_path: Path) -> Path:
    p = tmp_path / "good.yaml"
    p.write_text(GOOD, encoding="utf-8")
    return p


def test_run_shows_timeline_tables_and_results(runner, good):
    result = runner.invoke(app, ["run", str(good)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert not ANSI.search(out), "plain text when not a terminal"
    assert "group g1: Empty -> PreparingRebalance" in out
    assert "broker-0 -> C1  JoinGroup response  MEMBER_ID_REQUIRED" in out
    assert ">> crash C2" in out
    assert "| C1   |" in out and "| T1-3 |" in out, "assignment table, one column per member"
    assert "PASS" in out and "2/2 expectations hold: passed" in out


def test_brief_tells_only_the_story(runner, good):
    result = runner.invoke(app, ["run", "--brief", str(good)])
    assert result.exit_code == 0
    out = result.output
    assert "generation 1 assignment -> C1: [T1-0, T1-1]   C2: [T1-2, T1-3]" in out
    assert "generation 2 assignment -> C1: [T1-0, T1-1, T1-2, T1-3]" in out
    assert "JoinGroup request" not in out


def test_failed_expectation_exits_1_and_says_why(runner, tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(GOOD.replace("generation: 2,", "generation: 9,"), encoding="utf-8")
    result = runner.invoke(app, ["run", "--quiet", str(p)])
    assert result.exit_code == 1
    assert "FAIL" in result.output and "generation: expected 9, got 2" in result.output
    assert "timeline" not in result.output, "--quiet leaves the timeline out"


def test_invalid_file_exits_2(runner, tmp_path):
    p = tmp_path / "invalid.yaml"
    p.write_text(GOOD.replace("crash: C2", "crash: C7"), encoding="utf-8")
    result = runner.invoke(app, ["run", str(p)])
    assert result.exit_code == 2
    assert "invalid.yaml:9:22: timeline[1].crash: unknown consumer `C7`" in result.output
    assert "Traceback" not in result.output


def test_json_matches_the_documented_schema(runner, good):
    result = runner.invoke(app, ["run", "--json", str(good)])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert errors(doc, SCHEMA) == []
    assert doc["passed"] is True
    (g,) = doc["groups"]
    assert g["state"] == "Stable" and g["generation"] == 2
    assert g["assignment"] == {"C1": ["T1-0", "T1-1", "T1-2", "T1-3"]}
    assert len(doc["rebalances"]) == 2


def test_json_of_a_library_lesson_with_raw_requests_matches_the_schema(runner):
    result = runner.invoke(app, ["run", "--json", "commit-during-rebalance"])
    doc = json.loads(result.output)
    assert errors(doc, SCHEMA) == []
    assert doc["passed"] is True


def test_the_schema_checker_catches_a_wrong_document():
    assert errors({"schema_version": 1}, SCHEMA)
    doc = {k: None for k in SCHEMA["required"]}
    assert any("expected" in e for e in errors(doc, SCHEMA))


def test_log_until_and_seed(runner, good, tmp_path):
    log = tmp_path / "events.jsonl"
    result = runner.invoke(
        app, ["run", "-q", "--until", "12s", "--log", str(log), "--seed", "3", str(good)]
    )
    assert result.exit_code == 1, "the end expectation wants generation 2, which comes later"
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines and all(e["t_ms"] <= 12_000 for e in lines)
    assert [e["seq"] for e in lines] == list(range(len(lines)))
    assert runner.invoke(app, ["run", "--until", "soon", str(good)]).exit_code == 2


def test_validate(runner, good):
    result = runner.invoke(app, ["validate", str(good), "seed004-roundrobin"])
    assert result.exit_code == 0
    assert "ok (two: 2 consumers" in result.output


def test_assign_prints_the_seed_table(runner):
    result = runner.invoke(
        app, ["assign", "--topics", "t0:3,t1:3", "--members", "C0,C1", "--assignor", "range"]
    )
    assert result.exit_code == 0
    rows = [line for line in result.output.splitlines() if line.startswith("| t")]
    assert rows == ["| t0-0 | t0-2 |", "| t0-1 | t1-2 |", "| t1-0 |      |", "| t1-1 |      |"]


def test_assign_unequal_subscriptions_and_legacy_threads(runner):
    result = runner.invoke(
        app,
        ["assign", "-t", "t0:1,t1:2,t2:3", "-m", "C0:t0;C1:t0,t1;C2:t0,t1,t2", "-a", "roundrobin"],
    )
    assert result.exit_code == 0
    assert "| t0-0 | t1-0 | t1-1 |" in result.output
    result = runner.invoke(app, ["assign", "-t", "T1:10", "-m", "C1*1;C2*2", "-a", "legacy-range"])
    assert result.exit_code == 0
    assert "C2-1" in result.output and "| T1-0 | T1-4 | T1-7 |" in result.output
    bad = runner.invoke(app, ["assign", "-t", "T1", "-m", "C0"])
    assert bad.exit_code == 2 and "NAME:PARTITIONS" in bad.output


def test_coordinator_lookup(runner):
    result = runner.invoke(
        app,
        ["coordinator", "my-group", "polygenelubricants", "--partitions", "50", "--brokers", "3"],
    )
    assert result.exit_code == 0
    assert re.search(r"'my-group'\s+\S\s+-1906497762\s+\S\s+12\s+\S\s+broker-0", result.output)
    assert re.search(
        r"'polygenelubricants'\s+\S\s+-2147483648\s+\S\s+0\s+\S\s+broker-0", result.output
    )


def test_diagrams(runner, good):
    coord = runner.invoke(app, ["diagram"])
    assert coord.exit_code == 0 and "stateDiagram-v2" in coord.output
    assert "CompletingRebalance --> Stable" in coord.output
    client = runner.invoke(app, ["diagram", "--machine", "client", "--format", "dot"])
    assert client.exit_code == 0 and '"COMPLETING_REBALANCE" -> "STABLE"' in client.output
    seq = runner.invoke(app, ["diagram", "--scenario", str(good)])
    assert seq.exit_code == 0
    assert seq.output.startswith("sequenceDiagram")
    assert "C1->>broker_0:" in seq.output and "JoinGroup" in seq.output
    assert runner.invoke(app, ["diagram", "--format", "svg"]).exit_code == 2


def test_step_runs_non_interactively(runner, good):
    result = runner.invoke(app, ["step", str(good)], input="")
    assert result.exit_code == 0
    assert "[g1: Stable, generation 2, leader C1, members C1]" in result.output
    assert runner.invoke(app, ["step", str(good), "--group", "nope"]).exit_code == 2


def test_lessons_and_help(runner):
    result = runner.invoke(app, ["lessons"])
    assert result.exit_code == 0 and "seed003-sticky-member-leaves" in result.output
    for cmd in ("run", "step", "validate", "assign", "coordinator", "diagram", "demo"):
        help_text = runner.invoke(app, [cmd, "--help"]).output
        assert "Example" in help_text, cmd


def test_lessons_show_whole_first_sentences():
    from scenarios.cli_tools import first_sentence

    assert first_sentence("Two consumers own 3 partitions each;\n  at 20 s C3 joins.\nMore.") == (
        "Two consumers own 3 partitions each; at 20 s C3 joins."
    )
    # dots inside names and abbreviations do not end a sentence
    assert first_sentence("group.max.size caps a group, e.g. at 3. Then more.") == (
        "group.max.size caps a group, e.g. at 3."
    )
    assert first_sentence("no sentence end") == "no sentence end"


def test_demo_explains_and_runs_lessons(runner):
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output[-2000:]
    assert "REBALANCES" in result.output
    assert result.output.count("expectations hold: passed") >= 3


def test_output_does_not_depend_on_the_string_hash_seed(tmp_path):
    """Same scenario + seed = the same JSON and log, whatever PYTHONHASHSEED is."""
    import os
    import subprocess
    import sys

    outputs = []
    for hash_seed in ("1", "4242"):
        log = tmp_path / f"log{hash_seed}.jsonl"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "scenarios.cli",
                "run",
                "--json",
                "--log",
                str(log),
                "static-member-fenced",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        outputs.append((done.stdout, log.read_text()))
    assert outputs[0] == outputs[1]


def test_json_of_a_kip848_lesson_matches_the_schema_and_shows_the_consumer_group(runner):
    """A KIP-848 group's result: its state, its group epoch (as generation), protocol consumer,
    each member's current assignment; the text report says 'group epoch'."""
    result = runner.invoke(app, ["run", "--json", "slow-reconciliation"])
    doc = json.loads(result.output)
    assert errors(doc, SCHEMA) == []
    assert doc["passed"] is True
    (g,) = doc["groups"]
    assert (g["state"], g["generation"], g["protocol"], g["leader"]) == (
        "Stable",
        3,
        "consumer",
        None,
    )
    assert g["assignment"] == {
        "C1": ["T1-0", "T1-1"],
        "C2": ["T1-3", "T1-4"],
        "C3": ["T1-2", "T1-5"],
    }
    text = runner.invoke(app, ["run", "slow-reconciliation"]).output
    assert "group g1: Stable, group epoch 3, consumer protocol (KIP-848)" in text
