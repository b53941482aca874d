"""Bad input never escapes as an exception: random field values for every request type."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator import protocol as P
from coordinator.effects import Send

from .harness import TEST_CONFIG, Driver

anything = st.one_of(
    st.none(),
    st.integers(-(2**31), 2**31),
    st.text(max_size=5),
    st.binary(max_size=4),
    st.booleans(),
    st.tuples(st.integers(), st.text(max_size=3)),
    st.tuples(),
)
group_ids = st.one_of(st.sampled_from(["g", "", "other"]), anything)
protocol = st.builds(
    P.JoinGroupRequestProtocol,
    st.one_of(st.sampled_from(["range", "rr"]), anything),
    st.one_of(st.just(b""), anything),
)

REQUESTS = st.one_of(
    st.builds(P.FindCoordinatorRequest, anything, anything),
    st.builds(P.MetadataRequest, st.one_of(st.none(), st.tuples(anything), anything)),
    st.builds(
        P.JoinGroupRequest,
        group_ids,
        st.one_of(st.integers(-5, 700000), anything),
        st.one_of(st.integers(-5, 700000), anything),
        st.one_of(st.just(""), anything),
        st.one_of(st.just("consumer"), anything),
        st.lists(protocol, max_size=3),
        group_instance_id=st.one_of(st.none(), anything),
        api_version=st.one_of(st.integers(-1, 10), anything),
        client_id=st.one_of(st.just("c"), anything),
    ),
    st.builds(
        P.SyncGroupRequest,
        group_ids,
        anything,
        anything,
        protocol_type=anything,
        protocol_name=anything,
        assignments=st.lists(
            st.builds(P.SyncGroupRequestAssignment, anything, anything), max_size=2
        ),
        api_version=anything,
    ),
    st.builds(P.HeartbeatRequest, group_ids, anything, anything, anything),
    st.builds(
        P.LeaveGroupRequest,
        group_ids,
        st.lists(st.one_of(st.builds(P.MemberIdentity, anything, anything), anything), max_size=2),
        api_version=anything,
    ),
    st.builds(
        P.OffsetCommitRequest,
        group_ids,
        anything,
        anything,
        st.lists(
            st.builds(
                P.OffsetCommitRequestTopic,
                anything,
                st.lists(
                    st.builds(
                        P.OffsetCommitRequestPartition, anything, anything, anything, anything
                    ),
                    max_size=2,
                ),
            ),
            max_size=2,
        ),
    ),
    st.builds(
        P.OffsetFetchRequest,
        group_ids,
        st.one_of(
            st.none(),
            st.tuples(
                st.builds(P.OffsetFetchRequestTopic, anything, st.lists(anything, max_size=2))
            ),
        ),
    ),
    st.builds(P.DescribeGroupsRequest, st.lists(anything, max_size=2)),
    st.builds(P.ListGroupsRequest, st.lists(anything, max_size=2)),
    st.builds(P.DeleteGroupsRequest, st.lists(anything, max_size=2)),
)


@settings(
    max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(REQUESTS, min_size=1, max_size=6))
def test_random_requests_never_raise(requests):
    d = Driver(TEST_CONFIG)
    node = d.coordinator("g")
    for i, request in enumerate(requests):
        result = d.cluster.handle_request(node, "fuzz", i, request, i * 10)
        sends = [e for e in result.effects if isinstance(e, Send) and e.dst == "fuzz"]
        assert len([s for s in sends if s.correlation_id == i]) <= 1
        d.apply(result)
    d.advance(10**6)  # and every timer they set fires cleanly
    json.dumps(d.events, sort_keys=True)  # the event log stays JSON-serialisable
