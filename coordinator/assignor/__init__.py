"""Server-side (KIP-848) partition assignors: Kafka's ``coordinator.group.assignor`` package.

``api`` is the contract (Kafka's group-coordinator-api), ``spec`` what the coordinator passes in,
``ordering`` the Java collection orders the results depend on, and ``registry`` the names
(``uniform``, ``range``) and the preferred-assignor choice. Nothing here imports the client
assignors in ``assignors/``.
"""

from coordinator.assignor.api import (
    ConsumerGroupPartitionAssignor,
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    MemberSubscription,
    PartitionAssignor,
    PartitionAssignorException,
    SubscribedTopicDescriber,
    SubscriptionType,
)
from coordinator.assignor.spec import (
    GroupSpecImpl,
    MemberAssignmentImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
    TopicMetadata,
)

__all__ = [
    "ConsumerGroupPartitionAssignor",
    "GroupAssignment",
    "GroupSpec",
    "GroupSpecImpl",
    "MemberAssignment",
    "MemberAssignmentImpl",
    "MemberSubscription",
    "MemberSubscriptionAndAssignmentImpl",
    "PartitionAssignor",
    "PartitionAssignorException",
    "SubscribedTopicDescriber",
    "SubscribedTopicDescriberImpl",
    "SubscriptionType",
    "TopicMetadata",
]
