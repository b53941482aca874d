"""The cluster surface: FindCoordinator, Metadata, topics, up-front checks, bad input, dead nodes."""

import pytest

from coordinator import KafkaCluster
from coordinator.effects import Send
from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    LeaveGroupRequest,
    MemberIdentity,
    MetadataRequest,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from coordinator.result import NO_RESULT
from coordinator.timers import HeartbeatKey

from .harness import Driver, protocols


def test_broker_nodes_and_replica_placement():
    c = KafkaCluster(num_brokers=4, replication_factor=3, topics={"t": 5})
    assert c.broker_nodes == ("broker-0", "broker-1", "broker-2", "broker-3")
    assert c.replicas_of("t", 0) == ("broker-0", "broker-1", "broker-2")
    assert c.replicas_of("t", 3) == ("broker-3", "broker-0", "broker-1")
    assert KafkaCluster(num_brokers=2, replication_factor=3).replicas_of("t", 1) == (
        "broker-1",
        "broker-0",
    )


def test_metadata_has_replicas_and_racks():
    c = KafkaCluster(num_brokers=3, topics={"t": 2, "u": 1}, broker_racks=["r0", "r1", None])
    (send,) = c.handle_request("broker-1", "C", 1, MetadataRequest(), 0).effects
    m = send.message
    assert [(b.node_id, b.host, b.rack) for b in m.brokers] == [
        (0, "broker-0", "r0"),
        (1, "broker-1", "r1"),
        (2, "broker-2", None),
    ]
    assert [t.name for t in m.topics] == ["t", "u"]  # __consumer_offsets is not listed
    p1 = m.topics[0].partitions[1]
    assert p1.leader_id == 1 and p1.replica_nodes == (1, 2, 0)
    c.fail_broker("broker-1", 5)
    (send,) = c.handle_request("broker-0", "C", 2, MetadataRequest(("t", "nope")), 5).effects
    t, nope = send.message.topics
    assert t.partitions[1].leader_id == 2 and 1 not in [b.node_id for b in send.message.brokers]
    assert nope.error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_topic_administration():
    c = KafkaCluster(topics={"t": 2})
    c.create_topic("u", 3)
    c.add_partitions("u", 5)
    assert c.topics() == {"t": 2, "u": 5}
    c.delete_topic("t")
    assert c.topics() == {"u": 5}
    with pytest.raises(ValueError, match="already exists"):
        c.create_topic("u", 1)
    with pytest.raises(ValueError, match="larger"):
        c.add_partitions("u", 5)
    with pytest.raises(ValueError, match="unknown topic"):
        c.delete_topic("t")
    with pytest.raises(ValueError, match="at least one partition"):
        c.create_topic("v", 0)


ILLEGAL_NAMES = ["", ".", "..", "x" * 250, "topic abc", "t\n", "tö", "a/b"]


@pytest.mark.parametrize("name", ILLEGAL_NAMES)
def test_metadata_for_an_illegal_topic_name_is_invalid_topic(name):
    """KafkaApis.getTopicMetadata: a topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION,
    unless its name fails Topic.validate: then INVALID_TOPIC_EXCEPTION."""
    c = KafkaCluster(topics={"t": 1})
    (send,) = c.handle_request(
        "broker-0", "C", 1, MetadataRequest((name, "missing", "t")), 0
    ).effects
    bad, missing, t = send.message.topics
    assert (bad.name, bad.error_code, bad.partitions) == (name, Errors.INVALID_TOPIC_EXCEPTION, ())
    assert missing.error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert t.error_code == Errors.NONE
    # the longest legal name is only unknown
    (send,) = c.handle_request(
        "broker-0", "C", 2, MetadataRequest(("a-Z._9" * 41 + "abc",)), 0
    ).effects
    assert send.message.topics[0].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("name", ILLEGAL_NAMES)
def test_creating_a_topic_with_an_illegal_name_is_refused(name):
    """CreateTopics answers INVALID_TOPIC_EXCEPTION for a name Topic.validate rejects: the
    cluster refuses it, naming the topic and saying why in Kafka's words."""
    c = KafkaCluster()
    with pytest.raises(ValueError, match="INVALID_TOPIC_EXCEPTION") as info:
        c.create_topic(name, 1)
    assert repr(name) in str(info.value) and "Topic name is invalid: " in str(info.value)
    assert c.topics() == {}
    with pytest.raises(ValueError, match="internal offsets topic"):
        c.create_topic("__consumer_offsets", 1)
    with pytest.raises(ValueError, match="must be a string"):
        c.create_topic(7, 1)


@pytest.mark.parametrize(
    "kwargs",
    [{"num_brokers": 0}, {"replication_factor": 0}, {"num_brokers": 2, "broker_racks": ["a"]}],
)
def test_bad_cluster_arguments(kwargs):
    with pytest.raises(ValueError):
        KafkaCluster(**kwargs)


def test_find_coordinator_from_any_broker_and_non_group_keys():
    c = KafkaCluster()
    for node in c.broker_nodes:
        (send,) = c.handle_request(node, "C", 1, FindCoordinatorRequest("my-group"), 0).effects
        assert send.message.node_id == 0 and send.message.host == "broker-0"
        assert send.src == node and send.dst == "C" and send.correlation_id == 1
    (send,) = c.handle_request(
        "broker-0", "C", 2, FindCoordinatorRequest("tx", key_type=1), 0
    ).effects
    assert send.message.error_code == Errors.INVALID_REQUEST
    (send,) = c.handle_request("broker-0", "C", 3, FindCoordinatorRequest(""), 0).effects
    assert send.message.node_id == 0  # "" maps to partition 0, not validated


def test_dead_broker_answers_nothing():
    c = KafkaCluster()
    c.fail_broker("broker-1", 0)
    assert not c.is_alive("broker-1")
    assert c.handle_request("broker-1", "C", 1, FindCoordinatorRequest("g"), 0) == NO_RESULT
    assert c.handle_request("nobody", "C", 1, FindCoordinatorRequest("g"), 0) == NO_RESULT
    assert c.handle_timer(HeartbeatKey("broker-1", 1, "g", "m"), 5) == NO_RESULT
    assert c.handle_timer("garbage", 5) == NO_RESULT
    with pytest.raises(ValueError):
        c.fail_broker("broker-9", 0)


def test_up_front_check_order():
    d = Driver()
    node = d.coordinator("g")
    wrong = next(n for n in d.cluster.broker_nodes if n != node)
    bad_session = JoinGroupRequest("", 1, 60000, "", "consumer", protocols("range"))
    # empty group id beats the session timeout check, and both beat routing
    _, got = d.send("A", bad_session, dst=wrong)
    assert got[0].error_code == Errors.INVALID_GROUP_ID
    _, got = d.send("A", JoinGroupRequest("g", 1, 60000, "", "consumer", protocols("r")), dst=wrong)
    assert got[0].error_code == Errors.INVALID_SESSION_TIMEOUT
    big = JoinGroupRequest("g", 600001, 60000, "", "consumer", protocols("r"))
    _, got = d.send("A", big, dst=node)
    assert got[0].error_code == Errors.INVALID_SESSION_TIMEOUT
    for req in (
        HeartbeatRequest("", 1, "m"),
        SyncGroupRequest("", 1, "m", protocol_type="consumer", protocol_name="range"),
        LeaveGroupRequest("", (MemberIdentity("m"),)),
    ):
        _, got = d.send("A", req, dst=node)
        assert got[0].error_code == Errors.INVALID_GROUP_ID


def test_offset_apis_accept_the_empty_group_id():
    d = Driver()
    node = d.coordinator("")
    commit = OffsetCommitRequest(
        "", -1, "", (OffsetCommitRequestTopic("t", (OffsetCommitRequestPartition(0, 1),)),)
    )
    _, got = d.send("A", commit, dst=node)
    assert got[0].topics[0].partitions[0].error_code == Errors.NONE
    _, got = d.send("A", OffsetFetchRequest(""), dst=node)
    assert got[0].topics[0].partitions[0].committed_offset == 1


@pytest.mark.parametrize(
    "request_obj",
    [
        JoinGroupRequest("g", "10000", 60000, "", "consumer", ()),
        JoinGroupRequest("g", 10000, -5, "", "consumer", protocols("range")),
        JoinGroupRequest("g", 10000, 60000, None, "consumer", protocols("range")),
        JoinGroupRequest("g", 10000, 60000, "", "consumer", (("range", b""),)),
        JoinGroupRequest("g", 10000, 60000, "", "consumer", (JoinGroupRequestProtocol("r", "s"),)),
        JoinGroupRequest("g", 10000, 60000, "", "consumer", protocols("r"), group_instance_id=""),
        JoinGroupRequest("g", 10000, 60000, "", "consumer", protocols("range", "range")),
        HeartbeatRequest("g", "1", "m"),
        SyncGroupRequest("g", 1, "m", api_version="5"),
        LeaveGroupRequest("g", (MemberIdentity("m"),), api_version=-1),
        SyncGroupRequest("g", 1, "m", protocol_type="c", protocol_name="r", assignments=(1,)),
        LeaveGroupRequest("g", ("m",)),
        OffsetCommitRequest("g", -1, "", (OffsetCommitRequestTopic("t", ("p",)),)),
        OffsetFetchRequest("g", ("t",)),
    ],
)
def test_malformed_requests_get_invalid_request_not_a_traceback(request_obj):
    d = Driver()
    effects = d.cluster.handle_request(d.coordinator("g"), "A", 1, request_obj, 0).effects
    (send,) = [e for e in effects if isinstance(e, Send)]
    codes = [getattr(send.message, "error_code", None)]
    codes += [p.error_code for t in getattr(send.message, "topics", ()) for p in t.partitions]
    assert Errors.INVALID_REQUEST in codes or send.message.topics == ()


def test_non_string_group_id_is_invalid_group_id():
    d = Driver()
    effects = d.cluster.handle_request(
        "broker-0", "A", 1, HeartbeatRequest(None, 1, "m"), 0
    ).effects
    assert effects[0].message.error_code == Errors.INVALID_GROUP_ID


def test_unknown_request_type_is_dropped_and_logged():
    d = Driver()
    result = d.cluster.handle_request("broker-0", "A", 1, object(), 0)
    assert result.effects == ()
    d.apply(result)
    assert d.named("request_dropped")


def test_empty_group_record_failure_rolls_back_the_new_group():
    d = Driver()
    d.cluster.fail_next_append(Errors.NOT_LEADER_OR_FOLLOWER)
    r = d.response("A", d.join("A"))
    assert r.error_code == Errors.MEMBER_ID_REQUIRED  # already answered
    assert d.cluster.group("g") is None
    d.cluster.fail_next_append(Errors.MESSAGE_TOO_LARGE)
    corr = d.join("B", instance_id="ib")  # parked, then the record fails
    r = d.response("B", corr)
    assert r.error_code == Errors.UNKNOWN_SERVER_ERROR and r.member_id == ""
    assert d.cluster.group("g") is None


def test_fault_injection_rejects_nonsense():
    c = KafkaCluster()
    with pytest.raises(ValueError):
        c.fail_next_append(Errors.NONE)


def test_events_carry_time_node_and_envelope():
    d = Driver()
    d.join("A")
    received = d.named("request_received")[-1]
    sent = d.named("response_sent")[-1]
    assert received["api"] == "JoinGroup" and received["src"] == "A" and received["t_ms"] == 0
    assert (
        sent["error"] == "MEMBER_ID_REQUIRED" and sent["dst"] == "A" and sent["src"] == "broker-0"
    )
    assert sent["correlation_id"] == received["correlation_id"] and sent["group_id"] == "g"
    assert all("t_ms" in e and "node" in e for e in d.events)
    d.join_dynamic("B")
    d.complete_join()
    assert {"timer_set", "timer_fired", "group_state_changed", "member_added"} <= {
        e["event"] for e in d.events
    }
