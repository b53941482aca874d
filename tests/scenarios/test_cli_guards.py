"""Guards of `groupsim run` before any work: output paths, the simulated-time ceiling; and the
simulated-time progress display, which must not change a single event (issue 15)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from scenarios.cli import MAX_SIMULATED_MS, app
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario

LONG = """\
version: 1
name: long
cluster: {topics: {T1: 2}}
consumers: [{id: C1, group: g1, topics: [T1]}]
timeline: [{at: 0s, start: all}]
until: 10000h
"""


def test_until_past_the_ceiling_needs_allow_long(tmp_path: Path) -> None:
    path = tmp_path / "long.yaml"
    path.write_text(LONG)
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert "past the 6h ceiling" in result.output and "--allow-long" in result.output
    short = path.with_name("short.yaml")
    short.write_text(LONG.replace("10000h", "1m"))
    assert CliRunner().invoke(app, ["run", str(short), "--until", "7h"]).exit_code == 2
    assert CliRunner().invoke(app, ["run", str(short), "--until", "6h", "-q"]).exit_code == 0


def test_log_in_a_missing_folder_is_refused_before_running(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "events.jsonl"
    result = CliRunner().invoke(app, ["run", "rolling-restart-dynamic", "--log", str(target)])
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output
    assert "expectations" not in result.output  # nothing was run
    result = CliRunner().invoke(app, ["run", "rolling-restart-dynamic", "--log", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.output


def test_progress_reports_simulated_time_and_keeps_the_events() -> None:
    s = load_scenario(LONG.replace("10000h", "5m"))
    seen: list[tuple[int, int]] = []
    with_progress = run_scenario(s, progress=lambda now, end: seen.append((now, end)))
    plain = run_scenario(s)
    assert with_progress.events == plain.events
    assert seen[-1] == (300_000, 300_000)
    assert [now for now, _ in seen] == sorted(now for now, _ in seen)
    assert len(seen) >= 5  # one report per simulated minute at least
    assert MAX_SIMULATED_MS == 6 * 3_600_000


LATE = """\
version: 1
name: late
cluster: {topics: {T1: 2}}
consumers: [{id: C1, group: g, topics: [T1]}]
timeline:
  - {at: 0s, start: all}
  - {at: 50s, crash: C1}
expect:
  - {at: 60s, state: Stable}
  - {state: Stable}
until: 40s
"""


def test_steps_and_expectations_after_until_are_validation_errors(tmp_path: Path) -> None:
    path = tmp_path / "late.yaml"
    path.write_text(LATE)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "late.yaml:7:5: timeline[1].at: this step at 50000 ms is after `until`" in result.output
    assert "late.yaml:9:5: expect[0].at: this expectation at 60000 ms" in result.output
    assert CliRunner().invoke(app, ["validate", "-"]).exit_code == 2  # no such file: no traceback
    load_scenario(LATE.replace("until: 40s", "until: 60s"))  # at `until` itself is fine


def test_a_refused_step_names_its_line() -> None:
    text = (
        "version: 1\nname: reopen\ncluster: {topics: {T1: 2}}\n"
        "consumers: [{id: C1, group: g, topics: [T1]}]\n"
        "timeline:\n  - {at: 0s, start: all}\n  - {at: 10s, close: C1}\n  - {at: 10s, start: C1}\n"
    )
    result = run_scenario(load_scenario(text))
    assert not result.passed and result.error is not None
    assert result.error.startswith("<text>:8:5: timeline[2]: `start` refused at t=10000ms: ")
    assert "still closing" in result.error and "simulation.py" not in result.error
