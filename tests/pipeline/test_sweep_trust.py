"""Sweep files follow the scenarios' trust model (README, "Trust"): no code unless allowed.

A sweep's base scenario, its variants and its grid values may set ``partition.assignment.strategy``;
a ``module:Class`` name anywhere in them imports that module, so it needs ``allow_code``
(``groupsim sweep --allow-code``) and is otherwise refused at the sweep file's line before Spark
starts. No Spark needed here: rows run through ``pipeline.runrow.run_row`` like the executors'.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.runrow import RowTask, run_row
from pipeline.spec import SweepError, load_sweep
from scenarios.cli import app
from tests.scenarios.test_trust import ASSIGNOR_MODULE, scenario

PLAIN_BASE = scenario("range").replace(
    "  - {state: Stable, assignment: {C0: [T1-0, T1-1], C1: []}}\n", "  - {state: Stable}\n"
)


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    marker = tmp_path / "imported.txt"
    (tmp_path / "sweeptrust_mod.py").write_text(
        ASSIGNOR_MODULE.format(marker=str(marker), name="all-to-first-sweep")
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield marker
    sys.modules.pop("sweeptrust_mod", None)


def _files(tmp_path: Path, base: str, sweep: str) -> Path:
    (tmp_path / "base.yaml").write_text(base, encoding="utf-8")
    path = tmp_path / "sweep.yaml"
    path.write_text(sweep, encoding="utf-8")
    return path


VARIANT_SWEEP = """\
sweep: trust
base: base.yaml
variants:
  plain: {}
  mine: {defaults.partition.assignment.strategy: ["sweeptrust_mod:AllToFirst"]}
"""

GRID_SWEEP = """\
sweep: trust
base: base.yaml
grid:
  defaults.partition.assignment.strategy:
    - [range]
    - sweeptrust_mod:AllToFirst
"""


def test_code_in_the_base_scenario_needs_permission(tmp_path: Path, user_module: Path) -> None:
    path = _files(tmp_path, scenario("sweeptrust_mod:AllToFirst"), "base: base.yaml\n")
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    assert any(i.line == 4 and "names Python code" in i.message for i in info.value.issues)
    assert not user_module.exists()
    assert load_sweep(path, allow_code=True).allow_code
    assert user_module.exists()  # allowed names are imported at validation


@pytest.mark.parametrize(("sweep", "line"), [(VARIANT_SWEEP, 5), (GRID_SWEEP, 6)])
def test_code_in_a_variant_or_grid_value_is_refused_at_its_line(
    tmp_path: Path, user_module: Path, sweep: str, line: int
) -> None:
    path = _files(tmp_path, PLAIN_BASE, sweep)
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    (issue,) = info.value.issues
    assert issue.source == str(path) and issue.line == line, issue.format()
    assert "sweeptrust_mod:AllToFirst" in issue.message and "--allow-code" in (issue.hint or "")
    assert not user_module.exists()


def test_allowed_variant_runs_the_custom_assignor(tmp_path: Path, user_module: Path) -> None:
    sweep = load_sweep(_files(tmp_path, PLAIN_BASE, VARIANT_SWEEP), allow_code=True)
    mine = next(r for r in sweep.rows() if r.variant == "mine").as_dict()
    task = RowTask(sweep.base_text, sweep.base_source, sweep.until_ms, sweep.allow_code)
    run, _ = run_row(task, mine)
    assert run["error"] is None and run["assignor"] == "sweeptrust_mod:AllToFirst"
    # a row task without the permission refuses the same row (the executors check it again)
    run, _ = run_row(RowTask(sweep.base_text, sweep.base_source, sweep.until_ms), mine)
    assert "names Python code" in run["error"]


def test_allowed_but_missing_module_is_an_error_at_the_variant_line(tmp_path: Path) -> None:
    path = _files(tmp_path, PLAIN_BASE, VARIANT_SWEEP.replace("sweeptrust_mod", "no_such_xyz"))
    with pytest.raises(SweepError) as info:
        load_sweep(path, allow_code=True)
    (issue,) = info.value.issues
    assert issue.line == 5 and "cannot be loaded" in issue.message


def test_cli_refuses_before_spark_starts(tmp_path: Path, user_module: Path) -> None:
    path = _files(tmp_path, PLAIN_BASE, VARIANT_SWEEP)
    result = CliRunner().invoke(app, ["sweep", str(path), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2 and "sweep.yaml:5:" in result.output, result.output
    assert not (tmp_path / "out").exists() and not user_module.exists()
