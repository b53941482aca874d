"""Run a sweep on Spark: rows -> executors (mapInPandas) -> Parquet ``runs`` and ``rebalances``.

The driver expands the sweep file into rows (``pipeline.spec``), spreads them round-robin over a
few partitions per core, and each executor runs ``pipeline.runrow.run_row`` on its rows, the very
function the plain loop and the tests use. One pass produces both datasets: each run row carries
its rebalances as a JSON array, the result is cached, ``runs`` is written, and ``rebalances`` is
the exploded array. mapInPandas (not RDD mapPartitions) so that Spark Connect works too.

Layout of ``OUT``::

    OUT/runs/        Parquet, one row per scenario run
    OUT/rebalances/  Parquet, one row per rebalance
    OUT/sweep/       JSON, one row: the sweep's name, description, base, size, seeds
"""

from __future__ import annotations

import functools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import attrs

from pipeline.runrow import (
    REBALANCE_COLUMNS,
    RUN_COLUMNS,
    RUNS_SCHEMA,
    RUNS_SCHEMA_VERSION,
    RowTask,
    run_row,
)
from pipeline.spec import Sweep

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark import StatusTracker
    from pyspark.sql import DataFrame, SparkSession

# the run's identity, repeated on each of its rebalance rows
_RUN_KEYS = (
    "scenario_id",
    "point",
    "variant",
    "seed",
    "group_protocol",
    "assignor",
    "protocol",
    "membership",
    "group_size",
)
_REB_ONLY = tuple(c for c in REBALANCE_COLUMNS if c not in _RUN_KEYS)
_REB_STRUCT = (
    "ARRAY<STRUCT<group_id: STRING, generation: INT, start_ms: BIGINT, end_ms: BIGINT, "
    "duration_ms: BIGINT, rounds: INT, partitions_moved: INT, partitions_revoked: INT, "
    "paused_partition_seconds: DOUBLE, imbalance_after: DOUBLE, trigger: STRING, "
    "outcome: STRING>>"
)
OUTPUT_SCHEMA = RUNS_SCHEMA + ", rebalance_json STRING"
ROWS_SCHEMA = (
    "scenario_id INT, point INT, variant STRING, seed BIGINT, params MAP<STRING,STRING>, "
    "overrides STRING"
)


@attrs.frozen
class SweepSummary:
    runs: int
    failed: int
    rebalances: int
    seconds: float
    out: str
    # the first failed rows (scenario_id, variant, seed, error), for the command line to show
    errors: tuple[tuple[int, str, int, str], ...] = ()


def run_batches(task: RowTask, batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The executor side: run every row of every Arrow batch (module-level: pickled by name)."""
    import pandas as pd

    for batch in batches:
        out = []
        for row in batch.to_dict("records"):
            row["params"] = dict(row["params"] or {})
            run, rebalances = run_row(task, row)
            run["rebalance_json"] = json.dumps(
                [{c: r[c] for c in _REB_ONLY} for r in rebalances], separators=(",", ":")
            )
            out.append(run)
        yield pd.DataFrame(out, columns=[*RUN_COLUMNS, "rebalance_json"])


def run_partition(task: RowTask, rows: Iterator[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """The executor side on the RDD path: rows in, output tuples (OUTPUT_SCHEMA's order) out."""
    for row in rows:
        run, rebalances = run_row(task, row)
        run["rebalance_json"] = json.dumps(
            [{c: r[c] for c in _REB_ONLY} for r in rebalances], separators=(",", ":")
        )
        yield tuple(run[c] for c in (*RUN_COLUMNS, "rebalance_json"))


def task_count(rows: int, parallelism: int) -> int:
    """Enough tasks to balance uneven rows and show progress, few enough to keep overhead low.

    Each task costs the JVM about 0.1 CPU-second (measured on local[2]), so a task gets at least
    ~500 rows once there are more than two tasks per core.
    """
    return max(1, min(rows, max(2 * parallelism, min(8 * parallelism, rows // 500))))


def sweep_frame(spark: SparkSession, sweep: Sweep, *, tasks: int | None = None) -> DataFrame:
    """The sweep's rows as a DataFrame, spread round-robin over ``tasks`` partitions."""
    import pandas as pd

    from pipeline.session import default_parallelism

    rows = [r.as_dict() for r in sweep.rows()]
    n = tasks or task_count(len(rows), default_parallelism(spark))
    pdf = pd.DataFrame(
        rows, columns=["scenario_id", "point", "variant", "seed", "params", "overrides"]
    )
    return spark.createDataFrame(pdf, ROWS_SCHEMA).repartition(n)


MAX_ERRORS_SHOWN = 20


def run_sweep(
    spark: SparkSession,
    sweep: Sweep,
    out: str,
    *,
    tasks: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "auto",
) -> SweepSummary:
    """Run every row on the executors and write ``runs``, ``rebalances`` and ``sweep`` under ``out``."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    started = time.perf_counter()
    task = RowTask(sweep.base_text, sweep.base_source, sweep.until_ms, sweep.allow_code)
    results = _results(spark, sweep, task, tasks, engine).persist(StorageLevel.MEMORY_AND_DISK)
    base = out.rstrip("/")
    try:
        with _Progress(spark, progress):
            results.drop("rebalance_json").write.mode("overwrite").parquet(f"{base}/runs")
        rebalances = results.select(
            *_RUN_KEYS,
            F.explode(F.from_json("rebalance_json", _REB_STRUCT)).alias("r"),
        ).select(*[F.col(c) if c not in _REB_ONLY else F.col(f"r.{c}") for c in REBALANCE_COLUMNS])
        rebalances.write.mode("overwrite").parquet(f"{base}/rebalances")
        counts = results.agg(
            F.count(F.lit(1)).alias("runs"),
            F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("failed"),
            F.sum(F.coalesce(F.size(F.from_json("rebalance_json", _REB_STRUCT)), F.lit(0))).alias(
                "rebalances"
            ),
        ).collect()[0]
        failed_rows = (
            results.where(F.col("error").isNotNull())
            .select("scenario_id", "variant", "seed", "error")
            .orderBy("scenario_id")
            .limit(MAX_ERRORS_SHOWN)
            .collect()
            if counts["failed"]
            else []
        )
    finally:
        results.unpersist()
    manifest = {
        "sweep": sweep.name,
        "description": sweep.description,
        "source": sweep.source,
        "base": sweep.base,
        "base_source": sweep.base_source,
        "seeds": list(sweep.seeds),
        "until_ms": sweep.until_ms,
        "variants": [name for name, _ in sweep.variants],
        "grid": {k: json.dumps(list(v), default=str) for k, v in sweep.grid},
        "rows": sweep.size,
        "allow_code": sweep.allow_code,
        "runs_schema_version": RUNS_SCHEMA_VERSION,
    }
    spark.createDataFrame([(json.dumps(manifest, sort_keys=True),)], "manifest STRING").coalesce(
        1
    ).write.mode("overwrite").text(f"{base}/sweep")
    return SweepSummary(
        runs=int(counts["runs"] or 0),
        failed=int(counts["failed"] or 0),
        rebalances=int(counts["rebalances"] or 0),
        seconds=time.perf_counter() - started,
        out=base,
        errors=tuple(
            (int(r["scenario_id"]), str(r["variant"]), int(r["seed"]), str(r["error"]))
            for r in failed_rows
        ),
    )


ENGINES = ("auto", "rdd", "arrow")


def _results(
    spark: SparkSession, sweep: Sweep, task: RowTask, tasks: int | None, engine: str = "auto"
) -> DataFrame:
    """Run the rows: RDD mapPartitions where there is a SparkContext, mapInPandas on Connect.

    Both call ``run_row`` on the executors. ``engine`` forces one: ``rdd`` or ``arrow``.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    sc = None
    if engine != "arrow":
        try:
            sc = spark.sparkContext
        except Exception:  # Spark Connect: DataFrame API only
            sc = None
    if sc is None:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "64")
        frame = sweep_frame(spark, sweep, tasks=tasks)
        return frame.mapInPandas(functools.partial(run_batches, task), OUTPUT_SCHEMA)
    from pipeline.session import default_parallelism

    rows = [r.as_dict() for r in sweep.rows()]
    n = tasks or task_count(len(rows), default_parallelism(spark))
    # parallelize() cuts the list into n contiguous slices: deal the rows round-robin first so
    # that each slice mixes variants and grid points (cheap and expensive rows) evenly.
    dealt = [row for i in range(n) for row in rows[i::n]]
    rdd = sc.parallelize(dealt, n).mapPartitions(functools.partial(run_partition, task))
    return spark.createDataFrame(rdd, OUTPUT_SCHEMA, verifySchema=False)


def read_manifest(spark: SparkSession, out: str) -> dict[str, Any]:
    """The sweep's manifest written next to its datasets (empty when absent)."""
    try:
        rows = spark.read.text(f"{out.rstrip('/')}/sweep").collect()
    except Exception:
        return {}
    return json.loads(rows[0]["value"]) if rows else {}


class _Progress:
    """Poll Spark's status tracker from a thread and report (done, total) tasks of active stages."""

    def __init__(self, spark: SparkSession, report: Callable[[int, int], None] | None) -> None:
        self.report = report
        self.stop = threading.Event()
        self.tracker: StatusTracker | None
        try:
            self.tracker = spark.sparkContext.statusTracker()
        except Exception:  # Spark Connect: no SparkContext on the client
            self.tracker = None
        self.thread = threading.Thread(target=self._poll, name="sweep-progress", daemon=True)

    def __enter__(self) -> _Progress:
        if self.report is not None and self.tracker is not None:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=2)

    def _poll(self) -> None:
        assert self.tracker is not None and self.report is not None
        last = (-1, -1)
        while not self.stop.wait(0.5):
            done = total = 0
            try:
                for stage_id in self.tracker.getActiveStageIds():
                    info = self.tracker.getStageInfo(stage_id)
                    if info is not None and info.numTasks > 1:
                        done += info.numCompletedTasks
                        total += info.numTasks
            except Exception:  # the context stopped under us
                return
            if total and (done, total) != last:
                last = (done, total)
                self.report(done, total)


SparkProgress = _Progress  # also used by the placement and log-report commands


def print_progress(done: int, total: int, label: str = "sweep") -> None:
    """Plain progress for logs and pipes (the CLI uses a rich bar on a terminal)."""
    print(f"[{label}] {done}/{total} tasks done", file=sys.stderr, flush=True)
