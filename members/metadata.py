"""The consumer's metadata bookkeeping: Kafka's ``Metadata`` and ``ConsumerMetadata``, sans-I/O.

``ConsumerMetadata`` holds what the consumer knows of the cluster's topics (partition counts and
replica racks) and the state that decides when it asks again: whether an update is requested and
why, the request in flight, when the last answer came, and the two refresh-backoff counters.
It sends nothing and sets no timer: the ``Consumer`` builds the MetadataRequests, sets the
``metadata`` timer and logs the events.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from assignors.api import ClusterMetadata
from coordinator.errors import Errors
from coordinator.protocol import MetadataResponse
from members.backoff import ExponentialBackoff

#: Topic errors that are Kafka InvalidMetadataExceptions: Metadata.handleMetadataResponse asks for
#: another update when a topic the consumer needs is answered with one of them.
INVALID_METADATA_ERRORS = frozenset(
    {Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR}
)


class ConsumerMetadata:
    """Kafka's Metadata (+ ConsumerMetadata) for one consumer incarnation."""

    __slots__ = (
        "attempts",
        "equivalent_response_count",
        "in_flight",
        "last_successful_refresh_ms",
        "metadata_expire_ms",
        "need_full_update",
        "need_partial_update",
        "partition_counts",
        "racks",
        "refresh_backoff",
        "refresh_backoff_ms",
        "update_version",
    )

    def __init__(
        self, refresh_backoff: ExponentialBackoff, refresh_backoff_ms: int, metadata_expire_ms: int
    ) -> None:
        #: retry.backoff.ms .. retry.backoff.max.ms, jittered (Metadata.refreshBackoff); the
        #: consumer's own ExponentialBackoff, so the jitter comes from its seeded random source.
        self.refresh_backoff = refresh_backoff
        #: retry.backoff.ms, the nominal refresh backoff.
        self.refresh_backoff_ms = refresh_backoff_ms
        #: metadata.max.age.ms (Metadata.metadataExpireMs).
        self.metadata_expire_ms = metadata_expire_ms
        #: Partition count of every known topic.
        self.partition_counts: dict[str, int] = {}
        #: Per topic, each partition's replica racks (sorted; empty without broker racks).
        self.racks: dict[str, list[list[str]]] = {}
        #: Metadata.updateVersion: bumped on every answer.
        self.update_version = 0
        #: The correlation id of the MetadataRequest in flight (DefaultMetadataUpdater.inProgress).
        self.in_flight: int | None = None
        #: Topics were needed that the request in flight does not ask for (an older
        #: requestVersion, Metadata.needPartialUpdate): ask again as soon as it is answered.
        self.need_partial_update = False
        #: Metadata.equivalentResponseCount, as modelled: consecutive answers with a needed topic
        #: unavailable (the refresh backoff after such answers grows with it).
        self.equivalent_response_count = 0
        #: Metadata.attempts: failed requests since the last answer (the refresh backoff).
        self.attempts = 0
        #: When the last answer arrived (Metadata.lastSuccessfulRefreshMs); None before the first.
        self.last_successful_refresh_ms: int | None = None
        #: An update is requested (Metadata.requestUpdate: needFullUpdate) and waits for the
        #: refresh backoff (the consumer's "metadata" timer): after a failed request, an answer
        #: with a needed topic unavailable, or a disconnect soon after an answer. Cleared when the
        #: request goes out (``in_flight`` stands for it while it is out).
        self.need_full_update = False

    # ------------------------------------------------------------------ the answer

    def update(
        self,
        now: int,
        response: MetadataResponse,
        full: bool,
        retain_topic: Callable[[str], bool],
    ) -> tuple[bool, list[str]]:
        """Metadata.update + handleMetadataResponse: an answer arrived at ``now``. A ``full``
        answer (to a request for all topics) replaces what is known; one for a list of topics
        updates those. ``retain_topic`` is ConsumerMetadata.retainTopic: errors for topics the
        consumer does not need are ignored. Returns whether a needed topic was unavailable (an
        InvalidMetadataException: requestUpdate(false)) and the needed topics answered
        INVALID_TOPIC_EXCEPTION (Metadata.invalidTopics), in answer order."""
        self.in_flight = None
        self.last_successful_refresh_ms = now
        self.attempts = 0
        counts, racks = self.partition_counts, self.racks
        if full:
            counts = self.partition_counts = {}
            racks = self.racks = {}
        broker_racks = {b.node_id: b.rack for b in response.brokers}
        unavailable = False
        invalid: list[str] = []
        for topic in response.topics:
            if topic.error_code != Errors.NONE or not topic.partitions:
                counts.pop(topic.name, None)
                racks.pop(topic.name, None)
                if topic.error_code in INVALID_METADATA_ERRORS and retain_topic(topic.name):
                    unavailable = True
                elif topic.error_code == Errors.INVALID_TOPIC_EXCEPTION and retain_topic(
                    topic.name
                ):
                    invalid.append(topic.name)
                continue
            counts[topic.name], racks[topic.name] = _topic_racks(topic, broker_racks)
        self.update_version += 1
        return unavailable, invalid

    # ------------------------------------------------------------------ reading it

    def cluster(self, topics: Iterable[str]) -> ClusterMetadata:
        """Metadata.fetch(), as the assignors see it: the known partition counts of ``topics``,
        with replica racks when any broker has a rack."""
        known = self.partition_counts
        counts = {t: known[t] for t in topics if t in known}
        racks = {t: self.racks[t] for t in counts if t in self.racks}
        has_racks = any(any(r) for rs in racks.values() for r in rs)
        return ClusterMetadata(counts, racks if has_racks else None)

    def snapshot(self, topics: Collection[str], with_racks: bool) -> tuple:
        """The known ``topics`` as ConsumerCoordinator.MetadataSnapshot compares them: sorted
        (topic, partition count, replica racks if ``with_racks``) triples."""
        known = self.partition_counts
        return tuple(
            (
                t,
                known[t],
                tuple(map(tuple, self.racks.get(t, ()))) if with_racks else (),
            )
            for t in sorted(topics)
            if t in known
        )


_RACKS_CACHE: dict[int, tuple[object, tuple, int, list[list[str]]]] = {}


def _topic_racks(topic: Any, broker_racks: dict[int, str | None]) -> tuple[int, list[list[str]]]:
    """Partition count and per-partition replica racks of one metadata topic (read-only).

    Memoised by response object: the cluster hands every consumer the same immutable response,
    so a 1,000-member group over 100,000 partitions parses it once, not 1,000 times.
    """
    rack_key = tuple(sorted(broker_racks.items(), key=lambda kv: kv[0]))
    hit = _RACKS_CACHE.get(id(topic))
    if hit is not None and hit[0] is topic and hit[1] == rack_key:
        return hit[2], hit[3]
    parts = sorted(topic.partitions, key=lambda p: p.partition_index)
    racks = [
        sorted({broker_racks.get(r) for r in p.replica_nodes} - {None})  # type: ignore[type-var]
        for p in parts
    ]
    if len(_RACKS_CACHE) >= 256:
        _RACKS_CACHE.clear()
    _RACKS_CACHE[id(topic)] = (topic, rack_key, len(parts), racks)
    return len(parts), racks
