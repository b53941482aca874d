"""The consumer's metadata bookkeeping: Kafka's ``Metadata`` and ``ConsumerMetadata``, sans-I/O.

``ConsumerMetadata`` holds what the consumer knows of the cluster's topics (partition counts and
replica racks) and the state that decides when it asks again: whether an update is requested and
why, the request in flight, when the last answer came, and the two refresh-backoff counters.
It sends nothing and sets no timer: the ``Consumer`` builds the MetadataRequests, sets the
``metadata`` timer and logs the events.
"""

from __future__ import annotations

from members.backoff import ExponentialBackoff


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
