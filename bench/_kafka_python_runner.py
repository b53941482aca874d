"""Times kafka-python's assignor on one benchmark workload, in its own process.

Usage: ``python -m bench._kafka_python_runner <workload> <assignor> <round> <quick 0|1> <budget s>``

It builds the same inputs as ``bench/assignors.py`` (round-1 results for later rounds come from
*our* assignor, untimed, so both libraries see identical ownership), prints ``READY`` once the
inputs exist, then calls kafka-python's assignor up to three times while the budget lasts and
prints one JSON line: ``{"seconds": min, "calls": n, "maxrss_mb": peak RSS}``. The parent kills
it at the cap, which is how "did not finish" is detected.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from types import SimpleNamespace

from assignors.registry import get_assignor
from bench.assignor_workloads import by_key, fresh_subscriptions, next_round_subscriptions

KP_CLASSES = {
    "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
    "cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky",
        "CooperativeStickyAssignor",
    ),
    "range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
}


def kafka_python_members(assignor_name: str, subs: dict) -> list[SimpleNamespace]:
    """Our Subscriptions as kafka-python's JoinGroup members (ownership in its own formats)."""
    members = []
    if assignor_name == "sticky":
        from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

        from assignors.sticky_user_data import decode_sticky_user_data
    for m, sub in subs.items():
        meta = SimpleNamespace(
            topics=list(sub.topics), user_data=b"", owned_partitions=[], generation_id=-1
        )
        if assignor_name == "sticky" and sub.user_data:
            parts, gen = decode_sticky_user_data(sub.user_data)
            by_topic: dict[str, list[int]] = {}
            for p in parts:
                by_topic.setdefault(p.topic, []).append(p.partition)
            meta.user_data = StickyAssignorUserData(
                list(by_topic.items()), gen if gen is not None else -1
            )
        elif assignor_name == "cooperative-sticky" and sub.owned_partitions:
            by_topic = {}
            for p in sub.owned_partitions:
                by_topic.setdefault(p.topic, []).append(p.partition)
            meta.owned_partitions = [
                SimpleNamespace(topic=t, partitions=ps) for t, ps in by_topic.items()
            ]
            meta.generation_id = sub.generation_id
        members.append(SimpleNamespace(member_id=m, group_instance_id=None, metadata=meta))
    return members


def main(argv: list[str]) -> int:
    key, assignor_name, round_name, quick, budget = (
        argv[0],
        argv[1],
        argv[2],
        argv[3] == "1",
        float(argv[4]),
    )
    counts, members, leaving = by_key(key).build(quick)
    subs = fresh_subscriptions(members)
    if round_name != "fresh":
        previous = get_assignor(assignor_name).assign(counts, subs)
        subs = next_round_subscriptions(
            assignor_name, members, previous, leaving if round_name == "leave" else []
        )
    cluster = SimpleNamespace(
        partitions_for_topic=lambda t: set(range(counts[t])) if t in counts else None,
        topics=lambda: set(counts),
    )
    kp_members = kafka_python_members(assignor_name, subs)
    module_name, class_name = KP_CLASSES[assignor_name]
    cls = getattr(__import__(module_name, fromlist=[class_name]), class_name)
    print("READY", flush=True)
    times: list[float] = []
    spent = 0.0
    # another call only if it surely fits in the parent's cap (else a result would be lost)
    while len(times) < 3 and (not times or spent + 1.5 * max(times) < 0.8 * budget):
        assignor = cls()
        start = time.perf_counter()
        assignor.assign(cluster, kp_members)
        times.append(time.perf_counter() - start)
        spent += times[-1]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": min(times), "calls": len(times), "maxrss_mb": rss}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
