"""Run one sweep row with the same runner ``groupsim run`` uses, and flatten the result into rows.

Pure Python, no Spark: the executors call ``run_row`` (through ``pipeline.sweep``), the benchmark's
plain loop and the tests call it directly, so "a sweep's rows equal running the scenarios
directly" is checked against this very function. It never raises for a bad row: an invalid
override or a simulator failure becomes the row's ``error``.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

# The runs/rebalances datasets' version, written in the sweep's manifest (``runs_schema_version``)
# so that ``sweep-report`` reads older outputs too (pipeline.report.load_views). 1: no version in
# the manifest, two unowned columns (``unowned_partition_seconds`` from the run result and seed
# 004's ``unowned_partition_ms`` from scenarios.measures); 2: one, ``unowned_partition_ms``;
# 3: ``group_protocol`` (runs and rebalances), ``protocol`` may be ``consumer``, runs gain
# ``rounds`` and ``last_change_ms``.
RUNS_SCHEMA_VERSION = 3
# Column order of the two datasets (Spark DDL). Wall time is the one non-deterministic column.
RUNS_SCHEMA = (
    "scenario_id INT, point INT, variant STRING, seed BIGINT, params MAP<STRING,STRING>, "
    "overrides STRING, scenario STRING, group_id STRING, group_protocol STRING, "
    "assignor STRING, protocol STRING, "
    "membership STRING, group_size INT, topic_partitions INT, final_state STRING, "
    "final_generation INT, final_members INT, rebalances INT, rounds INT, partitions_moved BIGINT, "
    "rebalance_ms BIGINT, paused_partition_seconds DOUBLE, unowned_partition_ms BIGINT, "
    "last_change_ms BIGINT, end_ms BIGINT, events INT, "
    "invariant_violations INT, violations STRING, expectations_failed INT, error STRING, "
    "design STRING, notifications INT, rebalance_attempts INT, conflicts INT, retries INT, "
    "failed_rebalances INT, settle_ms_max BIGINT, "
    "wall_ms DOUBLE"
)
REBALANCES_SCHEMA = (
    "scenario_id INT, point INT, variant STRING, seed BIGINT, group_protocol STRING, "
    "assignor STRING, protocol STRING, membership STRING, group_size INT, group_id STRING, generation INT, start_ms BIGINT, "
    "end_ms BIGINT, duration_ms BIGINT, rounds INT, partitions_moved INT, "
    "partitions_revoked INT, paused_partition_seconds DOUBLE, imbalance_after DOUBLE, "
    "trigger STRING, outcome STRING"
)
RUN_COLUMNS = tuple(part.strip().split(" ")[0] for part in RUNS_SCHEMA.split(", ") if " " in part)
REBALANCE_COLUMNS = tuple(part.strip().split(" ")[0] for part in REBALANCES_SCHEMA.split(", "))

COOPERATIVE_ASSIGNORS = ("cooperative-sticky",)
# Candidate field names of a rebalance record, first match wins (the history module's names first).
_REBALANCE_FIELDS: dict[str, tuple[str, ...]] = {
    "group_id": ("group_id", "group"),
    "generation": ("generation", "generation_id"),
    "start_ms": ("start_ms",),
    "end_ms": ("end_ms",),
    "duration_ms": ("duration_ms",),
    "rounds": ("rounds", "join_rounds"),
    "partitions_moved": ("partitions_moved", "moved"),
    "partitions_revoked": ("partitions_revoked", "revoked"),
    "paused_partition_seconds": ("paused_partition_seconds", "paused_partition_s"),
    "imbalance_after": ("imbalance_after", "imbalance"),
    "trigger": ("trigger",),
    "outcome": ("outcome",),
}


@attrs.frozen
class RowTask:
    """Everything an executor needs to run rows of one sweep (small: pickled with each task)."""

    base_text: str
    base_source: str
    until_ms: int | None = None
    allow_code: bool = False  # the sweep was loaded with --allow-code (pipeline.spec.load_sweep)


def protocol_of(assignor: str | None, group_protocol: str = "classic") -> str | None:
    """``eager`` or ``cooperative`` (KIP-429's incremental protocol is the cooperative-sticky
    one) for a classic member; ``consumer`` for KIP-848's, which has neither: every member
    reconciles on its own toward the broker's target assignment."""
    if group_protocol == "consumer":
        return "consumer"
    if assignor is None:
        return None
    return "cooperative" if assignor in COOPERATIVE_ASSIGNORS else "eager"


def group_protocol_of(config: Mapping[str, Any]) -> str:
    """A consumer's ``group.protocol`` (ConsumerConfig's default: classic), lower-cased."""
    return str(config.get("group_protocol") or "classic").lower()


def server_assignor(scenario: Any, config: Mapping[str, Any]) -> str:
    """The assignor a KIP-848 member gets: its ``group.remote.assignor``, else the broker's
    default, the first of ``group.consumer.assignors`` (GroupMetadataManager's defaultAssignor)."""
    from coordinator.assignor.registry import KAFKA_CLASS_NAMES
    from coordinator.config import CONSUMER_GROUP_ASSIGNORS_DEFAULT

    if config.get("group_remote_assignor"):
        return str(config["group_remote_assignor"])
    names = scenario.cluster.config.get("group_consumer_assignors") or (
        CONSUMER_GROUP_ASSIGNORS_DEFAULT
    )
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    first = str(next(iter(names)))
    return KAFKA_CLASS_NAMES.get(first, first)


def describe(scenario: Any) -> dict[str, Any]:
    """Columns derived from the scenario itself, so reports need not know the grid's paths."""
    groups = list(scenario.groups)
    group_id = groups[0] if groups else None
    members = [c for c in scenario.consumers if c.group == group_id]
    protocols = {group_protocol_of(c.config) for c in members}
    group_protocol = None if not protocols else protocols.pop() if len(protocols) == 1 else "mixed"
    first = group_protocol_of(members[0].config) if members else "classic"
    if first == "consumer":
        assignor: str | None = server_assignor(scenario, members[0].config)
    else:
        strategies = members[0].strategies if members else ()
        assignor = strategies[0] if strategies else None
    statics = {c.static for c in members}
    membership = (
        None
        if not members
        else "static"
        if statics == {True}
        else "dynamic"
        if statics == {False}
        else "mixed"
    )
    return {
        "scenario": scenario.name,
        "group_id": group_id,
        "group_protocol": group_protocol,
        "assignor": assignor,
        "protocol": protocol_of(assignor, first),
        "membership": membership,
        "group_size": len(members),
        "topic_partitions": sum(t.partitions for t in scenario.cluster.topics),
    }


def _field(record: Any, names: Sequence[str]) -> Any:
    if isinstance(record, Mapping):
        data = record
    elif hasattr(record, "to_dict"):
        data = record.to_dict()
    else:
        data = attrs.asdict(record, recurse=False)
    for name in names:
        if name in data:
            return data[name]
    return None


def _rebalance_records(result: Any) -> list[Any]:
    try:
        from scenarios.history import rebalances_from_events
    except ImportError:  # pragma: no cover - until the history module lands
        return list(result.rebalances)
    return list(rebalances_from_events(result.events))


@functools.lru_cache(maxsize=8)
def _parsed(text: str, source: str) -> Any:
    """The base scenario's plain data, parsed once per worker process (overrides copy it)."""
    from scenarios.yamlpos import parse_yaml

    return parse_yaml(text, source)[0]


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


def run_row(task: RowTask, row: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """-> (the ``runs`` row, the ``rebalances`` rows) for one sweep row; never raises."""
    from scenarios.compare import switch_protocol
    from scenarios.errors import ScenarioError
    from scenarios.loader import load_scenario_dict
    from scenarios.overrides import apply_overrides
    from scenarios.runner import run_scenario

    key = {k: row[k] for k in ("scenario_id", "point", "variant", "seed")}
    run: dict[str, Any] = dict.fromkeys(RUN_COLUMNS)
    run.update(key, params=dict(row["params"]), overrides=row["overrides"])
    rebalances: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        overrides = json.loads(row["overrides"])
        data = switch_protocol(
            apply_overrides(_parsed(task.base_text, task.base_source), overrides), overrides
        )
        label = f"{task.base_source} [sweep row {row['scenario_id']}: {row['variant']}]"
        scenario = load_scenario_dict(
            data, source=label, name=Path(task.base_source).stem, allow_code=task.allow_code
        )
        run.update(describe(scenario))
        result = run_scenario(scenario, until_ms=task.until_ms, seed=int(row["seed"]))
        _fill_run(run, result)
        tags = {
            k: run[k]
            for k in ("group_protocol", "assignor", "protocol", "membership", "group_size")
        }
        for rec in _rebalance_records(result):
            data = rec.to_dict() if hasattr(rec, "to_dict") else rec
            out = {**key, **tags}
            for column, names in _REBALANCE_FIELDS.items():
                out[column] = _field(data, names)
            for column in ("generation", "start_ms", "end_ms", "duration_ms", "rounds"):
                out[column] = _int(out[column])
            for column in ("partitions_moved", "partitions_revoked"):
                out[column] = _int(out[column])
            for column in ("paused_partition_seconds", "imbalance_after"):
                out[column] = _float(out[column])
            rebalances.append(out)
        mine = [r for r in rebalances if r["group_id"] == run["group_id"]]
        run["rebalances"] = len(mine)
        run["rounds"] = sum(r["rounds"] or 0 for r in mine)
        run["partitions_moved"] = sum(r["partitions_moved"] or 0 for r in mine)
        run["rebalance_ms"] = sum(r["duration_ms"] or 0 for r in mine)
        run["paused_partition_seconds"] = sum(r["paused_partition_seconds"] or 0.0 for r in mine)
    except ScenarioError as exc:
        run["error"] = exc.format()
    except ValueError as exc:  # a bad override path (apply_overrides)
        run["error"] = f"invalid override: {exc}"
    except Exception as exc:  # the job must survive any one row
        run["error"] = f"{type(exc).__name__}: {exc}"
    run["wall_ms"] = (time.perf_counter() - started) * 1000.0
    return run, rebalances


def _fill_run(run: dict[str, Any], result: Any) -> None:
    group = result.group(run["group_id"]) if run["group_id"] else None
    if group is not None:
        run["final_state"] = group.state
        run["final_generation"] = group.generation
        run["final_members"] = len(group.members)
        # partition-milliseconds, the --json result's groups[].unowned_partition_ms (one
        # definition, scenarios.history.unowned_partition_ms, for every protocol and design)
        run["unowned_partition_ms"] = group.unowned_partition_ms
        run["last_change_ms"] = last_change_ms(result.events, run["group_id"])
    run["end_ms"] = result.end_ms
    run["events"] = len(result.events)
    violations = list(result.invariant_violations)
    run["invariant_violations"] = len(violations)
    run["violations"] = json.dumps(violations, default=str, sort_keys=True) if violations else None
    run["expectations_failed"] = sum(1 for e in result.expectations if not e.passed)
    m = result.measures  # seed 004's measures of the design (scenarios.measures)
    if m:
        for column in (
            "design",
            "notifications",
            "rebalance_attempts",
            "conflicts",
            "retries",
            "failed_rebalances",
        ):
            run[column] = m[column]
        after = [s["after_ms"] for s in m["settle_ms"]]
        # the slowest step to settle; None when a step never settled (or there were no steps)
        run["settle_ms_max"] = max(after) if after and None not in after else None
    if result.error:
        run["error"] = result.error


def last_change_ms(events: Sequence[Mapping[str, Any]], group_id: str) -> int | None:
    """When a partition of the group last changed hands (an assigned, revoked or lost callback
    with partitions): the run has converged since; ``groupsim compare``'s "last change at"."""
    from coordinator import events as ev

    last = None
    for e in events:
        if (
            e.get("event") == ev.REBALANCE_CALLBACK
            and e.get("partitions")
            and e.get("group_id") in (None, group_id)
        ):
            last = int(e.get("t_ms", 0))
    return last


def run_rows(task: RowTask, rows: Sequence[Mapping[str, Any]]) -> tuple[list[dict], list[dict]]:
    """The plain in-process loop: every row, in order (the reference for the Spark path)."""
    runs: list[dict[str, Any]] = []
    rebalances: list[dict[str, Any]] = []
    for row in rows:
        run, rebs = run_row(task, row)
        runs.append(run)
        rebalances.extend(rebs)
    return runs, rebalances
