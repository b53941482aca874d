"""Coordinator failover (GroupMetadataManager.replay, onLoaded): the group comes back as Kafka's."""

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import (
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    ListGroupsRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)

from .harness import Driver, protocols

LOADING = CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=500)


def find(d: Driver, group_id="g", via="broker-2"):
    _corr, got = d.send("X", FindCoordinatorRequest(group_id), dst=via)
    return got[0]


def test_leadership_moves_to_the_next_replica_and_loads():
    d = Driver(LOADING)
    ids, gen = d.stable_group(("A", "B"))
    d.commit("A", ids["A"], gen, {("t", 0): 42})
    old = d.coordinator("g")
    p = d.cluster.partition_for("g")
    assert d.cluster.replicas_of("__consumer_offsets", p)[0] == old
    d.now = 10000
    d.apply(d.cluster.fail_broker(old, d.now))
    new = d.coordinator("g")
    assert new == d.cluster.replicas_of("__consumer_offsets", p)[1]
    assert d.cluster.coordinator_for("g") is None  # still loading
    assert find(d).node_id == int(new.split("-")[1])
    # while loading
    _, got = d.send("A", HeartbeatRequest("g", gen, ids["A"]), dst=new)
    assert got[0].error_code == Errors.NONE  # answered blindly
    _, got = d.send(
        "A",
        SyncGroupRequest("g", gen, ids["A"], protocol_type="consumer", protocol_name="range"),
        dst=new,
    )
    assert got[0].error_code == Errors.COORDINATOR_LOAD_IN_PROGRESS
    _, got = d.send("A", OffsetFetchRequest("g"), dst=new)
    assert got[0].error_code == Errors.COORDINATOR_LOAD_IN_PROGRESS
    _, got = d.send("A", ListGroupsRequest(), dst=new)
    assert got[0].error_code == Errors.COORDINATOR_LOAD_IN_PROGRESS
    d.advance(10500)
    assert d.cluster.coordinator_for("g") == new
    view = d.cluster.group("g")
    assert view.state == "Stable" and view.generation_id == gen
    assert set(view.member_ids) == set(ids.values())
    assert all(len(m.protocols) == 1 for m in view.members)
    assert d.cluster.committed_offsets("g") == {("t", 0): 42}
    # fresh session timers from the load time
    assert d.deadline(f"{new}/heartbeat-g-{ids['A']}") == 10500 + 10000
    assert d.heartbeat("A", ids["A"], gen) == Errors.NONE
    loaded = [e for e in d.named("partition_loaded") if e["partition"] == p]
    assert loaded[-1]["node"] == new and loaded[-1]["t_ms"] == 10500


def test_wrong_broker_gets_not_coordinator():
    d = Driver()
    wrong = next(n for n in d.cluster.broker_nodes if n != d.coordinator("g"))
    req = JoinGroupRequest("g", 10000, 60000, "", "consumer", protocols("range"))
    _, got = d.send("A", req, dst=wrong)
    assert got[0].error_code == Errors.NOT_COORDINATOR


def test_failover_mid_rebalance_restores_the_last_persisted_generation():
    d = Driver(LOADING)
    ids, gen = d.stable_group(("A", "B"), session=60000)
    leader = next(c for c in ids if ids[c] == d.cluster.group("g").leader_id)
    other = next(c for c in ids if c != leader)
    d.now = 1000
    corr_l = d.join(leader, member_id=ids[leader], session=60000)
    corr_o = d.join(other, member_id=ids[other], session=60000)
    assert d.response(leader, corr_l).generation_id == gen + 1  # gen+1 only in memory
    old = d.coordinator("g")
    d.apply(d.cluster.fail_broker(old, 2000))
    d.advance(2500)
    view = d.cluster.group("g")
    assert view.state == "Stable" and view.generation_id == gen
    # members holding the unpersisted generation are told ILLEGAL_GENERATION
    assert d.heartbeat(other, ids[other], gen + 1) == Errors.ILLEGAL_GENERATION
    # a follower rejoining with its full protocol list does not "match": rebalance
    d.join(other, member_id=ids[other], names=("range",), session=60000, metadata=b"range2")
    assert d.state() == "PreparingRebalance"
    assert d.response(other, corr_o).generation_id == gen + 1  # answered before the failure


def test_unload_answers_parked_requests_not_coordinator_when_the_old_leader_lives():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B"))
    p = d.cluster.partition_for("g")
    leader = next(c for c in ids if ids[c] == d.cluster.group("g").leader_id)
    corr = d.join(leader, member_id=ids[leader])
    preferred = d.cluster.replicas_of("__consumer_offsets", p)[0]
    # move leadership away and back via a failure, then a preferred election while alive
    d.apply(d.cluster.fail_broker(preferred, 100))
    assert d.response(leader, corr) is None  # a dead broker answers nobody
    d.apply(d.cluster.restart_broker(preferred, 200))
    assert d.coordinator("g") != preferred  # back as a follower
    d.now = 300
    ids2 = {}
    ids2["C"], corr_c = d.join_dynamic("C", group_id="g")
    assert d.state() == "PreparingRebalance"
    d.apply(d.cluster.elect_preferred_leaders(400))
    assert d.coordinator("g") == preferred
    r = d.response("C", corr_c)
    assert r.error_code == Errors.NOT_COORDINATOR and r.member_id == ids2["C"]


def test_all_replicas_dead_means_no_coordinator():
    d = Driver(num_brokers=3, replication_factor=1)
    node = d.coordinator("g")
    d.apply(d.cluster.fail_broker(node, 0))
    assert d.cluster.offsets_partition_leader(d.cluster.partition_for("g")) is None
    other = next(n for n in d.cluster.broker_nodes if n != node)
    assert find(d, via=other).error_code == Errors.COORDINATOR_NOT_AVAILABLE
    d.apply(d.cluster.restart_broker(node, 10))
    assert d.coordinator("g") == node


def test_group_with_offsets_only_comes_back_empty_and_deleted_groups_stay_deleted():
    d = Driver(LOADING)
    d.commit("X", "", -1, {("t", 0): 3}, group_id="simple")
    ids, gen = d.stable_group(("A",), group_id="g")
    from coordinator.protocol import MemberIdentity

    d.leave("A", MemberIdentity(ids["A"]), group_id="g")
    for b in list(d.cluster.broker_nodes[:2]):
        d.apply(d.cluster.fail_broker(b, d.now))
    d.advance(d.now + 500)
    s = d.cluster.group("simple")
    assert s.state == "Empty" and s.protocol_type is None
    g = d.cluster.group("g")
    assert g.state == "Empty" and g.generation_id == gen + 1 and g.protocol_type == "consumer"


def test_describe_and_list_groups():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B"))
    node = d.coordinator("g")
    _, got = d.send("X", DescribeGroupsRequest(("g", "missing")), dst=node)
    # answered partition by partition (the service's HashMap order), not in the request's order
    g, missing = sorted(got[0].groups, key=lambda x: x.group_id != "g")
    assert (
        g.group_state == "Stable" and g.protocol_type == "consumer" and g.protocol_data == "range"
    )
    assert {m.member_id for m in g.members} == set(ids.values())
    assert all(m.member_assignment.startswith(b"asg-") for m in g.members)
    assert missing.group_state == "Dead" and missing.error_code == Errors.NONE
    _, got = d.send("X", ListGroupsRequest(), dst=node)
    assert [(x.group_id, x.group_state) for x in got[0].groups] == [("g", "Stable")]
    _, got = d.send("X", ListGroupsRequest(("empty",)), dst=node)
    assert got[0].groups == ()
    d.join(
        next(c for c in ids if ids[c] == d.cluster.group("g").leader_id),
        member_id=d.cluster.group("g").leader_id,
    )
    _, got = d.send("X", DescribeGroupsRequest(("g",)), dst=node)
    assert got[0].groups[0].group_state == "PreparingRebalance"
    assert got[0].groups[0].protocol_data == ""
    # not Stable: no metadata, but each member's current assignment (describeNoMetadata)
    members = got[0].groups[0].members
    assert all(
        m.member_metadata == b"" and m.member_assignment.startswith(b"asg-") for m in members
    )


def test_a_broker_restarted_with_a_config_runs_the_coordinators_elected_on_it_with_it():
    """Design 2's rolling restart (docs/designs.md): each broker has its own configuration from
    the restart on; a shard takes the config of the broker it is elected on, and the other
    brokers keep the cluster's."""
    d = Driver(LOADING)
    d.stable_group(("A", "B"))
    p = d.cluster.partition_for("g")
    first, second, _third = d.cluster.replicas_of("__consumer_offsets", p)
    new = CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=7)
    d.apply(d.cluster.fail_broker(first, 100))
    d.apply(d.cluster.restart_broker(first, 200, new))
    assert d.cluster.service.config_of(first) is new
    assert d.cluster.service.config_of(second) is LOADING
    assert d.cluster.service.shards[p].node == second
    assert d.cluster.service.shards[p].config is LOADING  # elected before the roll reached it
    d.apply(d.cluster.fail_broker(second, 300))
    assert d.cluster.service.shards[p].node == first
    assert d.cluster.service.shards[p].config is new
    # an alive broker is not restarted, so its config does not change either
    d.apply(d.cluster.restart_broker(first, 400, LOADING))
    assert d.cluster.service.config_of(first) is new
