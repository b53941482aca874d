"""The consumer's metadata bookkeeping: Kafka's ``Metadata`` and ``ConsumerMetadata``, sans-I/O.

``ConsumerMetadata`` holds what the consumer knows of the cluster's topics (partition counts,
replica racks, leaders) and the state that decides when it asks again: whether an update is
requested and why, the request versions, the request in flight, when the last answer and the
last failure came, and the two refresh-backoff counters.
It sends nothing and sets no timer: the ``Consumer`` builds the MetadataRequests, sets the
``metadata`` timer and logs the events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import Any

from assignors.api import ClusterMetadata
from coordinator.errors import Errors
from coordinator.kafka_uuid import ZERO_UUID, Uuid
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

    Inputs: ``request_update`` and ``request_update_for_new_topics`` (an update is wanted),
    ``request_sent`` (a MetadataRequest went out), ``update`` (its answer arrived),
    ``failed_update`` (it failed: a disconnect or a timeout). Answers: ``update_requested``,
    ``time_to_allow_update``, ``next_update_at`` (when DefaultMetadataUpdater.maybeUpdate sends
    the next request: the consumer sends it then, or sets its "metadata" timer for it) and
    ``awaits_update`` (ensureFreshMetadata's test).

    The refresh backoff is Kafka's (Metadata.timeToAllowUpdate): the larger of the attempts
    backoff (refreshBackoff.backoff(attempts - 1), or of 0 after an answer) and the backoff of
    equivalentResponseCount, both counted from lastRefreshMs (the last answer or failed
    request), the latter dropped once the metadata has expired. Each is an ExponentialBackoff
    with jitter from the consumer's seeded random source. Kafka draws a new jitter on every
    call; here a backoff period (from one lastRefreshMs on) draws each of its values once, and
    only when a decision depends on it (a value whose whole range is already past, or beyond
    the expiry that ends it, is never drawn), so the draws, and the run, are reproducible.

    Modelled more simply than Kafka's: the leader epochs behind equivalentResponseCount are
    read as "a partition the consumer did not know, or a new leader for one"
    (updateLatestMetadata resets the count for a first epoch, a new topic id or a higher
    epoch); new pattern matches in an answer ask for no further update (Kafka's
    updatePatternSubscription calls requestUpdateForNewTopics for them, one more refresh at
    once); an answer to a list of topics updates those and keeps the others known (Kafka's
    consumer replaces its snapshot with every answer); handleServerDisconnect's "a disconnect
    while an update is due counts as a failed update" is left out, as a running consumer has
    always sent a due update already; partition-level errors are not modelled.
    """

    __slots__ = (
        "_drawn",
        "attempts",
        "equivalent_response_count",
        "in_flight",
        "in_flight_version",
        "last_refresh_ms",
        "last_successful_refresh_ms",
        "leaders",
        "metadata_expire_ms",
        "need_full_update",
        "need_partial_update",
        "partition_counts",
        "racks",
        "refresh_backoff",
        "request_version",
        "topic_names",
        "update_version",
    )

    def __init__(self, refresh_backoff: ExponentialBackoff, metadata_expire_ms: int) -> None:
        #: retry.backoff.ms .. retry.backoff.max.ms, jittered (Metadata.refreshBackoff); the
        #: consumer's own ExponentialBackoff, so the jitter comes from its seeded random source.
        self.refresh_backoff = refresh_backoff
        #: metadata.max.age.ms (Metadata.metadataExpireMs).
        self.metadata_expire_ms = metadata_expire_ms
        #: Partition count of every known topic.
        self.partition_counts: dict[str, int] = {}
        #: Per topic, each partition's replica racks (sorted; empty without broker racks).
        self.racks: dict[str, list[list[str]]] = {}
        #: Per topic, each partition's leader (what changes its leader epoch).
        self.leaders: dict[str, tuple[int, ...]] = {}
        #: Metadata.topicNames(): the name of each known topic id (KIP-848's heartbeat names
        #: assigned topics by id).
        self.topic_names: dict[Uuid, str] = {}
        #: Metadata.updateVersion: bumped on every answer.
        self.update_version = 0
        #: Metadata.requestVersion: bumped by every requestUpdateForNewTopics.
        self.request_version = 0
        #: The correlation id of the MetadataRequest in flight (DefaultMetadataUpdater.inProgress).
        self.in_flight: int | None = None
        #: The requestVersion it was sent with (InProgressData.requestVersion).
        self.in_flight_version = 0
        #: Metadata.needFullUpdate: requestUpdate was called (a disconnect, an answer with a
        #: needed topic unavailable, a failed request, awaitMetadataUpdate); an answer clears it.
        self.need_full_update = False
        #: Metadata.needPartialUpdate: requestUpdateForNewTopics asked for the topics of a new
        #: subscription; cleared by an answer to a request sent after that (an answer to an older
        #: requestVersion leaves it set, and another request follows).
        self.need_partial_update = False
        #: Metadata.equivalentResponseCount: answers in a row that brought nothing new.
        self.equivalent_response_count = 0
        #: Metadata.attempts: failed requests since the last answer.
        self.attempts = 0
        #: When the last answer arrived (Metadata.lastSuccessfulRefreshMs); None before the first.
        self.last_successful_refresh_ms: int | None = None
        #: When the last request was answered or failed (Metadata.lastRefreshMs); None: never,
        #: or requestUpdateForNewTopics reset it (no refresh backoff).
        self.last_refresh_ms: int | None = None
        #: The refresh backoffs drawn since lastRefreshMs, by (term, backoff attempts).
        self._drawn: dict[tuple[str, int], int] = {}

    # ------------------------------------------------------------------ when to ask

    def update_requested(self) -> bool:
        """Metadata.updateRequested(): requestUpdate or requestUpdateForNewTopics was called and
        no answer has served it yet (a request for it may be in flight)."""
        return self.need_full_update or self.need_partial_update

    def time_to_allow_update(self, now: int) -> int:
        """Metadata.timeToAllowUpdate: how long until the refresh backoff after lastRefreshMs
        lets the next request go (0: now). Once the metadata has expired it resets
        equivalentResponseCount, as Kafka's does."""
        self._expire_equivalent(now)
        return self._allowed_at(now) - now

    def next_update_at(self, now: int) -> int:
        """When DefaultMetadataUpdater.maybeUpdate sends the next request, with none in flight:
        the first time Metadata.timeToNextUpdate is 0. With an update requested, once the
        refresh backoff allows; otherwise once the metadata expires (metadata.max.age.ms after
        the last answer) and the attempts backoff allows."""
        if self.update_requested():
            return self._allowed_at(now)
        expire_at = self._expire_at()
        return self._allowed_at(now if expire_at is None else max(now, expire_at))

    def awaits_update(self, now: int) -> bool:
        """ConsumerNetworkClient.ensureFreshMetadata waits for the next answer: an update is
        requested, or one is due (timeToNextUpdate == 0: never answered, or the last answer is
        metadata.max.age.ms old and the backoff allows), which a request in flight is."""
        return (
            self.in_flight is not None or self.update_requested() or self.next_update_at(now) <= now
        )

    def request_update(self, reset_equivalent_response_backoff: bool) -> None:
        """Metadata.requestUpdate: ask for an update (sent once the refresh backoff allows);
        ``True`` also forgets the equivalent answers (new metadata is wanted)."""
        self.need_full_update = True
        if reset_equivalent_response_backoff:
            self.equivalent_response_count = 0

    def request_update_for_new_topics(self) -> None:
        """Metadata.requestUpdateForNewTopics, on every subscription change (KafkaConsumer.subscribe
        when the subscription changed, and always for a pattern; the leader's group subscription
        beyond its own; topics assigned to a pattern member): a new requestVersion, so a request
        in flight is an older one and another follows its answer; lastRefreshMs = 0, so the
        update may go out at once; equivalentResponseCount starts over."""
        self.request_version += 1
        self.need_partial_update = True
        self.equivalent_response_count = 0
        self._set_last_refresh(None)

    def request_sent(self, correlation_id: int, now: int) -> None:
        """The consumer sent a MetadataRequest (NetworkClient's InProgressData: the current
        requestVersion). Sent once the metadata has expired, it finds equivalentResponseCount
        reset (the timeToAllowUpdate call that let it go does that)."""
        self._expire_equivalent(now)
        self.in_flight = correlation_id
        self.in_flight_version = self.request_version

    def failed_update(self, now: int) -> None:
        """Metadata.failedUpdate (DefaultMetadataUpdater.handleFailedRequest): the request in
        flight failed at ``now``; the next one waits for the refresh backoff of the failed
        attempts since the last answer, retry.backoff.ms * 2^(attempts - 1) +-20 %, up to
        retry.backoff.max.ms (KIP-580)."""
        self.in_flight = None
        self._set_last_refresh(now)
        self.attempts += 1
        self.equivalent_response_count = 0

    # ------------------------------------------------------------------ the refresh backoff

    def _set_last_refresh(self, now: int | None) -> None:
        """A new lastRefreshMs starts a new backoff period: nothing drawn yet."""
        self.last_refresh_ms = now
        if self._drawn:
            self._drawn = {}

    def _expire_at(self) -> int | None:
        """lastSuccessfulRefreshMs + metadata.max.age.ms; None before the first answer (due)."""
        last = self.last_successful_refresh_ms
        return None if last is None else last + self.metadata_expire_ms

    def _expire_equivalent(self, now: int) -> None:
        """timeToAllowUpdate's reset: expired metadata forgets the equivalent answers."""
        expire_at = self._expire_at()
        if expire_at is not None and now >= expire_at:
            self.equivalent_response_count = 0

    def _allowed_at(self, now: int) -> int:
        """The first time from ``now`` on when timeToAllowUpdate is 0: lastRefreshMs plus the
        larger of the attempts backoff and the equivalent-answers backoff (which ends when the
        metadata expires)."""
        last = self.last_refresh_ms
        if last is None:
            return now
        at = now
        count = self.equivalent_response_count
        if count > 0:
            at = self._deadline("equivalent", count - 1, at, self._expire_at())
        return self._deadline("attempts", max(self.attempts - 1, 0), at, None)

    def _deadline(self, term: str, attempts: int, floor: int, ceiling: int | None) -> int:
        """lastRefreshMs + refreshBackoff.backoff(attempts), kept within [floor, ceiling]. The
        backoff is drawn (once per backoff period) only if its range reaches into that
        interval: otherwise the answer is the same whatever it would be."""
        last = self.last_refresh_ms
        assert last is not None
        if ceiling is not None and ceiling <= floor:
            return floor
        lo, hi = self.refresh_backoff.bounds(attempts)
        if last + hi <= floor:
            return floor
        if ceiling is not None and last + lo >= ceiling:
            return ceiling
        drawn = self._drawn.get((term, attempts))
        if drawn is None:
            drawn = self._drawn[(term, attempts)] = self.refresh_backoff.backoff(attempts)
        at = max(floor, last + drawn)
        return at if ceiling is None else min(at, ceiling)

    # ------------------------------------------------------------------ the answer

    def update(
        self,
        now: int,
        response: MetadataResponse,
        full: bool,
        retain_topic: Callable[[str], bool],
    ) -> list[str]:
        """Metadata.update + handleMetadataResponse: an answer arrived at ``now``. A ``full``
        answer (to a request for all topics) replaces what is known; one for a list of topics
        updates those. ``retain_topic`` is ConsumerMetadata.retainTopic: errors and news for
        topics the consumer does not need are ignored. equivalentResponseCount grows unless a
        needed topic brings a partition or a leader the consumer did not know. A needed topic
        unavailable (an InvalidMetadataException) requests another update (requestUpdate(false)).
        Returns the needed topics answered INVALID_TOPIC_EXCEPTION (Metadata.invalidTopics), in
        answer order."""
        self.in_flight = None
        self.need_partial_update = self.in_flight_version < self.request_version
        self.need_full_update = False
        self._set_last_refresh(now)
        self.last_successful_refresh_ms = now
        self.attempts = 0
        self.equivalent_response_count += 1
        counts, racks, leaders = self.partition_counts, self.racks, self.leaders
        known = leaders
        if full:
            counts = self.partition_counts = {}
            racks = self.racks = {}
            leaders = self.leaders = {}
            self.topic_names = {}
        broker_racks = {b.node_id: b.rack for b in response.brokers}
        unavailable = False
        invalid: list[str] = []
        news = False
        for topic in response.topics:
            name = topic.name
            if topic.error_code != Errors.NONE or not topic.partitions:
                counts.pop(name, None)
                racks.pop(name, None)
                leaders.pop(name, None)
                if topic.error_code in INVALID_METADATA_ERRORS and retain_topic(name):
                    unavailable = True
                elif topic.error_code == Errors.INVALID_TOPIC_EXCEPTION and retain_topic(name):
                    invalid.append(name)
                continue
            if topic.topic_id != ZERO_UUID:
                self.topic_names[topic.topic_id] = name
            before = known.get(name)
            counts[name], racks[name], leaders[name] = _topic_racks(topic, broker_racks)
            if not news and before is not leaders[name] and before != leaders[name]:
                news = retain_topic(name)
        if news:
            self.equivalent_response_count = 0  # Metadata.updateLatestMetadata
        if unavailable:
            self.request_update(False)
        self.update_version += 1
        return invalid

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


_RACKS_CACHE: dict[int, tuple[object, tuple[Any, ...], int, list[list[str]], tuple[int, ...]]] = {}


def _topic_racks(
    topic: Any, broker_racks: dict[int, str | None]
) -> tuple[int, list[list[str]], tuple[int, ...]]:
    """Partition count, per-partition replica racks and leaders of one metadata topic
    (read-only).

    Memoised by response object: the cluster hands every consumer the same immutable response,
    so a 1,000-member group over 100,000 partitions parses it once, not 1,000 times.
    """
    rack_key = tuple(sorted(broker_racks.items(), key=lambda kv: kv[0]))
    hit = _RACKS_CACHE.get(id(topic))
    if hit is not None and hit[0] is topic and hit[1] == rack_key:
        return hit[2], hit[3], hit[4]
    parts = sorted(topic.partitions, key=lambda p: p.partition_index)
    racks = [
        sorted({rack for r in p.replica_nodes if (rack := broker_racks.get(r)) is not None})
        for p in parts
    ]
    leaders = tuple(p.leader_id for p in parts)
    if len(_RACKS_CACHE) >= 256:
        _RACKS_CACHE.clear()
    _RACKS_CACHE[id(topic)] = (topic, rack_key, len(parts), racks, leaders)
    return len(parts), racks, leaders
