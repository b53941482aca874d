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


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("base: base.yaml\nseed: 9223372036854775808\n", "seed"),
        ("base: base.yaml\nseed: -1\n", "seed"),
        ("base: base.yaml\nseeds: [1, 18446744073709551615]\n", "seeds[1]"),
        ("base: base.yaml\nseed: 9223372036854775807\nseeds: 2\n", "seeds"),
        ("base: base.yaml\nseeds: 100000000000\n", "seeds"),
    ],
)
def test_seeds_must_fit_the_bigint_column(base_dir: Path, text: str, where: str) -> None:
    with pytest.raises(SweepError) as info:
        parse_sweep(text, base_dir=base_dir)
    (issue,) = info.value.issues
    assert issue.path == where and issue.line is not None


def test_extreme_seeds_that_fit_are_kept(base_dir: Path) -> None:
    sweep = parse_sweep("base: base.yaml\nseeds: [0, 9223372036854775807]\n", base_dir=base_dir)
    assert sweep.seeds == (0, 2**63 - 1)


def test_hostile_sweep_and_base_files(tmp_path: Path) -> None:
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    (tmp_path / "bomb.yaml").write_text("base: base.yaml\n" + "\n".join(bomb) + "\n")
    with pytest.raises(SweepError, match="once aliases are expanded"):
        load_sweep(tmp_path / "bomb.yaml")
    (tmp_path / "latin.yaml").write_bytes(b"sweep: caf\xe9\n")
    with pytest.raises(SweepError, match=r"latin\.yaml:1:11: not UTF-8"):
        load_sweep(tmp_path / "latin.yaml")
    (tmp_path / "base.yaml").write_bytes(b"version: 1\nname: caf\xe9\n")
    with pytest.raises(SweepError) as info:
        parse_sweep("base: base.yaml\n", base_dir=tmp_path)
    assert any("not UTF-8" in i.message and i.line == 2 for i in info.value.issues)
