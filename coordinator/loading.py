"""Loading and unloading an ``__consumer_offsets`` partition (§7.4), mixed into GroupShard.

A broker that becomes leader replays the partition (for ``load_time_ms``) and rebuilds every group
from its last GroupMetadata record: Stable with one-protocol members if it has members, else
Empty; offsets without group metadata make an Empty "simple" group. A broker that loses the
partition turns every group Dead and answers the parked requests NOT_COORDINATOR.
"""

from __future__ import annotations

from coordinator.effects import Effect
from coordinator.errors import Errors
from coordinator.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
    Member,
)
from coordinator.protocol import JoinGroupResponse, SyncGroupResponse
from coordinator.records import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey
from coordinator.state_machine import detach


class LoadingMixin:
    """GroupMetadataManager.replay / onLoaded / onUnloaded for the classic groups."""

    def begin_load(self, now_ms: int) -> list[Effect]:
        """This broker just became leader: replay the partition for ``load_time_ms``."""
        self._begin(now_ms)
        self.log.info("partition_loading", t_ms=now_ms, node=self.node, partition=self.partition)
        if self.config.load_time_ms == 0:
            self._load()
        else:
            self._set_timer(
                self._key("load", str(self.partition)), self.config.load_time_ms, ("load",)
            )
        return self._end()

    def finish_load(self, now_ms: int, *, quiet: bool = False) -> list[Effect]:
        """Load at once (``quiet``: the cluster's start, where there is nothing to replay)."""
        self._begin(now_ms)
        self._load(quiet=quiet)
        return self._end()

    def _load(self, *, quiet: bool = False) -> None:
        latest = self.offsets_log.latest(self.partition)
        for key, value in latest.items():
            if isinstance(key, GroupMetadataKey) and value is not None:
                self._replay_group(key.group, value)
        for key, value in latest.items():
            if isinstance(key, OffsetCommitKey) and value is not None:
                if key.group not in self.groups:
                    # Offsets without group metadata: an Empty "simple" group.
                    self.groups[key.group] = ClassicGroup(group_id=key.group, created_ms=self._now)
                self.offsets.setdefault(key.group, {})[(key.topic, key.partition)] = value
        self.loading = False
        self.groups_high_water = max(self.groups_high_water, len(self.groups))
        self.loaded_ms = self._now  # the expiry job's phase (GroupCoordinatorShard.onLoaded)
        if not quiet:
            self.log.info(
                "partition_loaded",
                t_ms=self._now,
                node=self.node,
                partition=self.partition,
                groups=len(self.groups),
                records=len(self.offsets_log.partition(self.partition)),
            )
        # onLoaded: fresh session timers for every member; over-capacity groups rebalance.
        for group_id in sorted(self.groups):
            group = self.groups[group_id]
            for member in group.iter_members():
                self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
            if len(group.members) > self.config.group_max_size:
                self._prepare_rebalance(group, "loaded group is over group.max.size")
        self._ensure_expiry_timer()

    def _replay_group(self, group_id: str, value: GroupMetadataValue) -> None:
        state = STABLE if value.members else EMPTY
        group = ClassicGroup(
            group_id=group_id,
            created_ms=value.current_state_timestamp,
            initial_state=state,
            generation_id=value.generation,
            protocol_type=value.protocol_type or None,
            protocol_name=value.protocol,
        )
        for m in value.members:
            group.add(
                Member(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    # GroupMetadataManager.replay: exactly -1 (a record written before rebalance
                    # timeouts existed) means the session timeout; any other value loads as is.
                    rebalance_timeout_ms=m.session_timeout
                    if m.rebalance_timeout == -1
                    else m.rebalance_timeout,
                    session_timeout_ms=m.session_timeout,
                    protocol_type=value.protocol_type,
                    protocols=((value.protocol or "", m.subscription),),
                    assignment=m.assignment,
                )
            )
        group.protocol_type = value.protocol_type or None
        group.leader_id = value.leader
        group.state_timestamp_ms = value.current_state_timestamp
        group.subscribed_topics = self._subscribed_topics(group)
        old = self.groups.get(group_id)
        if old is not None:
            detach(old.model)
        self.groups[group_id] = group

    def unload(self, now_ms: int) -> list[Effect]:
        """Leadership moved away: every group goes Dead, parked requests get NOT_COORDINATOR.

        When this broker is dead it cannot answer anyone: its parked requests are dropped (the
        clients see their connection fail) and only the timers are cancelled.
        """
        self._begin(now_ms)
        for key in list(self.timers):
            self._cancel_timer(key)
        for group_id in sorted(self.groups):
            group = self.groups[group_id]
            before = group.state
            self._transition(group, DEAD, "partition unloaded")
            for member in group.iter_members():
                if before == PREPARING_REBALANCE and member.join_waiter is not None:
                    waiter, member.join_waiter = member.join_waiter, None
                    self._reply(
                        waiter,
                        JoinGroupResponse(Errors.NOT_COORDINATOR, member_id=member.member_id),
                        group_id,
                        member.member_id,
                    )
                if before in (COMPLETING_REBALANCE, STABLE) and member.sync_waiter is not None:
                    waiter, member.sync_waiter = member.sync_waiter, None
                    self._reply(
                        waiter,
                        SyncGroupResponse(Errors.NOT_COORDINATOR),
                        group_id,
                        member.member_id,
                    )
            detach(group.model)
        self.log.info("partition_unloaded", t_ms=now_ms, node=self.node, partition=self.partition)
        self.loading = True
        return self._end()
