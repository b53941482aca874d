"""Assignor benchmark: our assignors beside Kafka's Java client assignors (same run) and
kafka-python's, on Kafka's performance workloads.

``python -m bench assignors [--quick] [--cap=SECONDS] [--only=SUBSTRING] [--no-kafka-python]
[--no-java]``

For each workload (see ``bench/assignor_workloads.py``) and each assignor and round it prints:
our time (the fastest call in this process once at least 3 calls ran and 1 s passed, each on a
fresh assignor instance, the clock around the ``assign`` call alone: the previous result is
released first, and the garbage collector's passes that the call triggers are inside it) and our
first call,
Kafka's own Java assignor on the same inputs in the same run (RangeAssignor, RoundRobinAssignor,
StickyAssignor, CooperativeStickyAssignor from apache/kafka 1eb7644, compiled with javac by
``tools/client-assignor-bench/build.sh`` and driven by its ``ClientAssignorBench.java``: the
fastest call once at least 3 calls ran and 1 s passed, after a warm-up of at least 2 calls and
1 s, so that its JIT has compiled a millisecond-sized case too; all Java timings are taken first, before ours, so the two never
share the CPUs), the ratio Java / ours (above 1: we are faster), kafka-python's time (in a
subprocess, min of up to 3 calls within the cap, or "did not finish in N s"), our peak traced
memory for one call (tracemalloc, numpy included) and kafka-python's peak RSS. "exact" compares
CRC32 digests of both assignments (members sorted, each member's partitions in list order): the
fresh round gets the same input on both sides, a later round each side's own first result, so
"yes" there means the whole two-round run agrees; a ``*`` marks a case where Java's own calls
disagreed with each other (none so far); the suite's exit status is 1 on any "NO". Without javac or
Kafka's sources the Java column says why it is empty. Kafka's JUnit limits: 30 s (uniform),
90 s (non-equal, halves), 60 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

from assignors.registry import get_assignor
from bench.assignor_workloads import WORKLOADS, fresh_subscriptions, next_round_subscriptions

ROOT = Path(__file__).resolve().parent.parent
JAVA_BUILD = ROOT / "tools" / "client-assignor-bench" / "build.sh"


def _java_spec(workload, quick: bool) -> str:
    """One workload as the Java driver's input line (ClientAssignorBench.java)."""
    counts, members, leaving = workload.build(quick)
    sets: dict[tuple[str, ...], int] = {}
    member_refs = []
    for m, topics in members.items():
        index = sets.setdefault(tuple(topics), len(sets))
        member_refs.append(f"{m}:{index}")
    return "\t".join(
        [
            workload.key,
            "topics=" + ",".join(f"{t}:{n}" for t, n in counts.items()),
            "sets=" + "|".join(",".join(ts) for ts in sets),
            "members=" + ",".join(member_refs),
            "leaving=" + ",".join(leaving),
            "assignors=" + ",".join(workload.assignors),
            "rounds=" + ",".join(workload.rounds),
        ]
    )


JavaRow = dict[str, Any]


def _java_times(workloads: list, quick: bool) -> tuple[dict[tuple[str, str, str], JavaRow], str]:
    """Kafka's Java assignors on ``workloads``: {(workload, assignor, round): the driver's row
    (``seconds``, ``digest`` of the first call's assignment, ``stable``: the next calls gave the
    same)} and a note (empty, or why there are no Java timings)."""
    try:
        built = subprocess.run(
            ["bash", str(JAVA_BUILD)], capture_output=True, text=True, timeout=900
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {}, f"Java assignors not built ({exc})"
    if built.returncode != 0:
        return {}, f"Java assignors not built: {(built.stderr.strip().splitlines() or ['?'])[-1]}"
    classpath = built.stdout.strip().splitlines()[-1]
    spec = "\n".join(_java_spec(w, quick) for w in workloads) + "\n"
    run = subprocess.run(
        ["java", "-Dbudget=20", "-cp", classpath, "ClientAssignorBench"],
        input=spec,
        capture_output=True,
        text=True,
    )
    out: dict[tuple[str, str, str], JavaRow] = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            data = json.loads(line)
            out[(data["workload"], data["assignor"], data["round"])] = data
    if run.returncode != 0:
        return out, f"Java driver failed: {(run.stderr.strip().splitlines() or ['?'])[-1]}"
    return out, ""


#: each side's steady state: calls continue until at least this many ran and this long passed
#: (Java: after its warm-up of as long again), then the fastest counts
MIN_CALLS = 3
MIN_SECONDS = 1.0
MAX_CALLS = 500


def digest(result: dict) -> str:
    """CRC32 of an assignment as the Java driver writes it: members sorted, each ``m:<member>``
    then its partitions in list order as ``<topic>-<partition>`` lines."""
    crc = 0
    for member in sorted(result):
        text = f"m:{member}\n" + "".join(f"{tp.topic}-{tp.partition}\n" for tp in result[member])
        crc = zlib.crc32(text.encode(), crc)
    return f"{crc:x}"


def _exact(java_row: JavaRow | None, ours: str) -> str:
    """``yes`` / ``NO`` against Java's first call (``yes*``/``NO*`` when Java's own calls
    disagreed with each other), ``-`` without Java."""
    if java_row is None or "digest" not in java_row:
        return "-"
    mark = "" if java_row.get("stable", True) else "*"
    return ("yes" if java_row["digest"] == ours else "NO") + mark


def _time_ours(name: str, counts: dict, subs: dict) -> tuple[float, float, float, int, str]:
    """(fastest call, first call, peak traced MB, partitions assigned, digest of the result).

    Calls continue until ``MIN_CALLS`` ran and ``MIN_SECONDS`` passed (at most ``MAX_CALLS``),
    each on a fresh assignor instance, as the Java driver does after its warm-up: a
    millisecond-sized case is then timed at its steady state, not on its first calls. The clock
    covers the ``assign`` call only: the previous call's result is released before it starts
    (else rebinding the name would free a million references inside the timing), as the Java
    driver's timing does not include freeing earlier results either; the collector's passes a
    call triggers are inside it."""
    times: list[float] = []
    result: dict = {}
    while len(times) < MAX_CALLS and (len(times) < MIN_CALLS or sum(times) < MIN_SECONDS):
        assignor = get_assignor(name)
        result = {}
        start = time.perf_counter()
        result = assignor.assign(counts, subs)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    get_assignor(name).assign(counts, subs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return min(times), times[0], peak / 2**20, sum(map(len, result.values())), digest(result)


def _time_kafka_python(
    key: str, name: str, round_name: str, quick: bool, cap: float
) -> tuple[str, float | None, str]:
    """(text, seconds or None, rss text), running the runner in a subprocess with a hard cap."""
    cmd = [
        sys.executable,
        "-m",
        "bench._kafka_python_runner",
        key,
        name,
        round_name,
        "1" if quick else "0",
        str(cap),
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip()
        if ready != "READY":
            proc.kill()
            return "failed to start", None, "-"
        out, err = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"did not finish in {cap:g} s", None, "-"
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        last = (err.strip().splitlines() or ["?"])[-1]
        return f"error: {last.split(':')[0][:24]}", None, "-"
    data = json.loads(lines[-1])
    return f"{data['seconds']:.3f} s", float(data["seconds"]), f"{data['maxrss_mb']:.0f} MB"


def _parse(argv: list[str]) -> tuple[bool, float, str, bool, bool]:
    quick = "--quick" in argv
    cap = 20.0 if quick else 60.0
    only = ""
    with_kp = "--no-kafka-python" not in argv
    with_java = "--no-java" not in argv
    for arg in argv:
        if arg.startswith("--cap="):
            cap = float(arg.split("=", 1)[1])
        elif arg.startswith("--only="):
            only = arg.split("=", 1)[1]
        elif arg not in ("--quick", "--no-kafka-python", "--no-java"):
            raise SystemExit(
                f"unknown option {arg!r}; use --quick, --cap=SECONDS, --only=TEXT, "
                "--no-kafka-python, --no-java"
            )
    return quick, cap, only, with_kp, with_java


def main(argv: list[str]) -> int:
    quick, cap, only, with_kp, with_java = _parse(argv)
    header = (
        f"{'assignor':<19}{'round':<7}{'ours min':>11}{'ours 1st':>10}{'Java':>10}"
        f"{'Java/ours':>10}{'exact':>7}{'kafka-python':>32}{'speed-up':>10}{'our peak':>10}"
        f"{'kp RSS':>9}"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"kafka-python cap {cap:g} s per run{' (quick sizes)' if quick else ''}; "
        f"load average {load} on {os.cpu_count()} CPUs (timings scale with load)",
        flush=True,
    )
    chosen = [w for w in WORKLOADS if not only or only in w.key]
    java: dict[tuple[str, str, str], JavaRow] = {}
    java_note = "Java assignors not run (--no-java)"
    if with_java:
        print("timing Kafka's Java assignors first (same run) ...", flush=True)
        java, java_note = _java_times(chosen, quick)
    if java_note:
        print(java_note, flush=True)
    status = 0
    for workload in chosen:
        counts, members, leaving = workload.build(quick)
        total = sum(counts.values())
        print(
            f"\n## {workload.key}: {workload.title} [{total:,} partitions, {len(members):,} members]"
        )
        print(header)
        print("-" * len(header), flush=True)
        for name in workload.assignors:
            rounds = workload.rounds if name in ("sticky", "cooperative-sticky") else ("fresh",)
            fresh = fresh_subscriptions(members)
            first_result = None
            kp_fresh_failed = False
            for round_name in rounds:
                if round_name == "fresh":
                    subs = fresh
                else:
                    if first_result is None:
                        first_result = get_assignor(name).assign(counts, fresh)
                    gone = leaving if round_name == "leave" else []
                    subs = next_round_subscriptions(name, members, first_result, gone)
                best, first, peak, assigned, ours = _time_ours(name, counts, subs)
                if not with_kp:
                    kp_text, kp_s, kp_rss = "not run", None, "-"
                elif kp_fresh_failed:
                    kp_text, kp_s, kp_rss = "skipped (fresh did not finish)", None, "-"
                else:
                    kp_text, kp_s, kp_rss = _time_kafka_python(
                        workload.key, name, round_name, quick, cap
                    )
                    kp_fresh_failed = round_name == "fresh" and kp_s is None
                speedup = f"{kp_s / best:,.0f}x" if kp_s else "-"
                java_row = java.get((workload.key, name, round_name))
                java_s = float(java_row["seconds"]) if java_row is not None else None
                exact = _exact(java_row, ours)
                status |= exact.startswith("NO")
                java_text = f"{java_s:.4f} s" if java_s is not None else "-"
                ratio = f"{java_s / best:.2f}x" if java_s is not None and best > 0 else "-"
                print(
                    f"{name:<19}{round_name:<7}{best:>9.4f} s{first:>8.3f} s{java_text:>10}"
                    f"{ratio:>10}{exact:>7}{kp_text:>32}{speedup:>10}{peak:>7.0f} MB{kp_rss:>9}",
                    flush=True,
                )
                if round_name == "fresh" and name in ("sticky", "cooperative-sticky"):
                    assert assigned == sum(
                        counts[t] for t in {t for ts in members.values() for t in ts} if t in counts
                    ), "fresh sticky assignment must be complete"
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
