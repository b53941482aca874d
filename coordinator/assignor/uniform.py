"""Kafka's UniformAssignor (``coordinator.group.assignor.UniformAssignor`` at 1eb7644), the
default server-side assignor: balanced and sticky. Homogeneous groups (every member subscribes to
the same topics) use :mod:`uniform_homogeneous`, the others :mod:`uniform_heterogeneous`.

Racks: at 1eb7644 neither builder reads racks (and Kafka's SubscribedTopicDescriberImpl answers
no racks), so a rack-aware group gets the same assignment.
"""

from __future__ import annotations

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    SubscribedTopicDescriber,
    SubscriptionType,
)
from coordinator.assignor.uniform_heterogeneous import build_heterogeneous
from coordinator.assignor.uniform_homogeneous import build_homogeneous

UNIFORM_ASSIGNOR_NAME = "uniform"


class UniformAssignor:
    """The ``uniform`` ConsumerGroupPartitionAssignor."""

    name = UNIFORM_ASSIGNOR_NAME

    def assign(
        self, group_spec: GroupSpec, subscribed_topic_describer: SubscribedTopicDescriber
    ) -> GroupAssignment:
        if not group_spec.member_ids():
            return GroupAssignment({})
        if group_spec.subscription_type() is SubscriptionType.HOMOGENEOUS:
            return build_homogeneous(group_spec, subscribed_topic_describer)
        return build_heterogeneous(group_spec, subscribed_topic_describer)
