"""Server-side (KIP-848) assignors beside Kafka's Java classes, in the same run.

``python -m bench server_assignors [--quick] [--full-grid] [--only=TEXT] [--no-java]
[--assignor=uniform|range] [--members=LIST] [--ratios=LIST] [--topics=LIST] [--exact-only]``

Cases are Kafka's ``ServerSideAssignorBenchmark`` (jmh-benchmarks at 1eb7644): ``memberCount``
members named ``member<i>``, ``topicCount`` topics ``topic-<i>`` of
``memberCount * partitionsToMemberRatio / topicCount`` partitions; homogeneous (everyone on every
topic) or heterogeneous (5 buckets of members on 5 slices of the topics); racks on or off;
``FULL`` (first assignment) or ``INCREMENTAL`` (one more member joins a group holding the first
assignment, ``simulateIncrementalRebalance``). Default: 1,000 and 10,000 members x ratio 10 x 100
topics (16 cases); ``--quick`` 1,000 members only; ``--full-grid`` all 720 of Kafka's parameter
combinations (hours); ``--members=100,1000`` (and ``--ratios=``, ``--topics=``) replace one axis
of the grid, so any slice of Kafka's grid runs. ``--exact-only`` skips the timing and only
compares each case's assignment with Java's (one call each; status 1 on a difference): a sweep
over Kafka's whole grid in minutes.

Java: tools/server-assignor-bench/build.sh compiles Kafka's assignors from a git mirror of
apache/kafka into ~/.cache/groupsim (nothing from Kafka is committed) and ServerAssignorBench
runs each case in one JVM: warm-up, then timed ``assign()`` calls. Python: one warm-up call, then
timed calls in this process. Times are process CPU time per call (Java: every JVM thread, GC and JIT
included; Python: ``time.process_time``), so other tenants of a shared machine do not count: the
median of five batches of calls lasting about 0.2 s each, the same on both sides
(:mod:`bench.timing`; the JVM's process clock ticks in 10 ms steps, so single calls are not timed). "ratio" is Python / Java (below 1: Python is faster). This is what Kafka's JMH benchmark
times: ``assign()``. "+read" also reads every partition of the result once, in iteration order
(what the coordinator does next when it writes the target-assignment records); groupsim's range
and uniform results build their maps on first read, so that column is the fair one for the whole
job. "py loop" is that read loop alone over the result already copied into plain dicts of lists
(member -> topic -> partitions, the shape of Kafka's MemberAssignment): what CPython spends
visiting every partition once, a floor for "py+read" whatever the result's form.
A last line sums the table up (:func:`summary`): cases at or below Java on ``assign`` and on
assign + read, and cases where "py loop" alone takes at least Java's assign + read.
"exact" compares CRC32 digests of both assignments written in iteration order (members sorted,
each member's topics and partitions in their Java/Python iteration order).
Without javac, slf4j or the mirror, the Java column says why and is skipped.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from attrs import frozen

from bench.timing import median_batch_ms, ratio_text
from coordinator.assignor import (
    GroupAssignment,
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
    SubscriptionType,
    TopicMetadata,
)
from coordinator.assignor.registry import get_assignor
from coordinator.java import copy_capacity, java_hashmap_order
from coordinator.kafka_uuid import Uuid, topic_id_for

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "tools" / "server-assignor-bench" / "build.sh"
NUMBER_OF_RACKS = 3
MAX_BUCKET_COUNT = 5


@frozen
class Case:
    members: int
    ratio: int
    topics: int
    rack_aware: bool
    subscription: str  # HOMOGENEOUS | HETEROGENEOUS
    assignor: str  # uniform | range
    assignment: str  # FULL | INCREMENTAL

    @property
    def label(self) -> str:
        sub = "homo" if self.subscription == "HOMOGENEOUS" else "hetero"
        return (
            f"{self.assignor}-{sub}-{self.assignment.lower()}-m{self.members}-r{self.ratio}"
            f"-t{self.topics}{'-racks' if self.rack_aware else ''}"
        )


FULL_AXES: dict[str, tuple[int, ...]] = {
    "members": (100, 500, 1000, 5000, 10000),
    "ratios": (5, 10, 50),
    "topics": (10, 100, 1000),
}
"""Kafka's ``ServerSideAssignorBenchmark`` parameters (``memberCount``,
``partitionsToMemberRatio``, ``topicCount``); ``--members=`` etc. pick from any positive ints."""


def grid(
    quick: bool,
    full: bool,
    axes: dict[str, tuple[int, ...]] | None = None,
    assignors: tuple[str, ...] = ("uniform", "range"),
) -> list[Case]:
    """The cases: the default 16, ``quick`` (1,000 members), ``full`` (Kafka's 720), with any
    axis replaced by ``axes`` (racks off unless ``full``: they change nothing at 1eb7644)."""
    if full:
        members, ratios, topics = FULL_AXES["members"], FULL_AXES["ratios"], FULL_AXES["topics"]
        racks: tuple[bool, ...] = (True, False)
    elif quick:
        members, ratios, topics, racks = (1000,), (10,), (100,), (False,)
    else:
        members, ratios, topics, racks = (1000, 10000), (10,), (100,), (False,)
    axes = axes or {}
    members = axes.get("members", members)
    ratios = axes.get("ratios", ratios)
    topics = axes.get("topics", topics)
    return [
        Case(m, r, t, rack, sub, a, kind)
        for m, r, t, rack, sub, a, kind in itertools.product(
            members,
            ratios,
            topics,
            racks,
            ("HOMOGENEOUS", "HETEROGENEOUS"),
            assignors,
            ("FULL", "INCREMENTAL"),
        )
    ]


def parse_axes(argv: list[str]) -> dict[str, tuple[int, ...]]:
    """``--members=100,1000``, ``--ratios=5,50``, ``--topics=10,1000`` from ``argv``; raises
    ``ValueError`` naming the flag for anything but a comma-separated list of positive ints."""
    axes: dict[str, tuple[int, ...]] = {}
    for arg in argv:
        name, _, text = arg.partition("=")
        key = name.removeprefix("--")
        if key not in FULL_AXES or not name.startswith("--"):
            continue
        try:
            values = tuple(int(v) for v in text.split(","))
        except ValueError:
            values = ()
        if not values or min(values) < 1 or max(values) > 1_000_000:
            raise ValueError(
                f"{name}={text}: expected positive ints up to 1,000,000, comma-separated"
            )
        axes[key] = values
    return axes


class Inputs:
    """One case's inputs, in the iteration orders Kafka's benchmark has (HashMap members,
    TopicIds over a HashSet of topic names)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        names = [f"topic-{i}" for i in range(case.topics)]
        per_topic = case.members * case.ratio // case.topics
        self.ids = [topic_id_for(n) for n in names]
        self.counts = dict(zip(self.ids, [per_topic] * len(self.ids), strict=True))
        index = {n: i for i, n in enumerate(names)}
        count = case.members - 1 if case.assignment == "INCREMENTAL" else case.members
        self.member_topics: dict[str, list[int]] = {}
        self.racks: dict[str, str | None] = {}
        for i, names_i in self._subscriptions(names, count):
            member_id = f"member{i}"
            # TopicIds iterates the member's HashSet<String> of topic names.
            ordered = java_hashmap_order(names_i, copy_capacity(len(names_i)))
            self.member_topics[member_id] = [index[n] for n in ordered]
            self.racks[member_id] = self._rack(i)
        if case.subscription == "HETEROGENEOUS":
            self.new_topics = self.member_topics[f"member{case.members - 2}"]
        else:
            self.new_topics = [
                index[n] for n in java_hashmap_order(names, copy_capacity(len(names)))
            ]
        self.new_rack = self._rack(case.members - 1)

    def _rack(self, i: int) -> str | None:
        return f"rack{i % NUMBER_OF_RACKS}" if self.case.rack_aware else None

    def _subscriptions(self, names: list[str], count: int) -> Iterator[tuple[int, list[str]]]:
        if self.case.subscription == "HOMOGENEOUS":
            for i in range(count):
                yield i, names
            return
        # AssignorBenchmarkUtils.createHeterogeneousBucketedMembers
        buckets = min(MAX_BUCKET_COUNT, count)
        topics_per = -(-len(names) // buckets)
        members_per = -(-count // buckets)
        for b in range(buckets):
            for i in range(b * members_per, min((b + 1) * members_per, count)):
                yield i, names[b * topics_per : min((b + 1) * topics_per, len(names))]

    def java_text(self, min_iters: int, seconds: float) -> str:
        c = self.case
        lines = [
            f"case {c.label} {c.assignor} {c.subscription} {c.assignment} {min_iters} {seconds}"
        ]
        lines.append(f"topics {len(self.ids)}")
        lines += [f"{t} {self.counts[t]}" for t in self.ids]
        lines.append(f"members {len(self.member_topics)}")
        for member_id, topics in self.member_topics.items():
            lines.append(
                f"{member_id} {self.racks[member_id] or '-'} {len(topics)} {' '.join(map(str, topics))}"
            )
        if c.assignment == "INCREMENTAL":
            lines.append(
                f"newmember {self.new_rack or '-'} {len(self.new_topics)} {' '.join(map(str, self.new_topics))}"
            )
        lines.append("end")
        return "\n".join(lines) + "\n"

    def python_spec(self) -> tuple[GroupSpecImpl, SubscribedTopicDescriberImpl]:
        """The GroupSpec and describer the timed call gets (INCREMENTAL: after the first
        assignment, with one new member), as the benchmark's setup builds them."""
        c = self.case
        kind = SubscriptionType[c.subscription]
        describer = SubscribedTopicDescriberImpl(
            {t: TopicMetadata(t, f"topic-{i}", self.counts[t]) for i, t in enumerate(self.ids)}
        )
        subs = {m: _ordered_set(self.ids, ts) for m, ts in self.member_topics.items()}
        order = java_hashmap_order(list(self.member_topics))
        members = {
            m: MemberSubscriptionAndAssignmentImpl(self.racks[m], None, subs[m]) for m in order
        }
        spec = GroupSpecImpl(members, subscription_type=kind)
        if c.assignment == "FULL":
            return spec, describer
        initial = get_assignor(c.assignor).assign(spec, describer)
        inverted: dict[Uuid, dict[int, str]] = {}
        for member_id, assignment in initial.members.items():
            for topic_id, partitions in assignment.partitions.items():
                target = inverted.setdefault(topic_id, {})
                for p in partitions:
                    target[p] = member_id
        new_subs = (
            subs[f"member{c.members - 2}"]
            if c.subscription == "HETEROGENEOUS"
            else _ordered_set(self.ids, self.new_topics)
        )
        updated = {}
        for member_id in [*order, "newMember"]:
            if member_id == "newMember":
                updated[member_id] = MemberSubscriptionAndAssignmentImpl(
                    self.new_rack, None, new_subs
                )
            else:
                old = members[member_id]
                given = initial.members.get(member_id)
                updated[member_id] = MemberSubscriptionAndAssignmentImpl(
                    old.rack_id, None, old.subscribed_topic_ids, given.partitions if given else {}
                )
        ordered_members = {m: updated[m] for m in java_hashmap_order([*order, "newMember"])}
        return GroupSpecImpl(ordered_members, kind, inverted), describer


def _ordered_set(ids: list[Uuid], indices: list[int]):  # type: ignore[no-untyped-def]
    """A set iterating in the given order (Kafka's TopicIds view over a HashSet of names)."""
    return dict.fromkeys(ids[i] for i in indices).keys()


def digest(result: GroupAssignment) -> str:
    """CRC32 of the assignment in iteration order, as ServerAssignorBench.digest writes it."""
    crc = 0
    for member_id in sorted(result.members):
        parts = [f"m:{member_id}\n"]
        for topic_id, partitions in result.members[member_id].partitions.items():
            parts.append(f"t:{topic_id}:{','.join(map(str, partitions))}\n")
        crc = zlib.crc32("".join(parts).encode(), crc)
    return f"{crc:x}"


def time_python(case: Case, seconds: float) -> tuple[float, float, float, str]:
    """(CPU ms per ``assign`` call, CPU ms per assign + read of every partition, CPU ms of the read
    loop alone over plain lists, digest): medians of batches (:mod:`bench.timing`) after one
    warm-up call."""
    spec, describer = Inputs(case).python_spec()
    assignor = get_assignor(case.assignor)
    result = assignor.assign(spec, describer)  # warm-up
    per_call = median_batch_ms(lambda: assignor.assign(spec, describer), seconds)

    def assign_and_read() -> int:
        sink = 0
        for assignment in assignor.assign(spec, describer).members.values():
            for partitions in assignment.partitions.values():
                for p in partitions:
                    sink += p
        return sink

    per_read = median_batch_ms(assign_and_read, seconds)
    return per_call, per_read, _read_loop_floor(result, seconds), digest(result)


def _read_loop_floor(result: GroupAssignment, seconds: float) -> float:
    """CPU ms of the "+read" loop alone over the result copied into plain dicts of lists: the
    interpreter's cost of visiting every partition once, which no form of the result goes below
    in CPython (docs/server-assignors.md compares it with Java's whole +read)."""
    plain = {
        member_id: {topic_id: list(partitions) for topic_id, partitions in a.partitions.items()}
        for member_id, a in result.members.items()
    }

    def loop() -> int:
        sink = 0
        for topics in plain.values():
            for partitions in topics.values():
                for p in partitions:
                    sink += p
        return sink

    return median_batch_ms(loop, seconds / 2)


def java_classpath() -> tuple[str | None, str]:
    """(classpath, message): build Kafka's assignors once into the cache, or say why not."""
    if not BUILD.exists():
        return None, f"missing {BUILD}"
    try:
        proc = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"cannot build Kafka's assignors: {exc}"
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        return None, f"Java column skipped: {reason}"
    return proc.stdout.strip().splitlines()[
        -1
    ], "Kafka's UniformAssignor/RangeAssignor compiled from the mirror"


def time_java(
    classpath: str,
    cases: list[Case],
    seconds: float,
    min_iters: int = 3,
    inputs: Callable[[Case], Inputs] = Inputs,
) -> Iterator[dict]:
    """Run the cases in one JVM, one at a time (the next case's input is written once the
    previous answer came back, so inputs are not held in memory all at once); ``inputs`` builds
    a case's inputs (the benchmark's own by default)."""
    proc = subprocess.Popen(
        ["java", "-Xss8m", "-cp", classpath, "ServerAssignorBench"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for case in cases:
            proc.stdin.write(inputs(case).java_text(min_iters, seconds))
            proc.stdin.flush()
            line = proc.stdout.readline()
            if not line:
                yield {"error": "the JVM exited"}
                return
            yield json.loads(line)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def check_exact(cases: list[Case], classpath: str) -> int:
    """``--exact-only``: each case's assignment from Kafka's classes and from groupsim's,
    compared by digest without timing (one call each); 1 if any differs."""
    differ = 0
    for case, java in zip(cases, time_java(classpath, cases, 0, min_iters=1), strict=False):
        if "error" in java:
            print(f"{case.label}: {java['error']}")
            return 1
        spec, describer = Inputs(case).python_spec()
        ours = digest(get_assignor(case.assignor).assign(spec, describer))
        same = ours == java["digest"]
        differ += not same
        print(f"{case.label:<52}{'yes' if same else 'NO':>6}", flush=True)
    print(f"{len(cases)} cases, {differ} not exact")
    return int(differ > 0)


@frozen
class Timed:
    """One case's CPU ms on both sides: ``assign`` alone, assign + read, and CPython's read loop
    alone over plain lists (the floor of any Python implementation's assign + read)."""

    python: float
    java: float
    python_read: float
    java_read: float
    read_floor: float


def summary(rows: list[Timed]) -> str:
    """The table's verdict in three counts: cases at or below Java on ``assign`` alone, on assign +
    read, and cases where CPython's read loop alone already takes at least Java's assign + read,
    so that no Python implementation, whatever its algorithm or result form, can match Java's
    whole job there (Java readings of 0, below its clock's tick, are left out)."""
    timed = [r for r in rows if r.java > 0 and r.java_read > 0]
    if not timed:
        return "summary: no case has a Java reading to compare with"
    n = len(timed)
    assign = sum(r.python <= r.java for r in timed)
    whole = sum(r.python_read <= r.java_read for r in timed)
    floor = sum(r.read_floor >= r.java_read for r in timed)
    return (
        f"summary: at or below Java on {assign} of {n} cases (assign), {whole} of {n} "
        f"(assign + read); CPython's read loop alone >= Java's assign + read on {floor} of {n}"
    )


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    full = "--full-grid" in argv
    with_java = "--no-java" not in argv
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
    seconds = 0.5 if quick else 1.0
    chosen = next((a.split("=", 1)[1] for a in argv if a.startswith("--assignor=")), "")
    if chosen not in ("", "uniform", "range"):
        print(f"bench server_assignors: --assignor={chosen}: expected uniform or range")
        return 2
    try:
        axes = parse_axes(argv)
    except ValueError as exc:
        print(f"bench server_assignors: {exc}")
        return 2
    assignors = (chosen,) if chosen else ("uniform", "range")
    cases = [c for c in grid(quick, full, axes, assignors) if only in c.label]
    if "--exact-only" in argv:
        classpath, message = java_classpath()
        if classpath is None:
            print(f"bench server_assignors --exact-only: {message}")
            return 1
        return check_exact(cases, classpath)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    classpath, message = (
        java_classpath() if with_java else (None, "Java column not run (--no-java)")
    )
    print(f"{message}; load average {load} on {os.cpu_count()} CPUs; CPU ms per call")
    header = (
        f"{'case':<48}{'partitions':>11}{'python ms':>11}{'java ms':>10}{'ratio':>8}"
        f"{'py+read':>10}{'java+read':>11}{'ratio':>8}{'py loop':>9}{'exact':>7}"
    )
    print(header)
    print("-" * len(header), flush=True)
    java_results = time_java(classpath, cases, seconds) if classpath else None
    status = 0
    rows: list[Timed] = []
    for case in cases:
        py_min, py_read, py_loop, py_digest = time_python(case, seconds)
        partitions = case.members * case.ratio // case.topics * case.topics
        java = next(java_results) if java_results is not None else None
        if java is None or "error" in java:
            java_text, ratio, java_read, read_ratio, exact = "-", "-", "-", "-", "-"
        else:
            java_text = f"{java['cpu_ms']:.2f}"
            ratio = ratio_text(py_min, java["cpu_ms"])
            java_read = f"{java['read_ms']:.2f}"
            read_ratio = ratio_text(py_read, java["read_ms"])
            exact = "yes" if java["digest"] == py_digest else "NO"
            status |= exact == "NO"
            rows.append(Timed(py_min, java["cpu_ms"], py_read, java["read_ms"], py_loop))
        print(
            f"{case.label:<48}{partitions:>11,}{py_min:>11.2f}{java_text:>10}{ratio:>8}"
            f"{py_read:>10.2f}{java_read:>11}{read_ratio:>8}{py_loop:>9.2f}{exact:>7}",
            flush=True,
        )
    if java_results is not None:
        print(summary(rows))
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
