"""Output that still reads at 2,000 members: summaries instead of empty tables, assign --json and
--owned, and an honest verdict for a run without expectations (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scenarios.cli import app
from scenarios.summary import summarize

OWNED = "C0=T1-0,T1-1,T1-2,T2-0,T2-1,T2-2;C1=T1-3,T1-4,T1-5,T2-3,T2-4,T2-5"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _assign(runner: CliRunner, *args: str) -> dict:
    result = runner.invoke(app, ["assign", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_summarize_counts_and_moves() -> None:
    figures = summarize(
        {"A": ["t-0", "t-1", "u-0"], "B": ["t-2"], "C": []},
        owned={"A": ["t-0", "t-2"], "B": ["t-1"]},
    )
    assert figures["members"] == 3 and figures["partitions"] == 4
    assert figures["partitions_per_member"] == {"min": 0, "median": 1, "max": 3, "mean": 1.333}
    assert figures["imbalance"] == 3 and figures["members_without_partitions"] == 1
    assert figures["topics_per_member"] == {"min": 0, "max": 2}
    assert (figures["moved"], figures["revoked"]) == (2, 2)  # t-1 and t-2 swapped owners


def test_assign_at_2000_members_prints_a_summary(runner: CliRunner) -> None:
    result = runner.invoke(app, ["assign", "-t", "T1:4000,T2:100", "-m", "C{0..1999}"])
    assert result.exit_code == 0, result.output
    assert len(result.output) < 2000  # not 108 KB of borders
    assert "2000 members" in result.output and "imbalance" in result.output
    assert "min / median / max | 2 / 2 / 3 |" in " ".join(result.output.split())
    small = runner.invoke(app, ["assign", "-t", "T1:3", "-m", "C0,C1"])
    assert "| C0   | C1   |" in small.output  # small groups keep the seeds' table
    forced = runner.invoke(app, ["assign", "-t", "T1:40", "-m", "C{0..39}", "--table"])
    assert "C39" in forced.output and "imbalance" not in forced.output


def test_assign_json(runner: CliRunner) -> None:
    doc = _assign(runner, "-t", "T1:3", "-m", "C0,C1")
    assert doc["assignment"] == {"C0": ["T1-0", "T1-1"], "C1": ["T1-2"]}
    assert doc["summary"]["imbalance"] == 1 and "moved" not in doc["summary"]


def test_owned_shows_stickiness_and_cooperative_moves(runner: CliRunner, tmp_path: Path) -> None:
    common = ["-t", "T1:6,T2:6", "-m", "C0,C1,C2", "--owned", OWNED]
    moved = {
        a: (_assign(runner, *common, "-a", a)["summary"]["moved"])
        for a in ("range", "sticky", "cooperative-sticky")
    }
    # range ignores owners; sticky moves only what balance needs (4); cooperative-sticky holds
    # back partitions that change owner until their owner has revoked them (KIP-429)
    assert moved == {"range": 6, "sticky": 4, "cooperative-sticky": 0}
    coop = _assign(runner, *common, "-a", "cooperative-sticky")
    assert coop["summary"]["revoked"] == 4 and coop["assignment"]["C2"] == []
    owners = tmp_path / "owners.yaml"
    owners.write_text(
        "C0: [T1-0, T1-1, T1-2, T2-0, T2-1, T2-2]\nC1: [T1-3, T1-4, T1-5, T2-3, T2-4, T2-5]\n"
    )
    from_file = _assign(runner, *common[:-1], str(owners), "-a", "sticky")
    assert from_file["summary"]["moved"] == 4


@pytest.mark.parametrize(
    ("owned", "words"),
    [
        ("C9=T1-0", "not one of the members"),
        ("C0=T1-0;C1=T1-0", "owned by both"),
        ("C0=nonsense", "not a topic-partition"),
        ("nofile.yaml", "not a file"),
    ],
)
def test_bad_owned_is_exit_2(runner: CliRunner, owned: str, words: str) -> None:
    result = runner.invoke(app, ["assign", "-t", "T1:3", "-m", "C0,C1", "--owned", owned])
    assert result.exit_code == 2 and words in result.output, result.output


def test_run_at_scale_summarises_the_group(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(
        "version: 1\nname: big\ncluster: {topics: {T1: 100}}\n"
        "defaults: {partition.assignment.strategy: [range]}\n"
        'consumers: [{count: 40, id: "C{i}", group: g1, topics: [T1]}]\n'
        "timeline: [{at: 0s, start: all}]\nuntil: 10s\n"
    )
    result = runner.invoke(app, ["run", str(path), "--brief"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "summary of 40 members" in flat and "min / median / max | 2 / 3 / 3 |" in flat
    assert "big: ran (no expectations)" in result.output and "passed" not in result.output
    full = runner.invoke(app, ["run", str(path), "--brief", "--table"])
    assert "C39" in full.output and "summary of" not in full.output
