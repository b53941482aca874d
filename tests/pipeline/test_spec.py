"""Sweep files: deterministic expansion and located validation errors (no Spark needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.spec import SweepError, load_sweep, parse_sweep

BASE = """\
version: 1
name: tiny
cluster:
  brokers: 1
  topics: {T1: 4}
consumers:
  - {id: "C{i}", count: 2, group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
"""


@pytest.fixture
def base_dir(tmp_path: Path) -> Path:
    (tmp_path / "base.yaml").write_text(BASE, encoding="utf-8")
    return tmp_path


def test_expansion_order_ids_and_seeds(base_dir: Path) -> None:
    sweep = parse_sweep(
        "base: base.yaml\nseeds: 2\nseed: 5\n"
        "variants:\n  a: {x.y: 1}\n  b: {x.y: 2}\n"
        "grid:\n  consumers.count: [1, 2]\n  k: [[r], [s]]\n",
        base_dir=base_dir,
    )
    rows = sweep.rows()
    assert sweep.size == len(rows) == 2 * 2 * 2 * 2
    assert [r.scenario_id for r in rows] == list(range(16))
    assert [r.seed for r in rows[:4]] == [5, 6, 5, 6]
    assert rows[0].variant == "a" and rows[8].variant == "b"
    assert [r.point for r in rows[::2]] == list(range(8))
    assert dict(rows[2].params) == {"consumers.count": "1", "k": '["s"]'}  # last key fastest
    assert rows[2].overrides == '{"consumers.count":1,"k":["s"],"x.y":1}'
    assert [r.as_dict() for r in rows] == [r.as_dict() for r in sweep.rows()]


def test_no_variants_means_one_base_variant(base_dir: Path) -> None:
    sweep = parse_sweep("base: base.yaml\n", base_dir=base_dir)
    (row,) = sweep.rows()
    assert row.variant == "base" and row.seed == 0 and row.overrides == "{}"


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "sweep: x\nbase: missing.yaml\nseeds: 0\ngrdi: {}\ngrid:\n  a.b: 3\nuntil: 5 parsecs\n",
        encoding="utf-8",
    )
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    where = {(i.path, i.line) for i in info.value.issues}
    assert where == {("base", 2), ("seeds", 3), ("grdi", 4), ("grid.a.b", 6), ("until", 7)}
    assert "did you mean 'grid'" in info.value.format()
    assert f"{path}:4:1" in info.value.format()


def test_yaml_syntax_error_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("base: [unclosed\n", encoding="utf-8")
    with pytest.raises(SweepError, match=r"s\.yaml:\d+:\d+"):
        load_sweep(path)
    with pytest.raises(SweepError, match="no such sweep file"):
        load_sweep(tmp_path / "nope.yaml")


def test_invalid_base_scenario_is_a_sweep_error(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("version: 1\nconsumers: 7\n", encoding="utf-8")
    with pytest.raises(SweepError, match="base scenario is invalid"):
        parse_sweep("base: base.yaml\n", base_dir=tmp_path)
