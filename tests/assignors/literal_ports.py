"""Deliberately naive, line-by-line ports of Kafka's range and round-robin loops.

The production assignors take shortcuts (contiguous slices, strided slices, shared subscriber
lists); these step through partitions one at a time exactly as the Java code does, so a
differential test can check that the shortcuts change nothing, list order included.
"""

from __future__ import annotations

from collections.abc import Mapping

from assignors.api import Subscription, TopicPartition


def member_key(member: str, sub: Subscription):
    """MemberInfo.compareTo for BMP strings: static by instance id first, then member id."""
    if sub.group_instance_id is None:
        return (1, member, "")
    return (0, sub.group_instance_id, member)


def literal_range(
    counts: Mapping[str, int], subs: Mapping[str, Subscription], topic_order: list[str]
) -> dict[str, list[TopicPartition]]:
    """RangeAssignor without racks: per topic, a quota counter and an 'extra slots left' counter."""
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subs}
    for topic in topic_order:
        count = counts.get(topic, 0)
        if count <= 0:
            continue
        members = sorted(
            (m for m in subs if topic in subs[m].topics), key=lambda m: member_key(m, subs[m])
        )
        if not members:
            continue
        per, extra_left = count // len(members), count % len(members)
        unassigned = [TopicPartition(topic, p) for p in range(count)]
        for m in members:
            if not unassigned:
                break
            limit = max(0, per + (1 if extra_left > 0 else 0))
            taken, unassigned = unassigned[:limit], unassigned[limit:]
            if not taken:
                continue
            assignment[m].extend(taken)
            if len(taken) > per:
                extra_left -= 1
    return assignment


def literal_roundrobin(
    counts: Mapping[str, int], subs: Mapping[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    """RoundRobinAssignor: a circular iterator that skips non-subscribers, one partition at a time."""
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subs}
    members = sorted(subs, key=lambda m: member_key(m, subs[m]))
    topics = sorted({t for s in subs.values() for t in s.topics})
    cursor = 0
    for topic in topics:
        for p in range(counts.get(topic, 0)):
            while topic not in subs[members[cursor]].topics:
                cursor = (cursor + 1) % len(members)
            assignment[members[cursor]].append(TopicPartition(topic, p))
            cursor = (cursor + 1) % len(members)
    return assignment


def literal_rack_range(
    cluster, subs: Mapping[str, Subscription], prefer_rack_aware_logic: bool = False
):
    """RangeAssignor with KIP-881 racks, step by step as the Java code runs (returns sorted lists
    when the rack path is taken, plain-range lists in name order otherwise)."""
    counts = {t: n for t, n in cluster.partitions_per_topic.items() if n > 0}
    topics = sorted({t for s in subs.values() for t in s.topics if t in counts})
    racks = {m: s.rack_id for m, s in subs.items() if s.rack_id}
    states = []
    for t in topics:
        members = sorted(
            {m for m in subs if t in subs[m].topics}, key=lambda m: member_key(m, subs[m])
        )
        st = {
            "topic": t,
            "members": members,
            "per": counts[t] // len(members),
            "extra": counts[t] % len(members),
            "n": dict.fromkeys(members, 0),
            "unassigned": list(range(counts[t])),
        }
        consumer_racks = {racks[m] for m in members if m in racks}
        st["pracks"] = [cluster.racks_of(t, p) for p in range(counts[t])] if consumer_racks else []
        all_p = set().union(*st["pracks"]) if st["pracks"] else set()
        if not consumer_racks or consumer_racks.isdisjoint(all_p):
            st["needs"] = False
        else:
            st["needs"] = prefer_rack_aware_logic or not all(r == all_p for r in st["pracks"])
        states.append(st)

    def match(st, m, p):
        return m not in racks or (bool(st["pracks"]) and racks[m] in st["pracks"][p])

    def max_assignable(st, m):
        return max(0, st["per"] + (1 if st["extra"] > 0 else 0) - st["n"][m])

    def give(st, m, ps, out):
        out[m].extend(TopicPartition(st["topic"], p) for p in ps)
        st["n"][m] += len(ps)
        if st["n"][m] > st["per"]:
            st["extra"] -= 1
        st["unassigned"] = [p for p in st["unassigned"] if p not in ps]

    def ranges(st, rack_matching, out):
        for m in st["members"]:
            if not st["unassigned"]:
                break
            ps = [p for p in st["unassigned"] if not rack_matching or match(st, m, p)][
                : max_assignable(st, m)
            ]
            if ps:
                give(st, m, ps, out)

    out: dict[str, list[TopicPartition]] = {m: [] for m in subs}
    use_racks = any(st["needs"] for st in states)
    if use_racks:
        groups: dict = {}
        for st in states:
            key = (tuple((m, racks.get(m)) for m in st["members"]), len(st["pracks"]))
            groups.setdefault(key, []).append(st)
        for (_, n), group in groups.items():
            if len(group) > 1:
                remaining = list(group[0]["members"])
                for p in range(n):
                    chosen = next(
                        (
                            m
                            for m in remaining
                            if all(match(s, m, p) and max_assignable(s, m) > 0 for s in group)
                        ),
                        None,
                    )
                    if chosen is None:
                        continue
                    for s in group:
                        give(s, chosen, [p], out)
                    if not any(max_assignable(s, chosen) > 0 for s in group):
                        remaining.remove(chosen)
                        if not remaining:
                            break
            elif group[0]["needs"]:
                ranges(group[0], True, out)
    for st in states:
        ranges(st, False, out)
    if use_racks:
        for ps in out.values():
            ps.sort()
    return out
