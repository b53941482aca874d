"""``groupsim sweep-report``: Spark SQL aggregates of a sweep -> Markdown with PNG plots.

Four questions, each one SQL aggregate and one plot:

* partitions moved per rebalance, by assignor (how much state a rebalance shuffles);
* stop-the-world time, eager vs cooperative vs the consumer protocol: rebalance duration and
  paused partition-seconds (eager revokes everything, KIP-429's cooperative protocol only what
  moves, KIP-848's members reconcile one by one);
* rebalances per run, dynamic vs static membership (KIP-345: a static member restarting within
  session.timeout.ms causes none);
* imbalance after a rebalance against group size, by assignor.

Plus a per-variant table (the sweep's own question) and the failed rows with their errors.
Plots use matplotlib's Agg backend: no display needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.runrow import REBALANCES_SCHEMA, RUNS_SCHEMA, RUNS_SCHEMA_VERSION

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession


class ReportInputError(ValueError):
    """The directory is not a sweep's output."""


QUERIES: dict[str, str] = {
    "variants": """
        SELECT variant, min(group_protocol) AS group_protocol, min(protocol) AS protocol,
               min(assignor) AS assignor,
               count(*) AS runs, sum(CASE WHEN error IS NULL THEN 0 ELSE 1 END) AS failed,
               avg(rebalances) AS rebalances_per_run, avg(rounds) AS rounds_per_run,
               avg(rebalance_ms) AS rebalance_ms_per_run,
               avg(paused_partition_seconds) AS paused_partition_s_per_run,
               avg(unowned_partition_ms) / 1000 AS unowned_partition_s_per_run,
               avg(partitions_moved) AS partitions_moved_per_run,
               avg(last_change_ms) AS last_change_ms_per_run,
               sum(invariant_violations) AS invariant_violations,
               min(point) AS first_point
        FROM runs GROUP BY variant ORDER BY first_point""",
    "moved_by_assignor": """
        SELECT assignor, count(*) AS rebalances, avg(partitions_moved) AS mean_moved,
               percentile(partitions_moved, 0.5) AS p50_moved,
               percentile(partitions_moved, 0.99) AS p99_moved, max(partitions_moved) AS max_moved,
               avg(partitions_revoked) AS mean_revoked
        FROM rebalances WHERE assignor IS NOT NULL GROUP BY assignor ORDER BY assignor""",
    "stop_the_world": """
        SELECT protocol, membership, count(*) AS rebalances, avg(duration_ms) AS mean_ms,
               percentile(duration_ms, 0.5) AS p50_ms, percentile(duration_ms, 0.99) AS p99_ms,
               avg(paused_partition_seconds) AS mean_paused_partition_s,
               percentile(paused_partition_seconds, 0.99) AS p99_paused_partition_s
        FROM rebalances WHERE protocol IS NOT NULL
        GROUP BY protocol, membership ORDER BY protocol, membership""",
    "rebalances_by_membership": """
        SELECT membership, protocol, count(*) AS runs, avg(rebalances) AS mean_rebalances,
               percentile(rebalances, 0.5) AS p50_rebalances, max(rebalances) AS max_rebalances
        FROM runs WHERE error IS NULL AND membership IS NOT NULL
        GROUP BY membership, protocol ORDER BY membership, protocol""",
    "imbalance_by_size": """
        SELECT assignor, group_size, count(*) AS rebalances, avg(imbalance_after) AS mean_imbalance,
               max(imbalance_after) AS max_imbalance
        FROM rebalances WHERE imbalance_after IS NOT NULL
        GROUP BY assignor, group_size ORDER BY assignor, group_size""",
    "failures": """
        SELECT scenario_id, variant, seed, error FROM runs WHERE error IS NOT NULL
        ORDER BY scenario_id LIMIT 20""",
}


def load_views(spark: SparkSession, sweep_dir: str) -> None:
    """Register ``runs`` and ``rebalances`` as SQL views (explicit schemas: empty data is fine)."""
    base = sweep_dir.rstrip("/")
    if "://" not in base and not (Path(base) / "runs").is_dir():
        raise ReportInputError(
            f"{sweep_dir} has no runs/ dataset: is it a `groupsim sweep --out` directory?"
        )
    from pipeline.sweep import read_manifest

    version = int(read_manifest(spark, base).get("runs_schema_version", 1))
    if version >= RUNS_SCHEMA_VERSION:
        runs = spark.read.schema(RUNS_SCHEMA).parquet(f"{base}/runs")
    else:
        runs = _upgrade_runs(spark.read.parquet(f"{base}/runs"), version)
    runs.createOrReplaceTempView("runs")
    spark.read.schema(REBALANCES_SCHEMA).parquet(f"{base}/rebalances").createOrReplaceTempView(
        "rebalances"
    )


def _upgrade_runs(df: DataFrame, version: int) -> DataFrame:
    """An older ``runs`` dataset in today's columns (pipeline.runrow.RUNS_SCHEMA_VERSION).

    Version 1 had ``unowned_partition_seconds`` (the run result's unowned time / 1000: today's
    ``unowned_partition_ms``) and a design-measure ``unowned_partition_ms`` (scenarios.measures'
    integral, another definition), which is dropped. Columns a version lacked read as null.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType, _parse_datatype_string

    if version < 2:
        if "unowned_partition_ms" in df.columns:
            df = df.drop("unowned_partition_ms")
        if "unowned_partition_seconds" in df.columns:
            df = df.withColumn(
                "unowned_partition_ms",
                F.round(F.col("unowned_partition_seconds") * 1000).cast("bigint"),
            )
    schema = _parse_datatype_string(RUNS_SCHEMA)
    assert isinstance(schema, StructType)
    return df.select(
        *[
            (F.col(f.name) if f.name in df.columns else F.lit(None)).cast(f.dataType).alias(f.name)
            for f in schema.fields
        ]
    )


def aggregates(spark: SparkSession, sweep_dir: str) -> dict[str, pd.DataFrame]:
    load_views(spark, sweep_dir)
    out: dict[str, pd.DataFrame] = {
        name: spark.sql(sql).toPandas() for name, sql in QUERIES.items()
    }
    out["variants"] = out["variants"].drop(columns=["first_point"])
    return out


def _table(df: pd.DataFrame, floats: str = "{:,.2f}") -> str:
    if df.empty:
        return "_(no data)_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append("" if v != v else floats.format(v))  # NaN -> blank
            elif v is None:
                cells.append("")
            else:
                cells.append(str(v).replace("|", "\\|").replace("\n", " "))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _plots(aggs: dict[str, pd.DataFrame], out: Path) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: dict[str, str] = {}

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        made[name.removesuffix(".png")] = name

    df = aggs["variants"]
    if not df.empty:
        fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
        for ax, col, title in zip(
            axes,
            (
                "rebalances_per_run",
                "rebalance_ms_per_run",
                "paused_partition_s_per_run",
                "unowned_partition_s_per_run",
            ),
            (
                "rebalances per run",
                "time in rebalance per run (ms)",
                "paused partition-seconds per run",
                "unowned partition-seconds per run",
            ),
            strict=True,
        ):
            ax.bar(df["variant"], df[col].fillna(0), color="#4c72b0")
            ax.set_title(title, fontsize=10)
            ax.tick_params(axis="x", labelrotation=20)
        save(fig, "variants.png")
    df = aggs["moved_by_assignor"]
    if not df.empty:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        x = range(len(df))
        ax.bar([i - 0.2 for i in x], df["mean_moved"], width=0.4, label="mean")
        ax.bar([i + 0.2 for i in x], df["p99_moved"], width=0.4, label="p99")
        ax.set_xticks(list(x), df["assignor"], rotation=15)
        ax.set_ylabel("partitions moved per rebalance")
        ax.legend()
        save(fig, "moved_by_assignor.png")
    df = aggs["stop_the_world"]
    if not df.empty:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
        labels = [f"{p}\n{m}" for p, m in zip(df["protocol"], df["membership"], strict=True)]
        axes[0].bar(labels, df["p50_ms"], color="#dd8452", label="median")
        axes[0].plot(labels, df["p99_ms"], "kv", label="p99")
        axes[0].set_ylabel("rebalance duration (ms)")
        axes[0].legend()
        axes[1].bar(labels, df["mean_paused_partition_s"], color="#c44e52")
        axes[1].set_ylabel("paused partition-seconds per rebalance (mean)")
        save(fig, "stop_the_world.png")
    df = aggs["rebalances_by_membership"]
    if not df.empty:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        labels = [f"{m}\n{p}" for m, p in zip(df["membership"], df["protocol"], strict=True)]
        ax.bar(labels, df["mean_rebalances"], color="#55a868")
        ax.set_ylabel("rebalances per run")
        save(fig, "rebalances_by_membership.png")
    df = aggs["imbalance_by_size"]
    if not df.empty:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for assignor, part in df.groupby("assignor", sort=True):
            ax.plot(part["group_size"], part["mean_imbalance"], "o-", label=str(assignor))
        ax.set_xlabel("group size (members)")
        ax.set_ylabel("imbalance after rebalance (mean)")
        ax.legend()
        save(fig, "imbalance_by_size.png")
    return made


SECTIONS = (
    (
        "variants",
        "Per variant",
        "One row per variant of the sweep (means over its runs). `group_protocol` is Kafka's "
        "`group.protocol` (classic or consumer, KIP-848); `protocol` the rebalance protocol "
        "(eager, cooperative, or consumer: each member reconciles on its own); `assignor` the "
        "client's first `partition.assignment.strategy` (classic) or the broker's assignor "
        "(consumer). The same measures for both: rebalances (KIP-848: group epoch bumps until "
        "the members reconciled), rounds, paused partition-seconds (inside rebalances), unowned "
        "partition-seconds (wherever it happened), partitions moved, and when the last "
        "partition changed hands (ms, the run has converged since).",
    ),
    (
        "moved_by_assignor",
        "Partitions moved per rebalance, by assignor",
        "How many partitions changed owner in each rebalance.",
    ),
    (
        "stop_the_world",
        "Stop-the-world time: eager vs cooperative vs consumer (KIP-848)",
        "Eager rebalances revoke every partition before rejoining; cooperative ones (KIP-429) "
        "revoke only those that move; under the consumer protocol (KIP-848) there is no "
        "group-wide barrier: each member revokes what moves and gets new partitions at its next "
        "heartbeat. Paused partition-seconds is the consumption lost.",
    ),
    (
        "rebalances_by_membership",
        "Rebalances per run: dynamic vs static membership",
        "A static member (group.instance.id, KIP-345) that comes back within session.timeout.ms "
        "rejoins without a rebalance.",
    ),
    (
        "imbalance_by_size",
        "Imbalance after rebalance against group size",
        "Max minus min partitions per member after each rebalance.",
    ),
)


def render(aggs: dict[str, pd.DataFrame], plots: dict[str, str], manifest: dict[str, Any]) -> str:
    title = manifest.get("sweep") or "sweep"
    lines = [f"# Sweep report: {title}", ""]
    if manifest.get("description"):
        lines += [str(manifest["description"]).strip(), ""]
    if manifest:
        lines += [
            f"Base scenario `{manifest.get('base')}`, {manifest.get('rows')} runs, "
            f"seeds {manifest.get('seeds')}.",
            "",
        ]
    for key, heading, blurb in SECTIONS:
        lines += [f"## {heading}", "", blurb, "", _table(aggs[key])]
        if key in plots:
            lines += [f"![{heading}]({plots[key]})", ""]
    if not aggs["failures"].empty:
        lines += ["## Failed runs", "", _table(aggs["failures"])]
    return "\n".join(lines).rstrip() + "\n"


def write_sweep_report(spark: SparkSession, sweep_dir: str, output: Path) -> Path:
    """Write ``output/report.md`` and its PNGs; returns the report's path."""
    from pipeline.sweep import read_manifest

    aggs = aggregates(spark, sweep_dir)
    output.mkdir(parents=True, exist_ok=True)
    plots = _plots(aggs, output)
    text = render(aggs, plots, read_manifest(spark, sweep_dir))
    path = output / "report.md"
    path.write_text(text, encoding="utf-8")
    return path
