"""``sticky``: Kafka's ``StickyAssignor`` (KIP-54, generations from KIP-341), eager protocol only.

Under the eager protocol a member has revoked everything before it rejoins, so
``Subscription.owned_partitions`` is ignored: the assignor remembers its last assignment and
generation (``on_assignment``) and sends them in its subscription user data (schema V1, see
:mod:`assignors.sticky_user_data`); the leader reads ownership only from there. Null or empty user
data means "owns nothing, no generation"; unparseable data means "owns nothing, generation -1".

The assignment itself is :class:`~assignors.sticky_common.AbstractStickyAssignor`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assignors.api import RebalanceProtocol, Subscription, TopicPartition
from assignors.sticky_common import DEFAULT_GENERATION, AbstractStickyAssignor, MemberData
from assignors.sticky_user_data import decode_sticky_user_data, encode_sticky_user_data

__all__ = ["StickyAssignor"]


class StickyAssignor(AbstractStickyAssignor):
    name = "sticky"
    supported_protocols = (RebalanceProtocol.EAGER,)
    version = 0

    def __init__(self, prefer_rack_aware_logic: bool = False) -> None:
        super().__init__(prefer_rack_aware_logic=prefer_rack_aware_logic)
        self.member_assignment: list[TopicPartition] | None = None
        self.generation: int = DEFAULT_GENERATION

    def on_assignment(self, assignment: Sequence[TopicPartition], generation_id: int) -> None:
        """Remember what this member got, and in which generation, for the next join."""
        self.member_assignment = list(assignment)
        self.generation = generation_id

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        partitions, generation = decode_sticky_user_data(subscription.user_data)
        return MemberData(partitions, generation)
