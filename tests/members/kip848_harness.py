"""Driving one KIP-848 Consumer (group.protocol=consumer) by hand: its ConsumerGroupHeartbeats
answered with made-up responses, as Kafka's ConsumerMembershipManagerTest and
ConsumerHeartbeatRequestManagerTest feed the manager."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attrs import evolve

from coordinator.effects import Send
from coordinator.errors import Errors
from coordinator.kafka_uuid import Uuid, topic_id_for
from coordinator.protocol import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseAssignment,
    ConsumerGroupHeartbeatTopicPartitions,
    MetadataResponse,
)
from members.config import ConsumerConfig
from members.consumer_membership import ConsumerMembershipManager
from members.result import ConsumerStep
from tests.members.harness import Harness

MEMBER_ID = "test-member-1"
HEARTBEAT_INTERVAL_MS = 1000


def tid(topic: str) -> Uuid:
    return topic_id_for(topic)


class Kip848Harness(Harness):
    """A ``Harness`` whose consumer speaks the consumer protocol; metadata carries topic ids."""

    def __init__(self, config: ConsumerConfig | None = None, **kwargs) -> None:
        super().__init__(
            config
            or ConsumerConfig(group_id="g", group_protocol="consumer", enable_auto_commit=False),
            **kwargs,
        )

    @property
    def manager(self) -> ConsumerMembershipManager:
        m = self.consumer.membership
        assert isinstance(m, ConsumerMembershipManager)
        return m

    def call_manager(self, method: str, *args) -> list:
        """One public method of the membership manager, called directly as Kafka's
        MembershipManagerImplTest calls transitionToFatal and the like: it gets a fresh
        ``ConsumerStep`` (and ``now`` last), and what it produced is carried out."""
        step = ConsumerStep(self.consumer.node, self.consumer.group_id)
        getattr(self.manager, method)(step, *args, self.now)
        return self._take(step.result())

    @property
    def mstate(self) -> str:
        return self.manager.state

    def metadata_response(self, topics=None) -> MetadataResponse:
        response = super().metadata_response(topics)
        return evolve(
            response,
            topics=tuple(evolve(t, topic_id=tid(t.name)) for t in response.topics),
        )

    def heartbeats(self) -> list[Send]:
        return [s for s in self.sent if isinstance(s.message, ConsumerGroupHeartbeatRequest)]

    def last_heartbeat(self) -> ConsumerGroupHeartbeatRequest:
        message = self.last(ConsumerGroupHeartbeatRequest).message
        assert isinstance(message, ConsumerGroupHeartbeatRequest)
        return message

    def pending_heartbeat(self) -> Send:
        (hb,) = self.pending(ConsumerGroupHeartbeatRequest)
        return hb

    def answer_heartbeat(
        self,
        *,
        epoch: int = 1,
        assignment: Mapping[str, Sequence[int]] | None = None,
        error: Errors = Errors.NONE,
        member_id: str = MEMBER_ID,
        interval: int = HEARTBEAT_INTERVAL_MS,
        message: str | None = None,
    ):
        """Answer the pending heartbeat: success with ``epoch`` and, if given, the target
        ``assignment`` ({"t": [0, 1]}), or ``error``."""
        hb = self.pending_heartbeat()
        if error != Errors.NONE:
            response = ConsumerGroupHeartbeatResponse(error, message)
        else:
            response = ConsumerGroupHeartbeatResponse(
                Errors.NONE,
                member_id=member_id,
                member_epoch=epoch,
                heartbeat_interval_ms=interval,
                assignment=None
                if assignment is None
                else ConsumerGroupHeartbeatResponseAssignment(
                    tuple(
                        ConsumerGroupHeartbeatTopicPartitions(tid(t), tuple(ps))
                        for t, ps in assignment.items()
                    )
                ),
            )
        return self.respond(hb, response)

    def join(self, assignment: Mapping[str, Sequence[int]] | None = None, epoch: int = 1) -> None:
        """start(), metadata and coordinator answered, the joining heartbeat answered with
        ``assignment`` (reconciled at once: the application is in poll())."""
        self.connect()
        self.answer_heartbeat(epoch=epoch, assignment={} if assignment is None else assignment)
