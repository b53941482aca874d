"""The simulated ZooKeeper ensemble: znodes, ephemerals, one-shot watches, sessions, lagging
followers (coordinator/zookeeper/ensemble.py)."""

from __future__ import annotations

import pytest

from coordinator.zookeeper import (
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    SessionExpiredError,
    ZooKeeperEnsemble,
)
from coordinator.zookeeper.ensemble import (
    NODE_CHILDREN_CHANGED,
    NODE_CREATED,
    NODE_DATA_CHANGED,
    NODE_DELETED,
)


def _mk(zk: ZooKeeperEnsemble, sid: int, *paths: str) -> None:
    for p in paths:
        reply, _ = zk.create(sid, p, "", 0)
        assert reply.error is None


def test_create_read_delete_and_the_errors_of_each():
    zk = ZooKeeperEnsemble(servers=1)
    s = zk.open_session("zk-0", 6000)
    _mk(zk, s, "/consumers", "/consumers/g")
    assert isinstance(zk.create(s, "/consumers/g", "", 0)[0].error, NodeExistsError)
    reply, _ = zk.create(s, "/a/b", "", 0)
    assert isinstance(reply.error, NoNodeError) and reply.error.path == "/a"
    assert zk.get_children(s, "/consumers") == ["g"]
    assert isinstance(zk.delete(s, "/consumers", 0)[0].error, NotEmptyError)
    assert zk.delete(s, "/consumers/g", 0)[0].error is None
    with pytest.raises(NoNodeError):
        zk.get_data(s, "/consumers/g")
    assert not zk.exists(s, "/consumers/g")


def test_a_child_watch_fires_once_and_must_be_set_again():
    zk = ZooKeeperEnsemble(servers=1)
    a = zk.open_session("zk-0", 6000)
    b = zk.open_session("zk-0", 6000)
    _mk(zk, a, "/ids")
    assert zk.get_children(a, "/ids", watch=True) == []
    _, fired = zk.create(b, "/ids/b1", "", 10)
    assert [(f.session_id, f.path, f.type, f.t_ms) for f in fired] == [
        (a, "/ids", NODE_CHILDREN_CHANGED, 10)
    ]
    # one-shot: the second change tells nobody, until a read sets the watch again
    assert zk.create(b, "/ids/b2", "", 11)[1] == []
    assert zk.get_children(a, "/ids", watch=True) == ["b1", "b2"]
    assert [f.type for f in zk.delete(b, "/ids/b1", 12)[1]] == [NODE_CHILDREN_CHANGED]


def test_data_watches_see_changes_creation_and_deletion():
    zk = ZooKeeperEnsemble(servers=1)
    a = zk.open_session("zk-0", 6000)
    assert not zk.exists(a, "/t", watch=True)
    assert [f.type for f in zk.create(a, "/t", "1", 0)[1]] == [NODE_CREATED]
    assert zk.get_data(a, "/t", watch=True) == "1"
    assert [f.type for f in zk.set_data(a, "/t", "2", 1)[1]] == [NODE_DATA_CHANGED]
    assert zk.view("zk-0")["/t"].version == 1
    zk.get_data(a, "/t", watch=True)
    assert [f.type for f in zk.delete(a, "/t", 2)[1]] == [NODE_DELETED]


def test_ephemerals_die_with_their_session_on_close_and_on_expiry():
    zk = ZooKeeperEnsemble(servers=1)
    keeper = zk.open_session("zk-0", 6000)
    a = zk.open_session("zk-0", 6000)
    b = zk.open_session("zk-0", 4000)
    _mk(zk, keeper, "/ids")
    zk.create(a, "/ids/a", "", 0, ephemeral=True)
    zk.create(b, "/ids/b", "", 0, ephemeral=True)
    zk.create(b, "/keep", "", 0)  # persistent: outlives the session
    zk.get_children(keeper, "/ids", watch=True)
    fired = zk.close_session(a, 100)
    assert [(f.session_id, f.type) for f in fired] == [(keeper, NODE_CHILDREN_CHANGED)]
    with pytest.raises(SessionExpiredError):
        zk.get_children(a, "/ids")
    zk.client_lost(b, 1000)  # b crashes: expired session.timeout later, not before
    assert zk.next_due() == 5000
    assert zk.advance(4999) == ([], [])
    expired, _ = zk.advance(5000)
    assert [(t.op, t.session_id) for t in expired] == [("closeSession", b)]
    assert zk.get_children(keeper, "/ids") == []
    assert zk.exists(keeper, "/keep")


def test_a_client_heard_again_before_its_deadline_keeps_its_session():
    zk = ZooKeeperEnsemble(servers=1)
    a = zk.open_session("zk-0", 6000)
    zk.client_lost(a, 0)
    zk.client_heard(a)
    assert zk.next_due() is None and zk.alive(a)


def test_a_lagging_follower_serves_a_stale_view_and_fires_its_watches_late():
    zk = ZooKeeperEnsemble(servers=3, lag_ms={"zk-2": 500})
    on_leader = zk.open_session("zk-0", 6000)
    on_lagging = zk.open_session("zk-2", 6000)
    _mk(zk, on_leader, "/ids")
    zk.advance(500)
    assert zk.get_children(on_lagging, "/ids", watch=True) == []
    zk.get_children(on_leader, "/ids", watch=True)
    reply, fired = zk.create(on_leader, "/ids/x", "", 1000, ephemeral=True)
    assert reply.reply_ms == 1000  # the writer is on the leader
    assert [f.session_id for f in fired] == [on_leader]
    # zk-1 has no lag, zk-2 has not applied it yet: two clients, two views
    assert zk.get_children(on_lagging, "/ids") == []
    assert zk.next_due() == 1500
    _, fired = zk.advance(1500)
    assert [(f.session_id, f.server, f.t_ms) for f in fired] == [(on_lagging, "zk-2", 1500)]
    assert zk.get_children(on_lagging, "/ids") == ["x"]


def test_the_leader_decides_conflicts_and_a_writer_reads_its_own_write():
    zk = ZooKeeperEnsemble(servers=2, lag_ms={"zk-1": 300})
    a = zk.open_session("zk-0", 6000)
    b = zk.open_session("zk-1", 6000)
    _mk(zk, a, "/owners")
    zk.create(a, "/owners/0", "a", 100, ephemeral=True)
    # b's server has not seen a's node, but the create goes through the leader: NodeExists,
    # answered once b's server has caught up
    reply, _ = zk.create(b, "/owners/0", "b", 150)
    assert isinstance(reply.error, NodeExistsError) and reply.reply_ms == 450
    reply, _ = zk.create(b, "/owners/1", "b", 160, ephemeral=True)
    assert reply.error is None and reply.reply_ms == 460
    zk.advance(reply.reply_ms)
    assert zk.get_data(b, "/owners/1") == "b"


def test_followers_apply_in_zxid_order_and_the_same_calls_give_the_same_log():
    def run() -> list[tuple[int, str, str]]:
        zk = ZooKeeperEnsemble(servers=3, lag_ms={"zk-1": 50, "zk-2": 200})
        a = zk.open_session("zk-1", 6000)
        zk.create(a, "/x", "", 0)
        zk.set_data(a, "/x", "1", 10)
        zk.set_data(a, "/x", "2", 20)
        assert not zk.exists(a, "/x")  # zk-1 applies them at 50, 60, 70
        zk.advance(50)
        assert zk.get_data(a, "/x") == ""
        zk.advance(60)
        assert zk.get_data(a, "/x") == "1"
        zk.advance(10_000)
        return [(t.zxid, t.op, t.data) for t in zk.log]

    assert run() == run() == [(1, "create", ""), (2, "setData", "1"), (3, "setData", "2")]


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="zk-7"):
        ZooKeeperEnsemble(servers=3, lag_ms={"zk-7": 1})
    with pytest.raises(ValueError, match="leader"):
        ZooKeeperEnsemble(servers=3, lag_ms={"zk-0": 1})
