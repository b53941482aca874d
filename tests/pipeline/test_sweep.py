"""Sweeps on Spark: the rows equal running the same scenarios directly; broken rows are rows."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pipeline.report import write_sweep_report
from pipeline.runrow import (
    REBALANCE_COLUMNS,
    RUN_COLUMNS,
    RUNS_SCHEMA_VERSION,
    RowTask,
    run_rows,
)
from pipeline.spec import load_sweep
from pipeline.sweep import read_manifest, run_sweep

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

BASE = """\
version: 1
name: restart-one
description: a small group; one member restarts
cluster:
  brokers: 1
  topics:
    T1: 6
defaults:
  partition.assignment.strategy: [range]
consumers:
  - id: "C{i}"
    count: 3
    group: g1
    topics: [T1]
timeline:
  - at: 0s
    start: all
  - at: 10s
    restart: C0
until: 40s
"""

SWEEP = """\
sweep: tiny
description: eager vs cooperative vs static vs the consumer protocol, two group sizes
base: base.yaml
seeds: [3, 11]
variants:
  eager: {defaults.partition.assignment.strategy: [range]}
  cooperative: {defaults.partition.assignment.strategy: [cooperative-sticky]}
  static: {consumers.static: true}
  kip848: {defaults.group.protocol: consumer, defaults.group.remote.assignor: range}
  broken: {cluster.brokers: many}
grid:
  consumers.count: [2, 3]
"""


@pytest.fixture(scope="module")
def swept(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("sweep")
    (root / "base.yaml").write_text(BASE, encoding="utf-8")
    (root / "sweep.yaml").write_text(SWEEP, encoding="utf-8")
    sweep = load_sweep(root / "sweep.yaml")
    seen: list[tuple[int, int]] = []
    summary = run_sweep(
        spark, sweep, str(root / "out"), tasks=3, progress=lambda d, t: seen.append((d, t))
    )
    return {"root": root, "sweep": sweep, "summary": summary, "spark": spark}


def _clean(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        clean = {}
        for c in columns:
            if c == "wall_ms":
                continue
            v = row[c]
            if isinstance(v, float) and math.isnan(v):
                v = None
            clean[c] = dict(v) if c == "params" and v is not None else v
        out.append(clean)
    return out


def test_rows_equal_running_the_scenarios_directly(swept: dict[str, Any]) -> None:
    spark, sweep, root = swept["spark"], swept["sweep"], swept["root"]
    got_runs = [
        r.asDict()
        for r in spark.read.parquet(str(root / "out" / "runs")).orderBy("scenario_id").collect()
    ]
    got_rebs = [
        r.asDict()
        for r in spark.read.parquet(str(root / "out" / "rebalances"))
        .orderBy("scenario_id", "start_ms", "group_id")
        .collect()
    ]
    want_runs, want_rebs = run_rows(
        RowTask(sweep.base_text, sweep.base_source, sweep.until_ms),
        [r.as_dict() for r in sweep.rows()],
    )
    want_rebs.sort(key=lambda r: (r["scenario_id"], r["start_ms"], r["group_id"]))
    assert len(got_runs) == sweep.size == 20
    assert _clean(got_runs, RUN_COLUMNS) == _clean(want_runs, RUN_COLUMNS)
    assert _clean(got_rebs, REBALANCE_COLUMNS) == _clean(want_rebs, REBALANCE_COLUMNS)
    assert swept["summary"].runs == 20 and swept["summary"].rebalances == len(want_rebs)
    assert all(r["wall_ms"] > 0 for r in got_runs)


def test_a_broken_row_is_a_row_with_its_error(swept: dict[str, Any]) -> None:
    spark, root = swept["spark"], swept["root"]
    runs = spark.read.parquet(str(root / "out" / "runs"))
    broken = runs.where("variant = 'broken'").collect()
    assert len(broken) == 4 and swept["summary"].failed == 4
    assert all("brokers" in r["error"] for r in broken)
    assert all(r["error"] is None for r in runs.where("variant != 'broken'").collect())
    assert {r["membership"] for r in runs.where("variant = 'static'").collect()} == {"static"}
    assert {r["protocol"] for r in runs.where("variant = 'cooperative'").collect()} == {
        "cooperative"
    }


def test_the_protocol_is_a_dimension_with_the_same_measures(swept: dict[str, Any]) -> None:
    """A KIP-848 variant of a classic base: same columns, both datasets, measured the same way."""
    spark, root = swept["spark"], swept["root"]
    runs = spark.read.parquet(str(root / "out" / "runs"))
    tags = {
        (r["variant"], r["group_protocol"], r["protocol"], r["assignor"])
        for r in runs.where("error IS NULL").collect()
    }
    assert tags == {
        ("eager", "classic", "eager", "range"),
        ("cooperative", "classic", "cooperative", "cooperative-sticky"),
        ("static", "classic", "eager", "range"),
        ("kip848", "consumer", "consumer", "range"),  # the base's strategy was dropped
    }
    kip = runs.where("variant = 'kip848'").collect()
    # KIP-848 states (the consumer group's, not the classic group's)
    assert {r["final_state"] for r in kip} <= {"Stable", "Reconciling", "Assigning"}
    assert all(r["rebalances"] >= 2 for r in kip)
    # the restart of C0 at 10 s: its partitions go unowned until the new owners' heartbeat
    assert all(r["unowned_partition_ms"] > 0 and r["last_change_ms"] > 10_000 for r in kip)
    assert all(r["rounds"] >= r["rebalances"] for r in runs.where("error IS NULL").collect())
    rebs = spark.read.parquet(str(root / "out" / "rebalances")).where("variant = 'kip848'")
    assert {r["group_protocol"] for r in rebs.collect()} == {"consumer"}
    assert rebs.count() == sum(r["rebalances"] for r in kip)


def test_manifest_and_report(swept: dict[str, Any]) -> None:
    spark, root = swept["spark"], swept["root"]
    manifest = read_manifest(spark, str(root / "out"))
    assert manifest["sweep"] == "tiny" and manifest["rows"] == 20 and manifest["seeds"] == [3, 11]
    report = write_sweep_report(spark, str(root / "out"), root / "report")
    text = report.read_text(encoding="utf-8")
    for heading in ("Per variant", "by assignor", "eager vs cooperative", "dynamic vs static"):
        assert heading in text
    assert "| broken |  |  |  | 4 | 4 |" in text  # no protocol/assignor; runs, failed
    assert "| kip848 | consumer | consumer | range | 4 | 0 |" in text
    assert "## Failed runs" in text
    pngs = sorted(p.name for p in (root / "report").glob("*.png"))
    assert "variants.png" in pngs and "stop_the_world.png" in pngs
    assert all((root / "report" / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    for png in pngs:
        assert f"]({png})" in text


def test_a_version_1_sweep_output_is_still_read(swept: dict[str, Any]) -> None:
    """Before runs_schema_version 2: unowned_partition_seconds and a design-measure column."""
    import json
    import shutil

    from pyspark.sql import functions as F

    from pipeline.report import load_views

    spark, root = swept["spark"], swept["root"]
    old = root / "v1"
    runs = spark.read.parquet(str(root / "out" / "runs"))
    runs.withColumn("unowned_partition_seconds", F.col("unowned_partition_ms") / 1000.0).withColumn(
        "unowned_partition_ms", F.lit(-1).cast("bigint")
    ).drop("group_protocol", "rounds", "last_change_ms").write.parquet(str(old / "runs"))
    shutil.copytree(root / "out" / "rebalances", old / "rebalances")
    manifest = read_manifest(spark, str(root / "out"))
    assert manifest.pop("runs_schema_version") == RUNS_SCHEMA_VERSION
    (old / "sweep").mkdir()
    (old / "sweep" / "part-0.txt").write_text(json.dumps(manifest) + "\n", encoding="utf-8")

    load_views(spark, str(old))
    got = {
        r["scenario_id"]: r["unowned_partition_ms"]
        for r in spark.sql("SELECT scenario_id, unowned_partition_ms FROM runs").collect()
    }
    want = {r["scenario_id"]: r["unowned_partition_ms"] for r in runs.collect()}
    assert got == want and any(v for v in want.values())
    # columns version 1 lacked read as null
    assert (
        spark.sql("SELECT count(*) AS n FROM runs WHERE group_protocol IS NOT NULL").first()[0] == 0
    )


def test_the_arrow_engine_gives_the_same_rows(swept: dict[str, Any]) -> None:
    """mapInPandas (what Spark Connect uses) and mapPartitions produce identical datasets."""
    spark, sweep, root = swept["spark"], swept["sweep"], swept["root"]
    run_sweep(spark, sweep, str(root / "arrow"), tasks=2, engine="arrow")

    def rows(out: str, name: str, order: list[str]) -> list[dict[str, Any]]:
        df = spark.read.parquet(str(root / out / name)).orderBy(*order)
        cols = RUN_COLUMNS if name == "runs" else REBALANCE_COLUMNS
        return _clean([r.asDict() for r in df.collect()], cols)

    for name, order in (("runs", ["scenario_id"]), ("rebalances", ["scenario_id", "start_ms"])):
        got, want = rows("arrow", name, order), rows("out", name, order)
        diffs = [
            {k: (a[k], b[k]) for k in a if a[k] != b[k]}
            for a, b in zip(got, want, strict=True)
            if a != b
        ]
        assert diffs == [], f"{name}: {diffs[:2]}"
