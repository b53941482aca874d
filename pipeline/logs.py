"""``groupsim log-report``: event-log analytics in Spark over ``groupsim run --log`` JSON lines.

Per log file and group it computes:

* **rebalances**: the same records ``groupsim run`` reports, from ``scenarios.history``'s
  ``rebalances_from_events`` applied to each log's events in ``seq`` order (applyInPandas, one
  group per log file), so the CLI and the pipeline can never disagree about a duration;
* **time in each state**: from the coordinator's ``group_state_changed`` events, each state lasts
  until the group's next transition (the last one until the log's last event);
* **errors by code**: the coordinator's ``response_sent`` events whose ``error`` is not ``NONE``,
  counted by API and error name;
* **members' time without partitions**: from the consumers' ``rebalance_callback`` events
  (``assigned`` adds partitions, ``revoked``/``lost`` remove them) and the runner's consumer
  lifecycle events. A member counts while its process runs (started/restarted until
  crashed/closed or the log's end); it is "without partitions" while it owns none.

The events are read with an explicit schema (no inference pass); fields are those of
docs/events.md. Window functions order by ``seq``, the runner's position in the log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coordinator import events as ev

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

EVENT_SCHEMA = (
    "event STRING, t_ms BIGINT, seq BIGINT, node STRING, group_id STRING, member_id STRING, "
    "generation_id INT, state_from STRING, state_to STRING, api STRING, error STRING, "
    "callback STRING, partitions ARRAY<STRING>, reason STRING"
)
GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")
STATE_EVENT = ev.GROUP_STATE_CHANGED
RESPONSE_EVENT = ev.RESPONSE_SENT
CALLBACK_EVENT = ev.REBALANCE_CALLBACK
# consumer lifecycle (runner events, then the consumer's own close): opens or ends a process life
LIFE_START = (ev.SIM_CONSUMER_STARTED, ev.SIM_CONSUMER_RESTARTED)
LIFE_END = (ev.SIM_CONSUMER_CRASHED, ev.CONSUMER_CLOSED)

REBALANCE_SCHEMA = (
    "log STRING, group_id STRING, generation_id INT, start_ms BIGINT, end_ms BIGINT, "
    "duration_ms BIGINT, rounds INT, partitions_moved INT, partitions_revoked INT, "
    "paused_partition_ms BIGINT, imbalance_after INT, trigger STRING, outcome STRING"
)


@attrs.frozen
class LogAnalysis:
    """Small pandas frames (collected from Spark) for the report."""

    rebalances: pd.DataFrame  # one row per rebalance
    rebalance_summary: pd.DataFrame  # per (log, group): count, mean/p50/p99/max duration
    state_times: pd.DataFrame  # per (log, group, state): ms
    errors: pd.DataFrame  # per (log, group, api, error): count
    members: pd.DataFrame  # per (log, group, node): alive ms, ms without partitions
    logs: tuple[str, ...] = ()


def read_events(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Events of every log with ``log`` (the file's name) and ``log_end_ms`` columns."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    df = spark.read.schema(EVENT_SCHEMA).json(list(paths))
    df = df.withColumn("log", F.col("_metadata.file_path"))
    return df.withColumn("log_end_ms", F.max("t_ms").over(Window.partitionBy("log")))


def rebalances_per_log(pdf: pd.DataFrame) -> pd.DataFrame:
    """applyInPandas body: one log's raw lines -> its rebalance records (runs on executors)."""
    import pandas as pd

    from scenarios.history import rebalances_from_events

    columns = [c.split(" ")[0] for c in REBALANCE_SCHEMA.split(", ")]
    log = str(pdf["log"].iloc[0]) if len(pdf) else ""
    events = []
    for line_no, line in zip(pdf["line"], pdf["value"], strict=True):
        if not line or not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a torn last line of a log being written; the rest still counts
        if isinstance(event, dict):
            events.append((event.get("seq", line_no), line_no, event))
    events.sort(key=lambda e: (e[0] if isinstance(e[0], int) else e[1], e[1]))
    rows = []
    for rec in rebalances_from_events(e[2] for e in events):
        d = rec.to_dict()
        d["log"] = log
        d["generation_id"] = rec.generation_id
        rows.append({c: d.get(c) for c in columns})
    return pd.DataFrame(rows, columns=columns)


def _rebalances(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    from pyspark.sql import functions as F

    raw = spark.read.text(list(paths)).select(
        F.col("_metadata.file_path").alias("log"),
        F.monotonically_increasing_id().alias("line"),
        "value",
    )
    return raw.groupBy("log").applyInPandas(rebalances_per_log, REBALANCE_SCHEMA)


def analyse(spark: SparkSession, events: DataFrame, rebalances: DataFrame) -> dict[str, DataFrame]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_seq = Window.partitionBy("log", "group_id").orderBy("seq")
    states = events.where(
        (F.col("event") == STATE_EVENT) & F.col("state_to").isin(*GROUP_STATES)
    ).withColumn("next_ms", F.lead("t_ms").over(by_seq))
    state_times = (
        states.withColumn("ms", F.coalesce("next_ms", "log_end_ms") - F.col("t_ms"))
        .groupBy("log", "group_id", F.col("state_to").alias("state"))
        .agg(F.sum("ms").alias("ms"), F.count(F.lit(1)).alias("entered"))
    )
    errors = (
        events.where((F.col("event") == RESPONSE_EVENT) & F.col("error").isNotNull())
        .where(F.col("error") != "NONE")
        .groupBy("log", "group_id", "api", "error")
        .agg(F.count(F.lit(1)).alias("count"))
    )
    summary = rebalances.groupBy("log", "group_id").agg(
        F.count(F.lit(1)).alias("rebalances"),
        F.avg("duration_ms").alias("mean_ms"),
        F.percentile("duration_ms", 0.5).alias("p50_ms"),
        F.percentile("duration_ms", 0.99).alias("p99_ms"),
        F.max("duration_ms").alias("max_ms"),
        F.sum("paused_partition_ms").alias("paused_partition_ms"),
    )
    return {
        "state_times": state_times,
        "errors": errors,
        "rebalance_summary": summary,
        "members": _members(events),
    }


def _members(events: DataFrame) -> DataFrame:
    """Per consumer process: ms alive and ms alive owning no partition."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    consumer = events.where(F.col("node").isNotNull() & ~F.col("node").startswith("broker-"))
    # A consumer's group: the group_id its own events carry (runner events have none).
    node_group = (
        consumer.where(F.col("group_id").isNotNull())
        .groupBy("log", "node")
        .agg(F.min("group_id").alias("member_group"))
    )
    relevant = consumer.where(F.col("event").isin(*LIFE_START, *LIFE_END, CALLBACK_EVENT)).join(
        node_group, ["log", "node"], "left"
    )
    by_node = Window.partitionBy("log", "node").orderBy("seq")
    boundary = F.col("event").isin(*LIFE_START, *LIFE_END).cast("int")
    size = F.coalesce(F.size("partitions"), F.lit(0)).cast("bigint")
    delta = (
        F.when(F.col("callback") == "assigned", size)
        .when(F.col("callback").isin("revoked", "lost"), -size)
        .otherwise(F.lit(0).cast("bigint"))
    )
    step = (
        relevant.withColumn(
            "life", F.sum(boundary).over(by_node.rowsBetween(Window.unboundedPreceding, 0))
        )
        .withColumn("delta", F.when(F.col("event") == CALLBACK_EVENT, delta).otherwise(F.lit(0)))
        .withColumn("next_ms", F.coalesce(F.lead("t_ms").over(by_node), F.col("log_end_ms")))
    )
    by_life = Window.partitionBy("log", "node", "life").orderBy("seq")
    step = (
        step.withColumn(
            "owned", F.sum("delta").over(by_life.rowsBetween(Window.unboundedPreceding, 0))
        )
        .withColumn("opened_by", F.first("event").over(by_life))
        .withColumn("alive", F.col("opened_by").isin(*LIFE_START) & ~F.col("event").isin(*LIFE_END))
        .withColumn("span", F.col("next_ms") - F.col("t_ms"))
    )
    return step.groupBy("log", F.col("member_group").alias("group_id"), "node").agg(
        F.sum(F.when(F.col("alive"), F.col("span")).otherwise(0)).alias("alive_ms"),
        F.sum(F.when(F.col("alive") & (F.col("owned") <= 0), F.col("span")).otherwise(0)).alias(
            "without_partitions_ms"
        ),
    )


def analyse_logs(spark: SparkSession, paths: Sequence[str]) -> LogAnalysis:
    """Run every aggregate and collect the (small) results, sorted for stable output."""
    events = read_events(spark, paths)
    rebalances = _rebalances(spark, paths)
    frames = analyse(spark, events, rebalances)

    def collect(df: DataFrame, order: Sequence[str]) -> pd.DataFrame:
        pdf: pd.DataFrame = df.toPandas()
        if "log" in pdf.columns:
            pdf["log"] = pdf["log"].map(_short)
        return pdf.sort_values(list(order), kind="stable").reset_index(drop=True)

    return LogAnalysis(
        rebalances=collect(rebalances, ["log", "group_id", "start_ms"]),
        rebalance_summary=collect(frames["rebalance_summary"], ["log", "group_id"]),
        state_times=collect(frames["state_times"], ["log", "group_id", "state"]),
        errors=collect(frames["errors"], ["log", "group_id", "api", "error"]),
        members=collect(frames["members"], ["log", "group_id", "node"]),
        logs=tuple(_short(p) for p in paths),
    )


def _short(path: Any) -> str:
    text = str(path)
    return text.rsplit("/", 1)[-1] if "/" in text else text


def render_markdown(a: LogAnalysis) -> str:
    from pipeline.report import _table

    lines = [f"# Event-log report: {', '.join(a.logs)}", ""]
    lines += ["## Rebalance durations per group", "", _table(a.rebalance_summary)]
    lines += ["## Rebalances", "", _table(a.rebalances)]
    lines += ["## Time in each group state (ms)", "", _table(a.state_times)]
    lines += ["## Errors by code", "", _table(a.errors)]
    members = a.members.copy()
    if not members.empty:
        members["share_without"] = (
            members["without_partitions_ms"] / members["alive_ms"].where(members["alive_ms"] > 0)
        ).round(3)
    lines += ["## Members' time without partitions (ms)", "", _table(members)]
    return "\n".join(lines).rstrip() + "\n"


def write_outputs(a: LogAnalysis, output: Path, text: str) -> None:
    """report.md plus one Parquet file per table (pandas: the frames are already collected)."""
    output.mkdir(parents=True, exist_ok=True)
    (output / "report.md").write_text(text, encoding="utf-8")
    for name in ("rebalances", "rebalance_summary", "state_times", "errors", "members"):
        getattr(a, name).to_parquet(output / f"{name}.parquet", index=False)
