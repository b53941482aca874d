"""The target-assignment step beside Kafka's ``TargetAssignmentBuilder``, in the same run.

``python -m bench target_assignment [--quick] [--full-grid] [--only=TEXT] [--no-java]
[--seconds=S] [--split]``

Cases are Kafka's JMH ``TargetAssignmentBuilderBenchmark`` (jmh-benchmarks at 1eb7644): a group of
``memberCount - 1`` members (``member<i>``, everyone on every topic, or 5 buckets of members on 5
slices of the topics) holding the uniform assignor's first assignment, and ``newMember``
(subscribed to every topic) added with ``addOrUpdateMember``; the timed call is ``build()``: the
member specs, the uniform assignor, and the new-vs-old comparison that makes the records. Topics
``topic-<i>`` of ``memberCount * partitionsToMemberRatio / topicCount`` partitions; topic ids are
groupsim's deterministic ones on both sides (Kafka's benchmark draws random ones). Default:
1,000 and 10,000 members x ratio 10 x 100 topics, both subscription types; ``--quick`` 1,000
members; ``--full-grid`` Kafka's 90 combinations.

Java: ``tools/target-assignment-bench/build.sh`` compiles our ``TargetAssignmentBench.java``
against a built Kafka oracle (``../shared/kafka-oracle/BUILD.sh``: Kafka's group coordinator with
its generated records and metadata image); without one the Java column says why. Python:
``coordinator.target_assignment.build_target_assignment`` on the same inputs, with the group's
``MemberSpecs`` kept between builds as ``ConsumerGroupManager`` keeps them (the timed builds
repeat one build, so every member's spec is reused); "py cold" is the same build with a fresh
``MemberSpecs`` each time (every spec made again). Both: process CPU ms per call, the median of
five batches of calls over about a second (``--seconds``; :mod:`bench.timing`) after a warm-up
(Java: as long again, so that JIT compilation mostly falls before the timed calls; on a loaded
machine a longer run helps).
"ratio" is Python / Java (below 1: Python is faster). "exact" compares order-free CRC32 digests
of the new target assignment and the record counts. ``--split`` adds "assignor ms": the uniform
assignor alone as a kept-specs build runs it (``assign()`` on the group spec the build hands it,
every member of its result read), and its share of "python ms"; the rest is the builder's own
work (specs, member order, delta).
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

from bench.server_assignors import Case, Inputs, _ordered_set
from bench.timing import median_batch_ms, ratio_text
from coordinator.assignor import (
    ConsumerGroupPartitionAssignor,
    GroupAssignment,
    GroupSpec,
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriber,
    SubscribedTopicDescriberImpl,
    SubscriptionType,
)
from coordinator.assignor import TopicMetadata as SpecTopicMetadata
from coordinator.assignor.registry import get_assignor
from coordinator.consumer_group import ConsumerGroupMember, TopicMetadata
from coordinator.java import java_hashmap_order
from coordinator.kafka_uuid import Uuid
from coordinator.target_assignment import (
    MemberSpecs,
    TargetAssignmentResult,
    build_target_assignment,
)

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "tools" / "target-assignment-bench" / "build.sh"


def grid(quick: bool, full: bool) -> list[Case]:
    members: tuple[int, ...]
    ratios: tuple[int, ...]
    topics: tuple[int, ...]
    if full:
        members, ratios, topics = (100, 500, 1000, 5000, 10000), (5, 10, 50), (10, 100, 1000)
    elif quick:
        members, ratios, topics = (1000,), (10,), (100,)
    else:
        members, ratios, topics = (1000, 10000), (10,), (100,)
    return [
        Case(m, r, t, False, sub, "uniform", "INCREMENTAL")
        for m, r, t, sub in itertools.product(
            members, ratios, topics, ("HOMOGENEOUS", "HETEROGENEOUS")
        )
    ]


def label(case: Case) -> str:
    sub = "homo" if case.subscription == "HOMOGENEOUS" else "hetero"
    return f"tab-{sub}-m{case.members}-r{case.ratio}-t{case.topics}"


class Setup:
    """``TargetAssignmentBuilderBenchmark.setup()``: the inputs of the timed ``build()``."""

    def __init__(self, case: Case) -> None:
        inputs = Inputs(case)  # INCREMENTAL: memberCount - 1 members, Java's orders
        self.inputs = inputs
        names = [f"topic-{i}" for i in range(case.topics)]
        self.names = names
        ids = inputs.ids
        kind = SubscriptionType[case.subscription]
        self.kind = kind
        order = java_hashmap_order(list(inputs.member_topics))
        describer = SubscribedTopicDescriberImpl(
            {t: SpecTopicMetadata(t, f"topic-{i}", inputs.counts[t]) for i, t in enumerate(ids)}
        )
        spec = GroupSpecImpl(
            {
                m: MemberSubscriptionAndAssignmentImpl(
                    None, None, _ordered_set(ids, inputs.member_topics[m])
                )
                for m in order
            },
            subscription_type=kind,
        )
        initial = get_assignor("uniform").assign(spec, describer)
        self.inverted: dict[Uuid, dict[int, str]] = {}
        for member_id, assignment in initial.members.items():
            for topic_id, partitions in assignment.partitions.items():
                target = self.inverted.setdefault(topic_id, {})
                for p in partitions:
                    target[p] = member_id
        # the assignor's own maps, as Kafka's benchmark hands them over (Java-ordered sets)
        self.target: dict[str, Any] = {m: a.partitions for m, a in initial.members.items()}
        self.members = {
            m: ConsumerGroupMember(
                m, subscribed_topic_names=frozenset(names[i] for i in inputs.member_topics[m])
            )
            for m in order
        }
        self.metadata = {
            names[i]: TopicMetadata(t, names[i], inputs.counts[t]) for i, t in enumerate(ids)
        }
        self.topic_ids = {names[i]: t for i, t in enumerate(ids)}
        self.new_member = ConsumerGroupMember("newMember", subscribed_topic_names=frozenset(names))
        # the group's member specs, kept between builds as ConsumerGroupManager keeps them
        self.specs = MemberSpecs()

    def build(
        self, cold: bool = False, assignor: ConsumerGroupPartitionAssignor | None = None
    ) -> TargetAssignmentResult:
        """One ``build()``; ``cold``: without the specs of earlier builds."""
        return build_target_assignment(
            assignor=get_assignor("uniform") if assignor is None else assignor,
            members=self.members,
            static_members={},
            subscription_metadata=self.metadata,
            subscription_type=self.kind,
            target_assignment=self.target,
            inverted_target_assignment=self.inverted,
            topic_ids=self.topic_ids,
            updated_members={"newMember": self.new_member},
            specs=MemberSpecs() if cold else self.specs,
        )

    def java_text(self, case: Case, min_iters: int, seconds: float) -> str:
        lines = [f"case {label(case)} {case.subscription} {min_iters} {seconds}"]
        lines.append(f"topics {len(self.names)}")
        lines += [f"{self.topic_ids[n]} {n} {self.metadata[n].num_partitions}" for n in self.names]
        lines.append(f"members {len(self.members)}")
        for member_id, topics in self.inputs.member_topics.items():
            lines.append(f"{member_id} {len(topics)} {' '.join(map(str, topics))}")
        lines.append("end")
        return "\n".join(lines) + "\n"


def digest(result: TargetAssignmentResult) -> str:
    """Order-free CRC32 of the new target assignment, as TargetAssignmentBench.digest writes it."""
    crc = 0
    target = result.target_assignment
    for member_id in sorted(target):
        parts = [f"m:{member_id}\n"]
        topics = sorted((str(t), sorted(ps)) for t, ps in target[member_id].items() if ps)
        for topic, partitions in topics:
            parts.append(f"t:{topic}:{','.join(map(str, partitions))}\n")
        crc = zlib.crc32("".join(parts).encode(), crc)
    return f"{crc:x}"


def time_python(setup: Setup, seconds: float, cold: bool = False) -> tuple[float, str, int]:
    """(CPU ms per ``build``, digest, record count): the median of batches (:mod:`bench.timing`)
    after one warm-up call."""
    results = [setup.build(cold)]

    def build() -> None:
        results[0] = setup.build(cold)

    per_call = median_batch_ms(build, seconds)
    result = results[0]
    return per_call, digest(result), len(result.changed_members) + 1


class _Capture:
    """The uniform assignor, keeping what the build hands it."""

    name = "uniform"

    def __init__(self) -> None:
        self.calls: list[tuple[GroupSpec, SubscribedTopicDescriber]] = []

    def assign(self, group_spec: GroupSpec, describer: SubscribedTopicDescriber) -> GroupAssignment:
        self.calls.append((group_spec, describer))
        return get_assignor("uniform").assign(group_spec, describer)


def time_assignor(setup: Setup, seconds: float) -> float:
    """CPU ms per call of the assignor alone, as a (kept-specs) build runs it: ``assign()`` on
    the very group spec and describer the build hands it, and every member of the result read
    (as the build's delta reads them), the garbage collector paused as during a build."""
    capture = _Capture()
    setup.build(assignor=capture)
    spec, describer = capture.calls[-1]
    assignor = get_assignor("uniform")

    def assign_and_read() -> None:
        gc.disable()
        try:
            list(assignor.assign(spec, describer).members.values())
        finally:
            gc.enable()

    return median_batch_ms(assign_and_read, seconds)


def java_classpath() -> tuple[str | None, str]:
    if not BUILD.exists():
        return None, f"missing {BUILD}"
    try:
        proc = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"cannot build the Java driver: {exc}"
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        return None, f"Java column skipped: {reason}"
    return proc.stdout.strip().splitlines()[-1], "Kafka's TargetAssignmentBuilder (oracle build)"


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    full = "--full-grid" in argv
    with_java = "--no-java" not in argv
    split = "--split" in argv
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
    seconds = 0.5 if quick else 1.0
    given = next((a.split("=", 1)[1] for a in argv if a.startswith("--seconds=")), None)
    if given is not None:
        try:
            seconds = float(given)
        except ValueError:
            seconds = -1.0
        if not seconds > 0:
            print(f"bench target_assignment: --seconds={given}: expected a positive number")
            return 2
    cases = [c for c in grid(quick, full) if only in label(c)]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    classpath, message = (
        java_classpath() if with_java else (None, "Java column not run (--no-java)")
    )
    print(f"{message}; load average {load} on {os.cpu_count()} CPUs; CPU ms per build()")
    header = (
        f"{'case':<32}{'partitions':>11}{'python ms':>11}{'java ms':>10}{'ratio':>8}"
        f"{'py cold ms':>12}{'ratio':>8}"
        f"{'records':>9}{'exact':>7}" + (f"{'assignor ms':>13}{'share':>7}" if split else "")
    )
    print(header)
    print("-" * len(header), flush=True)
    java = (
        subprocess.Popen(
            ["java", "-Xss8m", "-cp", classpath, "TargetAssignmentBench"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if classpath
        else None
    )
    status = 0
    try:
        for case in cases:
            setup = Setup(case)
            java_row = None
            if java is not None:  # Java first, then Python: never both at once
                assert java.stdin is not None and java.stdout is not None
                java.stdin.write(setup.java_text(case, 3, seconds))
                java.stdin.flush()
                line = java.stdout.readline()
                java_row = json.loads(line) if line else None
            py_ms, py_digest, py_records = time_python(setup, seconds)
            cold_ms, cold_digest, cold_records = time_python(setup, seconds, cold=True)
            if (cold_digest, cold_records) != (py_digest, py_records):
                status = 1
                print(f"{label(case)}: a cold build differs from a build with kept specs")
            assignor_text = ""
            if split:
                assignor_ms = time_assignor(setup, seconds)
                assignor_text = f"{assignor_ms:>13.2f}{assignor_ms / py_ms:>7.0%}"
            partitions = case.members * case.ratio // case.topics * case.topics
            if java_row is None:
                java_text, ratio, cold_ratio, exact = "-", "-", "-", "-"
            else:
                java_text = f"{java_row['cpu_ms']:.2f}"
                ratio = ratio_text(py_ms, java_row["cpu_ms"])
                cold_ratio = ratio_text(cold_ms, java_row["cpu_ms"])
                same = java_row["digest"] == py_digest and java_row["records"] == py_records
                exact = "yes" if same else "NO"
                status |= not same
            print(
                f"{label(case):<32}{partitions:>11,}{py_ms:>11.2f}{java_text:>10}{ratio:>8}"
                f"{cold_ms:>12.2f}{cold_ratio:>8}"
                f"{py_records:>9}{exact:>7}{assignor_text}",
                flush=True,
            )
    finally:
        if java is not None and java.stdin is not None:
            java.stdin.close()
            java.wait(timeout=60)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
