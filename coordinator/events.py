"""The event catalog: every event the simulation logs, with its fields and a one-line meaning.

The event log is the product's truth (docs/events.md): the timeline, reports, results and the
Spark log analytics are views of it. This module is the one list of its event names. Readers
name events through its constants (``events.GROUP_STATE_CHANGED``) rather than string literals,
and tests hold docs/events.md and every event the lessons and the noisy digest workloads emit to
it (tests/test_event_catalog.py). It imports nothing of the project, so the coordinator, the
members, the assignors and the scenarios can all import it without a cycle.

Each event has the ``COMMON_FIELDS`` plus some of its own ``fields``; a field that does not apply
to one occurrence is left out (``request_sent`` carries ``partitions`` only for offset requests).
"""

from __future__ import annotations

from attrs import frozen

COMMON_FIELDS = ("event", "t_ms", "seq", "node")
"""On every event: its name, the simulated time, its place in the log, the node that logged it."""


@frozen
class EventSpec:
    """One event: its name, the fields it may carry beyond the common ones, what it means."""

    name: str
    fields: tuple[str, ...]
    meaning: str
    source: str  # coordinator, members, assignors, simulation (the runner), scenario (play)

    def allows(self, field: str) -> bool:
        return field in COMMON_FIELDS or field in self.fields


CATALOG: dict[str, EventSpec] = {}


def _event(source: str, name: str, fields: str, meaning: str) -> str:
    if name in CATALOG:
        raise ValueError(f"event {name} catalogued twice")
    CATALOG[name] = EventSpec(name, tuple(fields.split()), meaning, source)
    return name


# -- the scenario player (scenarios/play.py, scenarios/actions.py) --------------------------------

_S = "scenario"
SCENARIO_NOTE = _event(_S, "scenario_note", "note", "a timeline step's note")
SCENARIO_RAW_SENT = _event(
    _S, "scenario_raw_sent", "src dst api summary", "a send: step put a request on the network"
)
SCENARIO_RAW_FAILED = _event(
    _S, "scenario_raw_failed", "api reason", "a send: step could not be sent"
)

# -- the coordinator (coordinator/) --------------------------------------------------------------

_C = "coordinator"
REQUEST_RECEIVED = _event(
    _C,
    "request_received",
    "api src dst correlation_id group_id member_id generation_id group_instance_id",
    "a live broker gets a request",
)
RESPONSE_SENT = _event(
    _C,
    "response_sent",
    "api error src dst correlation_id group_id member_id generation_id",
    "a response leaves the broker (at once, or later for a parked request)",
)
REQUEST_DROPPED = _event(
    _C, "request_dropped", "api reason", "a request of a type nothing can answer"
)
GROUP_CREATED = _event(_C, "group_created", "group_id reason", "a group comes into being")
GROUP_DELETED = _event(
    _C, "group_deleted", "group_id reason", "DeleteGroups, expiry, or a rolled-back creation"
)
GROUP_STATE_CHANGED = _event(
    _C,
    "group_state_changed",
    "group_id state_from state_to generation_id reason",
    "a transition of the group state machine",
)
MEMBER_ADDED = _event(
    _C,
    "member_added",
    "group_id member_id group_instance_id generation_id reason client_reason",
    "a member enters the member table",
)
MEMBER_REMOVED = _event(
    _C,
    "member_removed",
    "group_id member_id generation_id reason",
    "a member leaves the member table (leave, expiry, group.max.size, ...)",
)
MEMBER_REPLACED = _event(
    _C,
    "member_replaced",
    "group_id member_id previous_member_id group_instance_id generation_id reason",
    "a static member's new member id replaces its old one (KIP-345)",
)
PENDING_MEMBER_ADDED = _event(
    _C, "pending_member_added", "group_id member_id", "a KIP-394 member id is handed out"
)
PENDING_MEMBER_EXPIRED = _event(
    _C, "pending_member_expired", "group_id member_id", "a pending member id expired unused"
)
PENDING_MEMBER_LEFT = _event(
    _C, "pending_member_left", "group_id member_id", "a pending member sent LeaveGroup"
)
LEADER_ELECTED = _event(
    _C,
    "leader_elected",
    "group_id member_id previous_leader generation_id reason",
    "the group's leader changes",
)
PROTOCOL_SELECTED = _event(
    _C,
    "protocol_selected",
    "group_id generation_id protocol_name",
    "the protocol vote when the join phase completes",
)
JOIN_DROPPED = _event(
    _C,
    "join_dropped",
    "group_id member_id correlation_id reason",
    "a parked JoinGroup that will never be answered",
)
SYNC_DROPPED = _event(
    _C,
    "sync_dropped",
    "group_id member_id correlation_id reason",
    "a parked SyncGroup that will never be answered",
)
ASSIGNMENT_MISSING = _event(
    _C,
    "assignment_missing",
    "group_id generation_id member_ids",
    "the leader's SyncGroup left members out (they get empty assignments)",
)
TIMER_SET = _event(
    _C, "timer_set", "key deadline_ms group_id", "a coordinator timer is set or replaced"
)
TIMER_CANCELLED = _event(_C, "timer_cancelled", "key", "a coordinator timer is cancelled")
TIMER_FIRED = _event(_C, "timer_fired", "key", "a coordinator timer fires")
RECORD_APPENDED = _event(
    _C,
    "record_appended",
    "partition offset group_id record_type tombstone",
    "a record lands in __consumer_offsets",
)
APPEND_FAILED = _event(
    _C, "append_failed", "partition group_id error", "an injected append failure"
)
OFFSETS_EXPIRED = _event(
    _C, "offsets_expired", "group_id count", "the retention check removes committed offsets"
)
TXN_MARKER_APPENDED = _event(
    _C,
    "txn_marker_appended",
    "partition offset producer_id result",
    "a transaction's COMMIT or ABORT marker lands in __consumer_offsets",
)
TXN_MARKER_FAILED = _event(
    _C,
    "txn_marker_failed",
    "partition producer_id result error",
    "a transaction marker could not be written",
)
TXN_OFFSETS_COMPLETED = _event(
    _C,
    "txn_offsets_completed",
    "group_id producer_id result count",
    "a transaction's pending offsets of a group become committed (COMMIT) or are dropped (ABORT)",
)
OFFSETS_DELETED = _event(
    _C,
    "offsets_deleted",
    "group_id topic count",
    "a deleted topic's committed offsets are removed",
)
PARTITION_LEADER_CHANGED = _event(
    _C,
    "partition_leader_changed",
    "partition leader_from leader_to",
    "an offsets partition changes leader",
)
PARTITION_LOADING = _event(
    _C, "partition_loading", "partition", "a new leader starts replaying an offsets partition"
)
PARTITION_LOADED = _event(
    _C,
    "partition_loaded",
    "partition groups records",
    "a new leader finished replaying an offsets partition",
)
PARTITION_UNLOADED = _event(
    _C, "partition_unloaded", "partition", "an old leader lets go of an offsets partition"
)
# KIP-848 consumer groups (coordinator/consumer_group_manager.py)
CONSUMER_GROUP_MEMBER_JOINED = _event(
    _C,
    "consumer_group_member_joined",
    "group_id member_id group_instance_id",
    "a KIP-848 member's first record lands (a join, or a static member's replacement)",
)
CONSUMER_GROUP_MEMBER_REMOVED = _event(
    _C,
    "consumer_group_member_removed",
    "group_id member_id member_epoch reason",
    "a KIP-848 member leaves (epoch -1) or is fenced (session or rebalance timeout)",
)
CONSUMER_GROUP_MEMBER_UPDATED = _event(
    _C,
    "consumer_group_member_updated",
    "group_id member_id member_epoch previous_member_epoch member_state assigned "
    "pending_revocation",
    "a KIP-848 member's current assignment record lands (its reconciliation moved)",
)
CONSUMER_GROUP_EPOCH_BUMPED = _event(
    _C,
    "consumer_group_epoch_bumped",
    "group_id group_epoch",
    "a consumer group's epoch record lands (subscription, metadata or membership change)",
)
CONSUMER_GROUP_TARGET_ASSIGNMENT_COMPUTED = _event(
    _C,
    "consumer_group_target_assignment_computed",
    "group_id assignment_epoch assignor members_changed",
    "the server-side assignor computed a new target assignment",
)
CONSUMER_GROUP_STATE_CHANGED = _event(
    _C,
    "consumer_group_state_changed",
    "group_id state_from state_to group_epoch assignment_epoch",
    "a consumer group's derived state changes (Empty, Assigning, Reconciling, Stable, Dead)",
)
GROUP_UPGRADED = _event(
    _C,
    "group_upgraded",
    "group_id generation_id members",
    "KIP-848 online upgrade: a classic group became a consumer group (its tombstone landed)",
)
GROUP_DOWNGRADED = _event(
    _C,
    "group_downgraded",
    "group_id generation_id members",
    "KIP-848 online downgrade: a consumer group became a classic group (its record landed)",
)
SERVER_ASSIGNMENT_COMPUTED = _event(
    _C,
    "server_assignment_computed",
    "group_id generation_id members",
    "design 2 (design: coordinator-assigns): the coordinator ran the broker's strategy",
)
BROKER_FAILED = _event(_C, "broker_failed", "", "a broker stops")
BROKER_RESTARTED = _event(_C, "broker_restarted", "", "a broker comes back")

# -- the consumers (members/): each also carries its group_id -----------------------------------

_M = "members"
CONSUMER_STARTED = _event(
    _M,
    "consumer_started",
    "group_id incarnation group_instance_id topics pattern rebalance_protocol",
    "start(), or the start of a restart()",
)
CONSUMER_CRASHED = _event(
    _M,
    "consumer_crashed",
    "group_id member_id generation_id partitions",
    "crash(): the consumer falls silent",
)
CONSUMER_RESTARTED = _event(
    _M, "consumer_restarted", "group_id incarnation", "restart() of a crashed consumer"
)
CONSUMER_CLOSING = _event(_M, "consumer_closing", "group_id", "close() was called")
CONSUMER_CLOSED = _event(
    _M, "consumer_closed", "group_id", "close() is done (or a failed consumer was closed)"
)
CLOSE_TIMED_OUT = _event(
    _M,
    "close_timed_out",
    "group_id coordinator pending apis",
    "the close timer ran out with requests to the coordinator still pending",
)
CONSUMER_FATAL = _event(
    _M,
    "consumer_fatal",
    "group_id error reason member_id generation_id",
    "a fatal error: the consumer stops",
)
MEMBER_EPOCH_UPDATED = _event(
    _M,
    "member_epoch_updated",
    "group_id member_id generation_id previous_epoch",
    "a KIP-848 member's epoch changed (updateMemberEpoch: a heartbeat answer, a join, a leave)",
)
RECONCILIATION_STARTED = _event(
    _M,
    "reconciliation_started",
    "group_id local_epoch member_id generation_id assigned owned added revoked",
    "a KIP-848 member starts reconciling its target assignment (maybeReconcile)",
)
RECONCILIATION_COMPLETED = _event(
    _M,
    "reconciliation_completed",
    "group_id local_epoch member_id generation_id partitions",
    "a KIP-848 member reconciled its target assignment; the next heartbeat acknowledges it",
)
CLIENT_STATE = _event(
    _M,
    "client_state",
    "group_id state_from state_to member_id generation_id reason",
    "a transition of the client's MemberState",
)
REQUEST_SENT = _event(
    _M,
    "request_sent",
    "group_id api dst correlation_id member_id generation_id group_instance_id reason purpose "
    "partitions assignments",
    "a request leaves the consumer",
)
RESPONSE_RECEIVED = _event(
    _M,
    "response_received",
    "group_id api src correlation_id error",
    "a response to an outstanding request is handled",
)
RESPONSE_IGNORED = _event(
    _M, "response_ignored", "group_id api reason", "a response of an unexpected type"
)
REQUEST_TIMEOUT = _event(
    _M,
    "request_timeout",
    "group_id api dst correlation_id",
    "request.timeout.ms passed without an answer",
)
REQUEST_FAILED = _event(
    _M,
    "request_failed",
    "group_id api dst correlation_id reason",
    "a request's connection broke (disconnect, coordinator marked unknown)",
)
COORDINATOR_DISCOVERED = _event(
    _M, "coordinator_discovered", "group_id coordinator", "FindCoordinator answered"
)
COORDINATOR_LOOKUP_FAILED = _event(
    _M,
    "coordinator_lookup_failed",
    "group_id reason retry_in_ms",
    "FindCoordinator failed; retried after a backoff",
)
COORDINATOR_UNKNOWN = _event(
    _M,
    "coordinator_unknown",
    "group_id coordinator reason disconnected",
    "the coordinator is marked unknown",
)
METADATA_UPDATED = _event(
    _M, "metadata_updated", "group_id topics version", "a Metadata response was applied"
)
PATTERN_MATCHED = _event(
    _M, "pattern_matched", "group_id topics", "a pattern subscription's matching topics changed"
)
SUBSCRIPTION_CHANGED = _event(
    _M,
    "subscription_changed",
    "group_id topics pattern",
    "subscribe() changed the subscription",
)
REJOIN_REQUESTED = _event(
    _M, "rejoin_requested", "group_id reason", "the consumer needs to rejoin the group"
)
GENERATION_RESET = _event(
    _M,
    "generation_reset",
    "group_id reason reset_member_id member_id generation_id",
    "resetStateAndGeneration",
)
JOINED = _event(
    _M,
    "joined",
    "group_id member_id generation_id protocol_name leader is_leader members skip_assignment",
    "a successful JoinGroup response",
)
ASSIGNMENT_COMPUTED = _event(
    _M,
    "assignment_computed",
    "group_id generation_id protocol_name members assignment",
    "the leader ran the assignor",
)
ASSIGNMENT_SKIPPED = _event(
    _M,
    "assignment_skipped",
    "group_id generation_id",
    "a returning static leader was told to skip the assignment",
)
GROUP_SUBSCRIPTION_EXTENDED = _event(
    _M,
    "group_subscription_extended",
    "group_id topics",
    "the leader adds topics an assignor assigned but nobody subscribes to",
)
ASSIGNMENT_RECEIVED = _event(
    _M,
    "assignment_received",
    "group_id partitions generation_id member_id protocol_name is_leader",
    "onJoinComplete decoded the SyncGroup assignment",
)
REBALANCE_CALLBACK = _event(
    _M,
    "rebalance_callback",
    "group_id callback partitions generation_id member_id",
    "a ConsumerRebalanceListener call (revoked, assigned, lost)",
)
LISTENER_ERROR = _event(
    _M, "listener_error", "group_id callback error", "a rebalance listener raised (ignored)"
)
ASSIGNOR_ERROR = _event(
    _M, "assignor_error", "group_id phase error", "an assignor callback raised (ignored)"
)
COMMIT_COMPLETED = _event(
    _M,
    "commit_completed",
    "group_id purpose generation_id offsets",
    "an OffsetCommit succeeded",
)
COMMIT_FAILED = _event(
    _M,
    "commit_failed",
    "group_id purpose error retriable generation_id retry_in_ms",
    "an OffsetCommit failed (locally or by its answer)",
)
COMMIT_RETRIED = _event(
    _M,
    "commit_retried",
    "group_id purpose error generation_id retry_generation_id tries",
    "franz-go 1.4 sends a commit that spanned a cooperative rebalance again",
)
STICKY_OWNED_IGNORED = _event(
    _M,
    "sticky_owned_ignored",
    "group_id generation_id computed withheld",
    "librdkafka 1.6's leader assigned as if nobody owned anything, then withheld moves",
)
TXN_COMMITTED = _event(
    _M,
    "txn_committed",
    "group_id transactional_id producer_id generation_id offsets",
    "the exactly-once loop's transaction committed its offsets (EndTxn COMMIT answered)",
)
TXN_ABORTED = _event(
    _M,
    "txn_aborted",
    "group_id transactional_id producer_id generation_id error offsets",
    "the exactly-once loop aborted its transaction (a fenced TxnOffsetCommit ...)",
)
JOIN_PREPARE_COMMIT_TIMEOUT = _event(
    _M,
    "join_prepare_commit_timeout",
    "group_id",
    "onJoinPrepare gave up waiting for its commit",
)
LEAVE_GROUP = _event(
    _M,
    "leave_group",
    "group_id reason sent member_id group_instance_id",
    "maybeLeaveGroup: close, unsubscribe, poll timeout",
)
LEAVE_GROUP_FAILED = _event(
    _M,
    "leave_group_failed",
    "group_id error member_id generation_id",
    "a LeaveGroup answer reports a failure",
)
POLL_TIMEOUT = _event(
    _M,
    "poll_timeout",
    "group_id member_id max_poll_interval_ms",
    "no poll() for max.poll.interval.ms",
)
APP_STALLED = _event(
    _M,
    "app_stalled",
    "group_id duration_ms until_ms",
    "stall(), or a revocation callback that blocks (revocation.time.ms): the application is "
    "busy until until_ms",
)
REVOKED_UNCOMMITTED = _event(
    _M,
    "revoked_uncommitted",
    "group_id generation_id records",
    "pause.pending.revocation set only: records consumed past the last commit of the "
    "partitions onJoinPrepare revokes, which their next owner consumes again",
)

# -- the sticky assignors (assignors/), through the leader's logger -----------------------------

_A = "assignors"
STICKY_CLAIM_CONFLICT = _event(
    _A,
    "sticky_claim_conflict",
    "group_id assignor member_id other_member_id topic partition generation_id "
    "other_generation_id resolution",
    "two members claim one partition (KIP-341)",
)
STICKY_ASSIGNMENT_BUILT = _event(
    _A,
    "sticky_assignment_built",
    "group_id assignor builder members partitions max_generation claim_conflicts transferring",
    "one sticky assign call finished",
)

# -- design 1: ZooKeeper (coordinator/zookeeper/) and the 0.8 consumer (members/zk_consumer.py) --

_Z = "coordinator"
ZK_TXN = _event(
    _Z,
    "zk_txn",
    "server zxid op path data session_id",
    "the ZooKeeper leader committed a write (zxid: its place in ZooKeeper's order)",
)
ZK_SESSION_EXPIRED = _event(
    _Z, "zk_session_expired", "session_id server", "the leader expired a silent session"
)
ZK_WATCH_FIRED = _event(
    _Z,
    "zk_watch_fired",
    "server session_id path type zxid",
    "a server applied a change that fires a client's one-shot watch",
)
_ZM = "members"
ZK_CONSUMER_REGISTERED = _event(
    _ZM,
    "zk_consumer_registered",
    "group_id consumer_id session_id server topics num_streams",
    "registerConsumerInZK: the ephemeral /consumers/<group>/ids/<id> is written",
)
ZK_WATCH_RECEIVED = _event(
    _ZM, "zk_watch_received", "group_id path type", "a watch notification reaches the consumer"
)
ZK_REBALANCE_ATTEMPT = _event(
    _ZM,
    "zk_rebalance_attempt",
    "group_id consumer_id attempt reason",
    "syncedRebalance begins try #attempt",
)
ZK_PARTITIONS_RELEASED = _event(
    _ZM, "zk_partitions_released", "group_id partitions", "releasePartitionOwnership"
)
ZK_ASSIGNMENT_COMPUTED = _event(
    _ZM,
    "zk_assignment_computed",
    "group_id attempt consumers partitions assignment",
    "the assignor ran on the consumer's (maybe stale) view of the registry",
)
ZK_OWNERSHIP_CONFLICT = _event(
    _ZM,
    "zk_ownership_conflict",
    "group_id attempt partition owner",
    "an owner znode exists with another thread's id (ZkNodeExistsException)",
)
ZK_REBALANCE_ATTEMPT_FAILED = _event(
    _ZM,
    "zk_rebalance_attempt_failed",
    "group_id attempt reason backoff_ms",
    "a try failed: the consumer backs off rebalance.backoff.ms",
)
ZK_REBALANCE_DONE = _event(
    _ZM,
    "zk_rebalance_done",
    "group_id attempt partitions",
    "every owner znode was written: the fetchers start on the partitions",
)
ZK_REBALANCE_FAILED = _event(
    _ZM,
    "zk_rebalance_failed",
    "group_id retries",
    "ConsumerRebalanceFailedException: rebalance.max.retries tries failed",
)
ZK_OFFSETS_COMMITTED = _event(
    _ZM, "zk_offsets_committed", "group_id offsets", "offsets written to /consumers/<group>/offsets"
)
ZK_CLIENT_DISCONNECTED = _event(
    _ZM,
    "zk_client_disconnected",
    "group_id session_id server",
    "a network cut: the consumer no longer reaches its ZooKeeper server (its fetchers go on)",
)
ZK_CLIENT_RECONNECTED = _event(
    _ZM,
    "zk_client_reconnected",
    "group_id session_id server session_expired",
    "the network is back: the session lives on, or it expired meanwhile (handleNewSession next)",
)
ZK_NEW_SESSION = _event(
    _ZM,
    "zk_new_session",
    "group_id old_session_id session_id server partitions",
    "ZKSessionExpireListener.handleNewSession: resetState drops the partitions, register, rebalance",
)

# -- the simulation runner (scenarios/simulation.py, scenarios/invariants.py) --------------------

_R = "simulation"
SIM_CONSUMER_STARTED = _event(_R, "sim_consumer_started", "", "sim.start(id)")
SIM_CONSUMER_CLOSED = _event(_R, "sim_consumer_closed", "timeout_ms", "sim.close(id)")
SIM_CONSUMER_CRASHED = _event(_R, "sim_consumer_crashed", "", "sim.crash(id): the process dies")
SIM_CONSUMER_RESTARTED = _event(
    _R,
    "sim_consumer_restarted",
    "group_protocol",
    "sim.restart(id[, config]); group_protocol when the new process runs a new configuration",
)
SIM_CONSUMER_SUBSCRIBE = _event(_R, "sim_consumer_subscribe", "topics pattern", "sim.subscribe")
SIM_CONSUMER_COMMIT = _event(_R, "sim_consumer_commit", "", "sim.commit(id): a manual commit")
SIM_CONSUMER_STALL = _event(_R, "sim_consumer_stall", "duration_ms", "sim.stall(id, ms)")
SIM_TOPIC_CREATED = _event(_R, "sim_topic_created", "topic partitions", "sim.create_topic")
SIM_PARTITIONS_ADDED = _event(
    _R, "sim_partitions_added", "topic partitions", "sim.add_partitions (the new total)"
)
SIM_TOPIC_DELETED = _event(_R, "sim_topic_deleted", "topic", "sim.delete_topic")
SIM_BROKER_FAILED = _event(_R, "sim_broker_failed", "", "sim.fail_broker")
SIM_BROKER_RESTARTED = _event(_R, "sim_broker_restarted", "", "sim.restart_broker")
SIM_BROKER_RECONFIGURED = _event(
    _R,
    "sim_broker_reconfigured",
    "config",
    "sim.restart_broker with a new configuration: the settings it comes back with",
)
SIM_NETWORK_PARTITIONED = _event(
    _R, "sim_network_partitioned", "groups until_ms", "sim.partition_network"
)
SIM_NETWORK_HEALED = _event(_R, "sim_network_healed", "", "a network partition ends")
SIM_MESSAGE_LOST = _event(
    _R,
    "sim_message_lost",
    "src dst correlation_id api reason",
    "the network lost a message",
)
SIM_DISCONNECTED = _event(
    _R,
    "sim_disconnected",
    "src dst correlation_id",
    "a request failed with a disconnect",
)
SIM_REQUEST_DELAYED = _event(
    _R,
    "sim_request_delayed",
    "src dst correlation_id api delay_ms handled_at_ms",
    "sim.delay_request: the broker handles this request delay_ms late",
)
SIM_RAW_RESPONSE = _event(
    _R,
    "sim_raw_response",
    "src dst correlation_id api error",
    "a response to sim.send_raw arrived",
)
INVARIANT_VIOLATED = _event(
    _R,
    "invariant_violated",
    "invariant group_id detail partition owners leader_id generation_from generation_to",
    "an invariant check failed (once per distinct violation)",
)
INVARIANT_ANOMALY = _event(
    _R,
    "invariant_anomaly",
    "anomaly invariant group_id detail partition owners holder generation_id",
    "a check saw what looks like a violation but Kafka allows (once per distinct case)",
)
