"""The pipeline's groupsim commands, end to end through the typer app (one shared JVM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coordinator.placement import partition_for
from scenarios.cli import app

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def test_placement_command(spark: Any, tmp_path: Path) -> None:
    ids = [f"team-{i}" for i in range(200)] + ["polygenelubricants"]
    path = tmp_path / "ids.txt"
    path.write_text("\n".join(ids) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["placement", str(path), "--partitions", "10", "--brokers", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "201 groups" in result.output and "0 mismatches" in result.output
    busiest = max(range(10), key=lambda p: (sum(partition_for(i, 10) == p for i in ids), -p))
    count = sum(partition_for(i, 10) == busiest for i in ids)
    assert f"| {busiest} | {busiest % 2} | {count} |" in result.output


def test_log_report_command(spark: Any, tmp_path: Path) -> None:
    events = [
        {
            "seq": 0,
            "t_ms": 0,
            "event": "group_state_changed",
            "node": "broker-0",
            "group_id": "g",
            "state_from": "Empty",
            "state_to": "PreparingRebalance",
            "generation_id": 0,
        },
        {
            "seq": 1,
            "t_ms": 40,
            "event": "group_state_changed",
            "node": "broker-0",
            "group_id": "g",
            "state_from": "PreparingRebalance",
            "state_to": "CompletingRebalance",
            "generation_id": 1,
        },
        {
            "seq": 2,
            "t_ms": 50,
            "event": "group_state_changed",
            "node": "broker-0",
            "group_id": "g",
            "state_from": "CompletingRebalance",
            "state_to": "Stable",
            "generation_id": 1,
        },
        {
            "seq": 3,
            "t_ms": 90,
            "event": "response_sent",
            "node": "broker-0",
            "group_id": "g",
            "api": "SyncGroup",
            "error": "UNKNOWN_MEMBER_ID",
        },
    ]
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["log-report", str(log), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "UNKNOWN_MEMBER_ID" in result.output
    assert "| run.jsonl | g | 1 | 50.00 |" in result.output  # one rebalance of 50 ms
    assert (out / "report.md").exists() and (out / "state_times.parquet").exists()


def test_bad_inputs_exit_2_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "sweep.yaml"
    bad.write_text("base: nowhere.yaml\nseeds: -1\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["sweep", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{bad}:1:7" in result.output and f"{bad}:2:8" in result.output
    result = runner.invoke(app, ["log-report", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2 and "no such log file" in result.output
    result = runner.invoke(app, ["sweep-report", str(tmp_path), "-o", str(tmp_path / "r")])
    assert result.exit_code == 2 and "no runs/ dataset" in result.output


def test_sweep_command_with_report(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "version: 1\nname: two\ncluster: {brokers: 1, topics: {T: 4}}\n"
        'consumers:\n  - {id: "C{i}", count: 2, group: g, topics: [T]}\n'
        "timeline:\n  - {at: 0s, start: all}\nuntil: 10s\n",
        encoding="utf-8",
    )
    (tmp_path / "sweep.yaml").write_text(
        "sweep: two\nbase: base.yaml\nseeds: [1, 2]\n", encoding="utf-8"
    )
    out, report = tmp_path / "out", tmp_path / "report"
    result = CliRunner().invoke(
        app, ["sweep", str(tmp_path / "sweep.yaml"), "--out", str(out), "--report", str(report)]
    )
    assert result.exit_code == 0, result.output
    assert "2 runs (0 failed)" in result.output
    assert (out / "runs").is_dir() and (out / "rebalances").is_dir()
    assert "# Sweep report: two" in (report / "report.md").read_text(encoding="utf-8")


def test_sweep_with_failed_rows_lists_them_and_exits_1(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "version: 1\nname: two\ncluster: {brokers: 1, topics: {T: 4}}\n"
        'consumers:\n  - {id: "C{i}", count: 2, group: g, topics: [T]}\n'
        "timeline:\n  - {at: 0s, start: all}\nuntil: 10s\n",
        encoding="utf-8",
    )
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "sweep: two\nbase: base.yaml\nseeds: [1]\ngrid:\n  consumers[0].count: [2, -1]\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    result = runner.invoke(app, ["sweep", str(sweep), "--output", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "1 of 2 runs failed" in result.output
    assert "row 1 (variant base, seed 1): 1 error in scenario; " in result.output
    assert "consumers[0].count" in result.output
    allowed = runner.invoke(
        app, ["sweep", str(sweep), "--out", str(tmp_path / "out2"), "--allow-failures"]
    )
    assert allowed.exit_code == 0 and "1 of 2 runs failed" in allowed.output
