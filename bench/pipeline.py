"""Spark pipeline benchmark: sweep throughput (plain loop vs local[1] vs local[2]) and placement.

``python -m bench pipeline [--quick]``. Each Spark measurement runs in its own process so that
each pays (and reports apart) its own JVM start; the sweep's first job is timed apart too
(JIT and Python-worker warm-up), then the measured sweep runs on the warm session.

Goals (issue 6): local[2] at least 1.6x the plain loop's scenarios/s; 10 million group ids
placed in under 15 s end to end (session start included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BASE = """\
version: 1
name: bench-restart
description: a small group forms, one member restarts (the cheapest realistic rebalance story)
cluster:
  brokers: 1
  topics: {T: 6}
defaults:
  partition.assignment.strategy: [range]
  session.timeout.ms: 10000
  heartbeat.interval.ms: 3000
consumers:
  - {id: "C{i}", count: 3, group: g, topics: [T]}
timeline:
  - {at: 0s, start: all}
  - {at: 5s, close: C0}
  - {at: 6s, start: C0}
until: 12s
"""
SWEEP = """\
sweep: bench
base: base.yaml
seeds: {seeds}
variants:
  eager: {{defaults.partition.assignment.strategy: [range]}}
  cooperative: {{defaults.partition.assignment.strategy: [cooperative-sticky]}}
grid:
  consumers.count: [2, 3]
"""
# Rows of the warm-up sweep each Spark session runs first (timed apart): the JIT and every Python
# worker's first scenarios cost several times a warm row.
WARMUP_ROWS = 200
ID_PREFIXES = ("orders", "payments", "группа", "组", "grp-😀", "grupo-ñ", "svc")


def _write_sweep(root: Path, rows: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "base.yaml").write_text(BASE, encoding="utf-8")
    path = root / f"sweep-{rows}.yaml"
    path.write_text(SWEEP.format(seeds=max(1, rows // 4)), encoding="utf-8")
    return path


def _write_ids(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, n, 100_000):
            handle.write(
                "".join(
                    f"{ID_PREFIXES[i % len(ID_PREFIXES)]}-{i}\n"
                    for i in range(start, min(n, start + 100_000))
                )
            )


# --- workers (run in a child process: one JVM each) ---------------------------------------------


def _tree_cpu_s() -> float:
    """CPU-seconds used so far by this process and every descendant (the JVM, Python workers).

    Read from /proc (Linux): the workers are the JVM's children, not ours, so getrusage cannot
    see them while they live. 0.0 where /proc is missing.
    """
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parent[pid] = int(fields[1])
        # utime, stime, cutime, cstime (fields 14-17 of stat; here offset by the 2 cut off)
        cpu[pid] = sum(int(x) for x in fields[11:15]) / ticks
    me = os.getpid()
    total = 0.0
    for pid, used in cpu.items():
        p = pid
        while p and p != me:
            p = parent.get(p, 0)
        if p == me:
            total += used
    return total


def _worker_sweep(master: str, sweep_path: str, out: str) -> dict[str, Any]:
    from pipeline.session import build_session
    from pipeline.spec import load_sweep
    from pipeline.sweep import run_sweep

    t0 = time.perf_counter()
    spark = build_session(master, app_name="bench-sweep", light_jvm=True)  # as `groupsim sweep`
    start_s = time.perf_counter() - t0
    sweep = load_sweep(sweep_path)
    warm = _write_sweep(Path(out) / "warm", WARMUP_ROWS)
    t1 = time.perf_counter()
    run_sweep(spark, load_sweep(warm), f"{out}/warm-out")
    warm_s = time.perf_counter() - t1
    t2, cpu = time.perf_counter(), _tree_cpu_s()
    summary = run_sweep(spark, sweep, f"{out}/out")
    sweep_s = time.perf_counter() - t2
    sweep_cpu_s = _tree_cpu_s() - cpu
    spark.stop()
    return {
        "start_s": start_s,
        "warmup_s": warm_s,
        "sweep_s": sweep_s,
        "sweep_cpu_s": sweep_cpu_s,
        "rows": summary.runs,
        "failed": summary.failed,
    }


def _worker_placement(ids_path: str, methods: list[str]) -> dict[str, Any]:
    from pipeline.placement import place, read_ids
    from pipeline.session import build_session

    t0 = time.perf_counter()
    spark = build_session("local[2]", app_name="bench-placement")
    out: dict[str, Any] = {"start_s": time.perf_counter() - t0}
    for i, method in enumerate(methods):
        t = time.perf_counter()
        report = place(
            spark, read_ids(spark, ids_path), num_partitions=50, brokers=6, method=method
        )
        out[f"{method}#{i}"] = {
            "seconds": time.perf_counter() - t,
            "ids": report.total,
            "mismatches": report.mismatches,
            "verified": report.verified,
            "max_over_mean": report.partition_skew.max_over_mean,
        }
    out["end_to_end_s"] = time.perf_counter() - t0
    spark.stop()
    return out


def _child(kind: str, *args: str) -> dict[str, Any]:
    """Run a worker in a fresh process (its own JVM); adds the CPU-seconds it and its children used."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "bench.pipeline", "--worker", kind, *args]
    env = {**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed:\n{proc.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out


# --- the benchmark ----------------------------------------------------------------------------


def _plain_loop(sweep_path: Path) -> dict[str, Any]:
    from pipeline.runrow import RowTask, run_rows
    from pipeline.spec import load_sweep

    sweep = load_sweep(sweep_path)
    rows = [r.as_dict() for r in sweep.rows()]
    task = RowTask(sweep.base_text, sweep.base_source, sweep.until_ms)
    run_rows(task, rows[:8])  # imports and caches, as the Spark workers' warm-up does
    t, cpu = time.perf_counter(), time.process_time()
    runs, _ = run_rows(task, rows)
    return {
        "sweep_s": time.perf_counter() - t,
        "cpu_s": time.process_time() - cpu,
        "rows": len(runs),
        "failed": sum(1 for r in runs if r["error"]),
    }


def _plain_placement(ids_path: Path, limit: int) -> dict[str, float]:
    from coordinator.placement import partition_for, partitions_for

    with open(ids_path, encoding="utf-8") as handle:
        ids = [line.rstrip("\n") for _, line in zip(range(limit), handle, strict=False)]
    t = time.perf_counter()
    for gid in ids:
        partition_for(gid, 50)
    loop = time.perf_counter() - t
    t = time.perf_counter()
    partitions_for(ids, 50)
    vec = time.perf_counter() - t
    return {"ids": len(ids), "loop_ids_s": len(ids) / loop, "numpy_ids_s": len(ids) / vec}


def _int_flag(argv: list[str], name: str, default: int) -> int:
    """``--rows=500`` style overrides (the bench runner passes only flags through)."""
    for arg in argv:
        if arg.startswith(f"{name}="):
            return int(arg.split("=", 1)[1])
    return default


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        kind, args = argv[1], argv[2:]
        result = _worker_sweep(*args) if kind == "sweep" else _worker_placement(args[0], args[1:])
        print(json.dumps(result))
        return 0
    quick = "--quick" in argv
    rows = _int_flag(argv, "--rows", 1_000 if quick else 10_000)
    n_ids = _int_flag(argv, "--ids", 1_000_000 if quick else 10_000_000)
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
    do_sweep, do_place = only in ("", "sweep"), only in ("", "placement")
    failed = mismatches = 0
    with tempfile.TemporaryDirectory(prefix="groupsim-bench-") as tmp:
        root = Path(tmp)
        print(f"load average at the start: {os.getloadavg()[0]:.1f} (2 cores)", flush=True)
        if do_sweep:
            failed = _bench_sweep(root, rows)
        if do_place:
            mismatches = _bench_placement(root, n_ids, quick)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 1 if mismatches or failed else 0


def _bench_sweep(root: Path, rows: int) -> int:
    sweep_path = _write_sweep(root / "sweep", rows)
    print(f"sweep of {rows:,} rows", flush=True)
    plain = _plain_loop(sweep_path)
    print(f"  plain loop: {plain['sweep_s']:.1f} s", flush=True)
    spark = {}
    for master in ("local[1]", "local[2]"):
        spark[master] = _child("sweep", master, str(sweep_path), str(root / master))
        print(f"  {master}: {spark[master]}", flush=True)
    base = rows / plain["sweep_s"]
    print()
    print(
        f"| sweep ({rows:,} scenarios) | session start s | warm-up ({WARMUP_ROWS} rows) s | sweep s "
        "| scenarios/s | vs plain | sweep CPU-s (driver+JVM+workers) |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| plain in-process loop | - | - | {plain['sweep_s']:.1f} | {base:,.0f} | 1.00x "
        f"| {plain['cpu_s']:.1f} |"
    )
    for master, r in spark.items():
        rate = r["rows"] / r["sweep_s"]
        print(
            f"| {master} | {r['start_s']:.1f} | {r['warmup_s']:.1f} | {r['sweep_s']:.1f} "
            f"| {rate:,.0f} | {rate / base:.2f}x | {r['sweep_cpu_s']:.1f} |"
        )
    two = spark["local[2]"]
    if two["sweep_cpu_s"] > 0:
        ideal = 2 * plain["cpu_s"] / two["sweep_cpu_s"]
        print(
            f"\nCPU cost of a scenario: plain {plain['cpu_s'] / rows * 1000:.1f} ms, "
            f"local[2] {two['sweep_cpu_s'] / rows * 1000:.1f} ms; on 2 otherwise idle cores "
            f"local[2] could reach about {ideal:.2f}x (2 x plain CPU / Spark CPU)."
        )
    speedup = (spark["local[2]"]["rows"] / spark["local[2]"]["sweep_s"]) / base
    print(
        f"\ngoal: local[2] >= 1.6x the plain loop: {speedup:.2f}x, {'met' if speedup >= 1.6 else 'NOT met'}"
    )
    return plain["failed"] + sum(r["failed"] for r in spark.values())


def _bench_placement(root: Path, n_ids: int, quick: bool) -> int:
    t = time.perf_counter()
    ids_path = root / "ids.txt"
    _write_ids(ids_path, n_ids)
    gen_s = time.perf_counter() - t
    methods = ["reflect", "reflect"] + ([] if quick else ["pandas-udf"])
    placement = _child("placement", str(ids_path), *methods)
    plain_place = _plain_placement(ids_path, min(n_ids, 1_000_000))
    print()
    print(f"| placement ({n_ids:,} ids, 50 partitions, local[2]) | seconds | ids/s |")
    print("|---|---|---|")
    print(f"| Spark session start | {placement['start_s']:.1f} | |")
    for key, r in placement.items():
        if isinstance(r, dict):
            label = f"{key.split('#')[0]} ({'first job' if key.endswith('#0') else 'warm'})"
            print(f"| {label} | {r['seconds']:.1f} | {r['ids'] / r['seconds']:,.0f} |")
    e2e = placement["start_s"] + placement["reflect#0"]["seconds"]
    print(f"| end to end: start + first reflect job | {e2e:.1f} | {n_ids / e2e:,.0f} |")
    print(f"| plain Python partition_for (loop, 1 core) | | {plain_place['loop_ids_s']:,.0f} |")
    print(f"| numpy partitions_for (1 core) | | {plain_place['numpy_ids_s']:,.0f} |")
    print(f"(writing the ids file took {gen_s:.1f} s; not counted)")
    print(
        f"\ngoal: 10M ids end to end < 15 s: {e2e:.1f} s for {n_ids:,}, {'met' if e2e < 15 else 'NOT met'}"
    )
    return sum(r["mismatches"] for r in placement.values() if isinstance(r, dict))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
