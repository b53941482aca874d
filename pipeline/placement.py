"""Coordinator placement at scale: which ``__consumer_offsets`` partition (and broker) owns each group.

Kafka: ``partition = Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`` where
``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0. Two ways to get Java's ``String.hashCode`` in Spark:

* ``reflect``: Spark SQL's ``reflect('java.util.Objects', 'hashCode', group_id)`` calls the JVM's
  own ``String.hashCode`` (exact by construction, no Python worker at all; the fastest);
* ``pandas-udf``: a vectorised numpy port (``coordinator.java.java_string_hashcodes``) in an
  Arrow pandas UDF, for deployments that block ``reflect``/``java_method``.

Spark's own ``hash()`` is Murmur3 and unrelated. ANSI SQL is on in Spark 4, so ``abs`` is taken
in BIGINT (``abs(INT_MIN)`` overflows INT).

Which broker leads a partition is decided by Kafka's replica assignment at topic creation, which
starts at a random broker. The simulator fixes that start at broker 0 (the documented
deterministic rule): partition ``p`` is led by broker ``p % brokers``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from coordinator.java import INT_MIN
from coordinator.placement import DEFAULT_OFFSETS_PARTITIONS, partition_for

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

METHODS = ("reflect", "pandas-udf")


def leader_broker(partition: int, brokers: int) -> int:
    """The broker leading ``partition`` when replica assignment starts at broker 0."""
    return partition % brokers


@attrs.frozen
class Load:
    """Load of one partition or broker: how many groups it coordinates."""

    key: int
    groups: int


@attrs.frozen
class Skew:
    """How uneven a load is. ``max_over_mean`` is 1.0 for a perfect spread."""

    mean: float
    stddev: float
    minimum: int
    maximum: int
    max_over_mean: float
    empty: int

    @classmethod
    def of(cls, counts: Sequence[int]) -> Skew:
        n = len(counts)
        mean = sum(counts) / n if n else 0.0
        var = sum((c - mean) ** 2 for c in counts) / n if n else 0.0
        return cls(
            mean=mean,
            stddev=math.sqrt(var),
            minimum=min(counts) if counts else 0,
            maximum=max(counts) if counts else 0,
            max_over_mean=(max(counts) / mean) if mean else 0.0,
            empty=sum(1 for c in counts if c == 0),
        )


@attrs.frozen
class PlacementReport:
    """Per-partition and per-broker coordinator load for a set of group ids."""

    total: int
    num_partitions: int
    brokers: int
    method: str
    partitions: tuple[Load, ...]
    broker_loads: tuple[Load, ...]
    partition_skew: Skew
    broker_skew: Skew
    verified: int = 0
    mismatches: int = 0


def read_ids(spark: SparkSession, path: str, column: str | None = None) -> DataFrame:
    """Group ids as a one-column frame ``group_id``: text (one id a line) or Parquet.

    Every text line is an id, an empty line included (the empty group id is legal in the classic
    protocol's placement arithmetic: it hashes to 0, partition 0).
    """
    from pyspark.sql import functions as F

    p = str(path)
    local = Path(p)
    is_parquet = p.endswith(".parquet") or (
        local.is_dir() and any(local.glob("*.parquet")) and not any(local.glob("*.txt"))
    )
    if not is_parquet:
        return spark.read.text(p).select(F.col("value").alias("group_id"))
    df = spark.read.parquet(p)
    if column is None:
        strings = [f.name for f in df.schema.fields if f.dataType.simpleString() == "string"]
        if "group_id" in df.columns:
            column = "group_id"
        elif len(strings) == 1:
            column = strings[0]
        else:
            raise ValueError(
                f"{p}: cannot tell which column holds the group ids (string columns: "
                f"{', '.join(strings) or 'none'}); name it group_id or pass --column"
            )
    if column not in df.columns:
        raise ValueError(f"{p}: no column {column!r} (columns: {', '.join(df.columns)})")
    return df.select(F.col(column).cast("string").alias("group_id"))


def with_partition(df: DataFrame, num_partitions: int, method: str = "reflect") -> DataFrame:
    """Add ``hash`` (Java ``String.hashCode``, int) and ``partition`` columns to ``group_id``."""
    from pyspark.sql import functions as F

    if num_partitions <= 0:
        raise ValueError(f"--partitions must be positive, got {num_partitions}")
    if method == "reflect":
        h = F.expr("CAST(reflect('java.util.Objects', 'hashCode', group_id) AS INT)")
    elif method == "pandas-udf":
        from pipeline.udfs import java_hash_udf

        h = java_hash_udf()(F.col("group_id"))
    else:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    out = df.withColumn("hash", h)
    hb = F.col("hash").cast("bigint")
    kafka_abs = F.when(hb == F.lit(INT_MIN), F.lit(0)).otherwise(F.abs(hb))
    return out.withColumn("partition", (kafka_abs % F.lit(num_partitions)).cast("int"))


def place(
    spark: SparkSession,
    df: DataFrame,
    *,
    num_partitions: int = DEFAULT_OFFSETS_PARTITIONS,
    brokers: int = 1,
    method: str = "reflect",
    verify: int = 10_000,
) -> PlacementReport:
    """Count groups per partition and per broker; check ``verify`` ids against the Python function."""
    from pyspark.sql import functions as F

    if brokers <= 0:
        raise ValueError(f"--brokers must be positive, got {brokers}")
    # A null id (possible in Parquet) names no group; it is skipped, not placed.
    placed = with_partition(df.where(F.col("group_id").isNotNull()), num_partitions, method)
    rows = placed.groupBy("partition").agg(F.count(F.lit(1)).alias("n")).collect()
    per_partition = {int(r["partition"]): int(r["n"]) for r in rows}
    partitions = tuple(Load(p, per_partition.get(p, 0)) for p in range(num_partitions))
    per_broker = [0] * brokers
    for load in partitions:
        per_broker[leader_broker(load.key, brokers)] += load.groups
    broker_loads = tuple(Load(b, n) for b, n in enumerate(per_broker))
    verified = mismatches = 0
    if verify:
        sample = placed.select("group_id", "partition").limit(verify).collect()
        verified = len(sample)
        mismatches = sum(
            1
            for r in sample
            if r["group_id"] is not None
            and partition_for(r["group_id"], num_partitions) != r["partition"]
        )
    return PlacementReport(
        total=sum(per_partition.values()),
        num_partitions=num_partitions,
        brokers=brokers,
        method=method,
        partitions=partitions,
        broker_loads=broker_loads,
        partition_skew=Skew.of([p.groups for p in partitions]),
        broker_skew=Skew.of(per_broker),
        verified=verified,
        mismatches=mismatches,
    )


def render_markdown(report: PlacementReport, top: int = 10) -> str:
    """A short human summary: totals, skew, the busiest partitions and every broker."""

    def skew_line(name: str, s: Skew) -> str:
        return (
            f"| {name} | {s.mean:,.1f} | {s.stddev:,.1f} | {s.minimum:,} | {s.maximum:,} "
            f"| {s.max_over_mean:.3f} | {s.empty} |"
        )

    lines = [
        f"# Coordinator placement: {report.total:,} groups",
        "",
        f"`__consumer_offsets` partitions: {report.num_partitions}, brokers: {report.brokers}, "
        f"hash: {report.method} (Java String.hashCode, Kafka Utils.abs).",
        "Partition p is led by broker p % brokers (replica assignment started at broker 0).",
        "",
        "| load per | mean | stddev | min | max | max/mean | empty |",
        "|---|---|---|---|---|---|---|",
        skew_line("partition", report.partition_skew),
        skew_line("broker", report.broker_skew),
        "",
        f"## Busiest {min(top, report.num_partitions)} partitions",
        "",
        "| partition | broker | groups |",
        "|---|---|---|",
    ]
    busiest = sorted(report.partitions, key=lambda load: (-load.groups, load.key))[:top]
    lines += [
        f"| {p.key} | {leader_broker(p.key, report.brokers)} | {p.groups:,} |" for p in busiest
    ]
    lines += ["", "## Brokers", "", "| broker | groups | share |", "|---|---|---|"]
    for b in report.broker_loads:
        share = b.groups / report.total if report.total else 0.0
        lines.append(f"| {b.key} | {b.groups:,} | {share:.2%} |")
    if report.verified:
        lines += [
            "",
            f"Checked {report.verified:,} ids against `coordinator.placement.partition_for`: "
            f"{report.mismatches} mismatches.",
        ]
    return "\n".join(lines) + "\n"
