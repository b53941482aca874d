"""How librdkafka's leader ran the cooperative-sticky assignor before 1.7.0 (opt-in).

librdkafka's sticky assignor is a port of Kafka's AbstractStickyAssignor. Up to 1.6.x its
``prepopulateCurrentAssignments`` (src/rdkafka_sticky_assignor.c) read each member's current
partitions from ``rkgm_assignment``, which before the assignor runs is the empty list the leader
made for its output, instead of ``rkgm_owned``, the partitions the member reported owning: every
rebalance was computed as if nobody owned anything. librdkafka's cooperative step
(``rd_kafka_cooperative_protocol_adjust_assignment``, src/rdkafka_cgrp.c) then withheld what
the fresh assignment moved from one owner to another, to be revoked first and handed over in
the follow-up rebalance. Fixed in 1.7.0 by commit 168a88ca5 ("Assignor: de-conflate
owned/assigned partitions", librdkafka#3306); this is what confluent-kafka-go#622 reported.

``ConsumerConfig.sticky_assignor_ignores_owned`` plays it with Kafka's Java assignor (the port's
original) on the emptied input, so the fresh assignment is Java's; librdkafka 1.6's port gives the
same round-robin over the member ids for one topic and equal subscriptions (the report's
assignments show it), but the two may differ on other inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from assignors.api import Subscription, TopicPartition


def without_owned(subscriptions: Mapping[str, Subscription]) -> dict[str, Subscription]:
    """The assignor's input as librdkafka 1.6 saw it: no member owns anything."""
    return {m: attrs.evolve(s, owned_partitions=()) for m, s in subscriptions.items()}


def cooperative_adjust(
    subscriptions: Mapping[str, Subscription], result: Mapping[str, Sequence[TopicPartition]]
) -> dict[str, list[TopicPartition]]:
    """rd_kafka_cooperative_protocol_adjust_assignment: a partition assigned to its current
    owner, or owned by nobody, is assigned; one owned by another member is withheld (that owner
    revokes it, and the next rebalance hands it over); one owned but assigned to nobody goes
    back to its owner."""
    owner: dict[TopicPartition, str] = {}
    for member_id, sub in subscriptions.items():
        for tp in sub.owned_partitions:
            owner.setdefault(tp, member_id)
    out: dict[str, list[TopicPartition]] = {m: [] for m in result}
    assigned: set[TopicPartition] = set()
    for member_id, partitions in result.items():
        for tp in partitions:
            assigned.add(tp)
            if owner.get(tp, member_id) == member_id:
                out[member_id].append(tp)
    for tp, member_id in owner.items():
        if tp not in assigned and member_id in out:
            out[member_id].append(tp)
    return {m: sorted(ps) for m, ps in out.items()}


def withheld(
    raw: Mapping[str, Sequence[TopicPartition]], adjusted: Mapping[str, Sequence[TopicPartition]]
) -> list[TopicPartition]:
    """The partitions the assignor gave a new owner that the cooperative step held back."""
    return sorted(tp for m, ps in raw.items() for tp in ps if tp not in set(adjusted.get(m, ())))
