"""The consumer's requests in flight: Kafka's ``ConsumerNetworkClient`` (and the bits of
``NetworkClient`` it relies on), sans-I/O.

It numbers requests (correlation ids, unique over the consumer's whole life, so a late answer to
a crashed incarnation's request is recognised), remembers each request in flight with what its
handler needs (the generation it was sent in, the commit it carries, the topics it asks for),
and gives each one its timeout: ``request.timeout.ms``, or for a JoinGroup the longer
``max(request.timeout.ms, max.poll.interval.ms + 5000)``. ``send`` adds the effects (the
``Send`` and its timeout's ``SetTimer``) to the caller's list; completing a request returns its entry, whose timer the
consumer cancels. It logs nothing and interprets no answer.
"""

from __future__ import annotations

from collections.abc import Iterator

from attrs import define

from coordinator.effects import Effect, Send, SetTimer
from coordinator.protocol import api_name
from members.offsets import CommitResult
from members.state import Generation
from members.timers import RequestTimeout

#: Requests that do not travel on the coordinator's connection (Kafka opens a connection of its
#: own to the coordinator, id Integer.MAX_VALUE - node id): close() does not wait for them, and
#: marking the coordinator unknown does not fail them.
NOT_COORDINATOR_REQUESTS = frozenset({"FindCoordinator", "Metadata"})


@define
class InFlightRequest:
    """One request in flight, and what its response handler needs to know of it."""

    api: str
    dst: str
    #: The generation when it was sent (handlers ignore errors answering an older one).
    sent_generation: Generation
    #: The rendered key of its timeout timer, cancelled when the request completes.
    timer_key: str
    #: An OffsetCommit's commit.
    commit: CommitResult | None = None
    #: A MetadataRequest's topics (None: all topics).
    topics: tuple[str, ...] | None = None
    #: A KIP-848 leave heartbeat sent on a poll timeout: its answer is only logged
    #: (AbstractHeartbeatRequestManager.logResponse).
    ignore_response: bool = False

    @property
    def to_coordinator(self) -> bool:
        """Sent on the coordinator's connection (a group request)."""
        return self.api not in NOT_COORDINATOR_REQUESTS


class ConsumerNetworkClient:
    """Correlation ids, the requests in flight, and their timeouts."""

    __slots__ = (
        "_inflight",
        "join_request_timeout_ms",
        "last_correlation_id",
        "node",
        "request_timeout_ms",
    )

    def __init__(self, node: str, *, request_timeout_ms: int, join_request_timeout_ms: int) -> None:
        self.node = node
        self.request_timeout_ms = request_timeout_ms
        self.join_request_timeout_ms = join_request_timeout_ms
        #: The last correlation id used (they go on across incarnations).
        self.last_correlation_id = 0
        self._inflight: dict[int, InFlightRequest] = {}

    def reset(self) -> None:
        """A new incarnation: nothing is in flight any more (correlation ids go on)."""
        self._inflight = {}

    def send(
        self,
        effects: list[Effect],
        dst: str,
        message: object,
        now: int,
        generation: Generation,
        commit: CommitResult | None = None,
        topics: tuple[str, ...] | None = None,
    ) -> tuple[int, InFlightRequest]:
        """ConsumerNetworkClient.send: adds the effects (the request, and its timeout timer) to
        the caller's ``effects``; the new correlation id, and the entry kept for the answer."""
        corr = self.last_correlation_id = self.last_correlation_id + 1
        api = api_name(message)
        # RequestTimeout(corr).render(), without building the key
        timer_key = f"{RequestTimeout.PREFIX}{corr}"
        entry = self._inflight[corr] = InFlightRequest(
            api, dst, generation, timer_key, commit, topics
        )
        timeout = self.join_request_timeout_ms if api == "JoinGroup" else self.request_timeout_ms
        effects.append(Send(self.node, dst, corr, message))
        effects.append(SetTimer(timer_key, now + timeout))
        return corr, entry

    def mark_ignore_response(self, correlation_id: int, ignore: bool) -> None:
        """Whether the answer to this request is only logged."""
        entry = self._inflight.get(correlation_id)
        if entry is not None:
            entry.ignore_response = ignore

    def complete(self, correlation_id: int) -> InFlightRequest | None:
        """The request is answered, failed or timed out: its entry, or None if it is no longer
        in flight (a late answer, or one to an earlier incarnation)."""
        return self._inflight.pop(correlation_id, None)

    def coordinator_requests(self, node: str) -> Iterator[tuple[int, InFlightRequest]]:
        """The group requests in flight to ``node``, in the order they were sent."""
        for corr, entry in list(self._inflight.items()):
            if entry.dst == node and entry.to_coordinator:
                yield corr, entry

    def pending_request_count(self, node: str) -> int:
        """ConsumerNetworkClient.pendingRequestCount(coordinator)."""
        return sum(1 for e in self._inflight.values() if e.dst == node and e.to_coordinator)
