"""groupsim's Kafka side: brokers, coordinator placement and the classic group coordinator."""

from coordinator.cluster import KafkaCluster
from coordinator.config import CoordinatorConfig
from coordinator.java import java_string_hashcode
from coordinator.placement import partition_for
from coordinator.state_machine import state_diagram
from coordinator.views import GroupView, MemberView

__all__ = [
    "CoordinatorConfig",
    "GroupView",
    "KafkaCluster",
    "MemberView",
    "java_string_hashcode",
    "partition_for",
    "state_diagram",
]
