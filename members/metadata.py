"""The consumer's metadata bookkeeping: Kafka's ``Metadata`` and ``ConsumerMetadata``, sans-I/O.

``ConsumerMetadata`` holds what the consumer knows of the cluster's topics (partition counts and
replica racks) and the state that decides when it asks again: whether an update is requested and
why, the request in flight, when the last answer came, and the two refresh-backoff counters.
It sends nothing and sets no timer: the ``Consumer`` builds the MetadataRequests, sets the
``metadata`` timer and logs the events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import Any

from assignors.api import ClusterMetadata
from coordinator.errors import Errors
from coordinator.protocol import MetadataResponse
from members.backoff import ExponentialBackoff

#: Topics a pattern subscription never matches (exclude.internal.topics=true, Kafka's default).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

#: Topic errors that are Kafka InvalidMetadataExceptions: Metadata.handleMetadataResponse asks for
#: another update when a topic the consumer needs is answered with one of them.
INVALID_METADATA_ERRORS = frozenset(
    {Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR}
)


class ConsumerMetadata:
    """Kafka's Metadata (+ ConsumerMetadata) for one consumer incarnation.

    Inputs: ``request_sent`` (a MetadataRequest went out), ``update`` (its answer arrived),
    ``failed_update`` (it failed: a disconnect or a timeout), ``request_update`` and
    ``request_update_for_new_topics`` (an update is wanted). Answers: ``update_requested``,
    ``expired``, ``time_to_allow_update`` and the times ``request_update``, ``failed_update`` and
    ``next_update_ms`` return, at which the consumer sets its "metadata" timer.

    Modelled more simply than Kafka's: the refresh backoff after an answer is the nominal
    retry.backoff.ms (Kafka's timeToAllowUpdate jitters it); equivalentResponseCount
    counts only answers with a needed topic unavailable; new pattern matches in an answer ask
    for no further update (Kafka's updatePatternSubscription calls requestUpdateForNewTopics
    for them, one more refresh at once).
    """

    __slots__ = (
        "allow_update_at",
        "attempts",
        "equivalent_response_count",
        "in_flight",
        "in_flight_version",
        "last_refresh_ms",
        "last_successful_refresh_ms",
        "metadata_expire_ms",
        "need_full_update",
        "need_partial_update",
        "partition_counts",
        "racks",
        "refresh_backoff",
        "refresh_backoff_ms",
        "request_version",
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
        #: Metadata.requestVersion: bumped by every requestUpdateForNewTopics.
        self.request_version = 0
        #: The correlation id of the MetadataRequest in flight (DefaultMetadataUpdater.inProgress).
        self.in_flight: int | None = None
        #: The requestVersion it was sent with (InProgressData.requestVersion).
        self.in_flight_version = 0
        #: Metadata.needPartialUpdate: requestUpdateForNewTopics asked for the topics of a new
        #: subscription; cleared by an answer to a request sent after that (an answer to an older
        #: requestVersion leaves it set, and another request follows).
        self.need_partial_update = False
        #: Metadata.equivalentResponseCount, as modelled: consecutive answers with a needed topic
        #: unavailable (the refresh backoff after such answers grows with it).
        self.equivalent_response_count = 0
        #: Metadata.attempts: failed requests since the last answer (the refresh backoff).
        self.attempts = 0
        #: When the last answer arrived (Metadata.lastSuccessfulRefreshMs); None before the first.
        self.last_successful_refresh_ms: int | None = None
        #: When the last request was answered or failed (Metadata.lastRefreshMs, which
        #: failedUpdate moves too); None before the first.
        self.last_refresh_ms: int | None = None
        #: When Metadata.timeToAllowUpdate lets the next request go: the refresh backoff after
        #: last_refresh_ms (None: at once).
        self.allow_update_at: int | None = None
        #: An update is requested (Metadata.requestUpdate: needFullUpdate) and waits for the
        #: refresh backoff (the consumer's "metadata" timer): after a failed request, an answer
        #: with a needed topic unavailable, or a disconnect soon after an answer. Cleared when the
        #: request goes out (``in_flight`` stands for it while it is out).
        self.need_full_update = False

    # ------------------------------------------------------------------ when to ask

    def update_requested(self) -> bool:
        """Metadata.updateRequested(): an update is asked for and not answered yet (in flight,
        or waiting for the refresh backoff)."""
        return self.in_flight is not None or self.need_full_update or self.need_partial_update

    def expired(self, now: int) -> bool:
        """Metadata.timeToNextUpdate's expiry part is 0: never answered, or the last answer is
        metadata.max.age.ms old."""
        last = self.last_successful_refresh_ms
        return last is None or now - last >= self.metadata_expire_ms

    def time_to_allow_update(self, now: int) -> int:
        """Metadata.timeToAllowUpdate: how long until the refresh backoff after lastRefreshMs (the
        last answer or failed request) has passed; 0 before the first. After a failed request
        it is the retry's backoff (attempts), after an answer the nominal retry.backoff.ms."""
        allow = self.allow_update_at
        return 0 if allow is None else max(0, allow - now)

    def request_update(self, now: int) -> int | None:
        """Metadata.requestUpdate(false), as NetworkClient's handleServerDisconnect calls it after
        a lost connection. Returns when the update may go out (``now``: at once; later: the
        update waits, ``need_full_update``, for the refresh backoff, time_to_allow_update), or
        None when a request in flight or a retry already waiting serves it."""
        if self.update_requested():
            return None
        wait = self.time_to_allow_update(now)
        if wait:
            self.need_full_update = True
        return now + wait

    def request_update_for_new_topics(self) -> None:
        """Metadata.requestUpdateForNewTopics, on every subscription change (KafkaConsumer.subscribe
        when the subscription changed, and always for a pattern; a pattern's new matches; the
        leader's group subscription beyond its own): a new requestVersion, so a request in
        flight is an older one and another follows its answer; the update may go out at once
        (lastRefreshMs = 0: no refresh backoff) and equivalentResponseCount starts over."""
        self.request_version += 1
        self.need_partial_update = True
        self.equivalent_response_count = 0
        self.allow_update_at = None

    def request_sent(self, correlation_id: int) -> None:
        """The consumer sent a MetadataRequest (NetworkClient's InProgressData: the current
        requestVersion); it serves every full update requested so far."""
        self.in_flight = correlation_id
        self.in_flight_version = self.request_version
        self.need_full_update = False

    def failed_update(self, now: int) -> int:
        """Metadata.failedUpdate (attempts++, equivalentResponseCount = 0) and, via
        handleServerDisconnect, requestUpdate: the request in flight failed at ``now``. Returns
        when the retry goes out: Metadata.timeToAllowUpdate's refresh backoff,
        retry.backoff.ms * 2^(attempts - 1) +-20 %, up to retry.backoff.max.ms (KIP-580)."""
        self.in_flight = None
        self.last_refresh_ms = now
        self.attempts += 1
        self.equivalent_response_count = 0
        self.need_full_update = True
        self.allow_update_at = now + self.refresh_backoff.backoff(self.attempts - 1)
        return self.allow_update_at

    def next_update_ms(self, now: int, unavailable: bool) -> int:
        """When the next refresh goes out after an answer at ``now`` (the consumer's "metadata"
        timer): metadata.max.age.ms later; or, if a needed topic was ``unavailable``
        (handleMetadataResponse's requestUpdate(false)), once Metadata.timeToAllowUpdate allows:
        the refresh backoff, growing while the answers stay the same (equivalentResponseCount).
        Never later than metadata.max.age.ms, though: once the metadata expires,
        timeToAllowUpdate resets equivalentResponseCount, so the refresh goes out and the
        backoff starts over."""
        self.need_full_update = unavailable
        max_age = self.metadata_expire_ms
        if not unavailable:
            self.equivalent_response_count = 0
            return now + max_age
        backoff = self.refresh_backoff.backoff(self.equivalent_response_count)
        if backoff < max_age:
            self.equivalent_response_count += 1
            return now + backoff
        self.equivalent_response_count = 0
        return now + max_age

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
        self.need_partial_update = self.in_flight_version < self.request_version
        self.last_successful_refresh_ms = self.last_refresh_ms = now
        self.allow_update_at = now + self.refresh_backoff_ms
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


def metadata_topics(
    topics: Iterable[str], group_subscription: Iterable[str] | None, pattern: re.Pattern[str] | None
) -> set[str] | None:
    """ConsumerMetadata.newMetadataRequestBuilder: the topics the consumer asks for, its own
    ``topics`` and the group subscription (a leader's, SubscriptionState.metadataTopics); None
    (all topics) for a ``pattern`` subscription."""
    if pattern is not None:
        return None
    wanted = set(topics)
    if group_subscription:
        wanted.update(group_subscription)
    return wanted


def retain_topic(
    topic: str,
    subscription: Collection[str],
    group_subscription: Collection[str] | None,
    pattern: re.Pattern[str] | None,
) -> bool:
    """ConsumerMetadata.retainTopic: the topic is subscribed, in the group subscription, or
    (pattern subscription) matches the pattern; errors for other topics are ignored."""
    if topic in subscription or topic in (group_subscription or ()):
        return True
    return (
        pattern is not None
        and topic not in INTERNAL_TOPICS
        and pattern.fullmatch(topic) is not None
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
