"""bench server_assignors: the grid of Kafka's ServerSideAssignorBenchmark and its slices."""

from __future__ import annotations

import pytest

from bench.server_assignors import FULL_AXES, Timed, grid, main, parse_axes, summary


def test_full_grid_is_kafkas_720_combinations() -> None:
    cases = grid(quick=False, full=True)
    assert len(cases) == 5 * 3 * 3 * 2 * 2 * 2 * 2 == 720
    assert len({c.label for c in cases}) == 720
    assert {c.members for c in cases} == set(FULL_AXES["members"])


def test_an_axis_flag_replaces_that_axis_only() -> None:
    axes = parse_axes(["--members=100,500", "--topics=1000", "--quick", "--only=x"])
    assert axes == {"members": (100, 500), "topics": (1000,)}
    cases = grid(quick=True, full=False, axes=axes, assignors=("uniform",))
    assert {(c.members, c.ratio, c.topics) for c in cases} == {(100, 10, 1000), (500, 10, 1000)}
    assert {c.assignor for c in cases} == {"uniform"}
    assert len(cases) == 2 * 2 * 2  # members x subscription types x FULL/INCREMENTAL


@pytest.mark.parametrize("arg", ["--members=", "--ratios=0", "--topics=10,x", "--members=-5"])
def test_a_bad_axis_is_named(arg: str) -> None:
    with pytest.raises(ValueError, match=arg.split("=")[0]):
        parse_axes([arg])


def test_the_command_refuses_a_bad_flag_without_running(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ratios=five"]) == 2
    assert main(["--assignor=sticky"]) == 2
    out = capsys.readouterr().out
    assert "--ratios=five" in out and "--assignor=sticky" in out


def test_the_summary_counts_wins_and_cases_below_cpythons_floor() -> None:
    rows = [
        Timed(python=0.5, java=1.0, python_read=2.0, java_read=1.5, read_floor=0.2),
        Timed(python=2.0, java=1.0, python_read=1.0, java_read=1.5, read_floor=1.5),
        Timed(python=1.0, java=1.0, python_read=3.0, java_read=2.0, read_floor=0.1),
        Timed(python=1.0, java=0.0, python_read=1.0, java_read=0.0, read_floor=9.0),  # no tick
    ]
    assert summary(rows) == (
        "summary: at or below Java on 2 of 3 cases (assign), 1 of 3 (assign + read); "
        "CPython's read loop alone >= Java's assign + read on 1 of 3"
    )
    assert "no case" in summary(rows[3:])
