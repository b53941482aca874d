"""A ZooKeeper ensemble, simulated: one leader, followers that apply its commits late.

What Kafka 0.8's high-level consumer relied on, and what made it fragile (seed 004, design 1):

* **znodes** in a tree; a node is *persistent* or *ephemeral*, an ephemeral one belongs to the
  session that created it and disappears when that session closes or expires (ZooKeeper's
  ``DataTree.killSession``); a create under a missing parent fails with ``NoNode``, a create of an
  existing path with ``NodeExists``, a delete of a node with children with ``NotEmpty``.
* **one-shot watches** (``WatchManager``): ``get_children(watch=True)`` leaves a child watch,
  ``get_data``/``exists`` a data watch, on the *server the client is connected to*. The first
  change that server applies fires it (``NodeChildrenChanged``, ``NodeDataChanged``,
  ``NodeCreated``, ``NodeDeleted``) and removes it: the client must read again to re-arm it, and
  changes in between are seen only by that read (I0Itec ZkClient re-reads at once, which is what
  Kafka's ``ZkUtils.subscribeChildChanges`` relies on).
* **sessions** (``SessionTrackerImpl``, on the leader): a live client pings, a client that
  stops (crash, cut network) is expired ``session_timeout_ms`` after it was last heard, and the
  expiry is a ``closeSession`` transaction that deletes its ephemerals like any other write.
* **several servers**: every write goes through the leader, which orders it (its ``zxid``) and
  checks it (a ``NodeExists`` is decided there, so two clients can never both create the same
  node). The leader applies a commit at once; follower ``s`` applies it ``lag_ms[s]`` later, in
  zxid order. Reads are served by the client's own server from its possibly stale tree: two
  clients on different servers see different registries for a while (ZooKeeper promises
  sequential consistency per client, not a single up-to-date view: the split brain of design 1).
  A write's reply reaches the client once its own server has applied it (the follower answers
  after committing locally, ``CommitProcessor``), so a client always reads its own writes.

Deterministic rules where ZooKeeper is not: watches of one node fire in the order they were set
(ZooKeeper keeps them in a ``HashSet``); a session's ephemerals are deleted in path order; expiry
is exact to the millisecond (ZooKeeper rounds deadlines up to its ``tickTime`` buckets); servers
never fail. Sans-I/O: no clock (every call takes ``now_ms``), nothing is sent or logged; fired
watches come back as :class:`WatchedEvent` values, and the caller runs :meth:`advance` at
:meth:`next_due`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from attrs import define, field, frozen

# ZooKeeper's Watcher.Event.EventType names
NODE_CREATED = "NodeCreated"
NODE_DELETED = "NodeDeleted"
NODE_DATA_CHANGED = "NodeDataChanged"
NODE_CHILDREN_CHANGED = "NodeChildrenChanged"


class ZkError(Exception):
    """A failed ZooKeeper operation; ``code`` is ZooKeeper's ``KeeperException.Code`` name."""

    code = "ZkError"

    def __init__(self, path: str) -> None:
        super().__init__(f"{self.code} for {path}")
        self.path = path


class NodeExistsError(ZkError):
    code = "NODEEXISTS"


class NoNodeError(ZkError):
    code = "NONODE"


class NotEmptyError(ZkError):
    code = "NOTEMPTY"


class SessionExpiredError(ZkError):
    code = "SESSIONEXPIRED"


@frozen
class Znode:
    """One node: its data, its data version, and the session owning it if it is ephemeral."""

    data: str
    version: int = 0
    ephemeral_owner: int | None = None


@frozen
class Txn:
    """A committed write, in the leader's order (``zxid``)."""

    zxid: int
    op: str  # create | delete | setData | closeSession
    path: str
    data: str = ""
    session_id: int = 0
    committed_ms: int = 0


@frozen
class WatchedEvent:
    """A watch that fired: ``server`` applied a change of ``path`` at ``t_ms``; the client of
    ``session_id`` is to be told (ZooKeeper's ``WatchedEvent``: type and path only, no data)."""

    t_ms: int
    server: str
    session_id: int
    path: str
    type: str
    zxid: int


@frozen
class WriteReply:
    """What a write answers: the txn it committed (None when refused), the error, and when the
    client gets the answer (once its server applied the write: ``reply_ms``)."""

    txn: Txn | None
    error: ZkError | None
    reply_ms: int


@define
class Session:
    session_id: int
    server: str
    timeout_ms: int
    expires_ms: int | None = None  # armed once the client is no longer heard
    closed: bool = False


@define
class Server:
    """One ZooKeeper server's copy of the tree and the watches its clients set on it."""

    name: str
    lag_ms: int
    nodes: dict[str, Znode] = field(factory=lambda: {"/": Znode("")})
    applied_zxid: int = 0
    # txns committed by the leader, not applied here yet: (apply at ms, txn)
    pending: list[tuple[int, Txn]] = field(factory=list)
    data_watches: dict[str, dict[int, None]] = field(factory=dict)
    child_watches: dict[str, dict[int, None]] = field(factory=dict)

    def children(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        return sorted(
            p[len(prefix) :]
            for p in self.nodes
            if p.startswith(prefix) and "/" not in p[len(prefix) :]
        )


def parent_of(path: str) -> str:
    head = path.rsplit("/", 1)[0]
    return head or "/"


class ZooKeeperEnsemble:
    """The servers ``zk-0`` (the leader) .. ``zk-{n-1}``, their sessions and their trees."""

    def __init__(self, servers: int = 3, lag_ms: Mapping[str, int] | None = None) -> None:
        if servers < 1:
            raise ValueError("a ZooKeeper ensemble needs at least one server")
        lags = dict(lag_ms or {})
        names = [f"zk-{i}" for i in range(servers)]
        unknown = sorted(set(lags) - set(names))
        if unknown:
            raise ValueError(f"no ZooKeeper server {unknown[0]} (servers: {', '.join(names)})")
        if lags.get("zk-0", 0):
            raise ValueError("zk-0 is the leader: it applies commits at once (lag 0)")
        self.servers: dict[str, Server] = {n: Server(n, int(lags.get(n, 0))) for n in names}
        self.leader = self.servers["zk-0"]
        self.sessions: dict[int, Session] = {}
        self._next_session = 0x1000
        self.zxid = 0
        self.log: list[Txn] = []

    # -- sessions ---------------------------------------------------------------------------

    def open_session(self, server: str, timeout_ms: int) -> int:
        """A new session on ``server`` (the client's pick from its connect string)."""
        if server not in self.servers:
            raise ValueError(f"no ZooKeeper server {server}")
        self._next_session += 1
        sid = self._next_session
        self.sessions[sid] = Session(sid, server, timeout_ms)
        return sid

    def alive(self, session_id: int) -> bool:
        s = self.sessions.get(session_id)
        return s is not None and not s.closed

    def client_lost(self, session_id: int, now_ms: int) -> None:
        """The client stopped pinging (crashed, or its network is cut): the leader's session
        tracker expires it ``timeout`` after it was last heard."""
        s = self.sessions[session_id]
        if not s.closed and s.expires_ms is None:
            s.expires_ms = now_ms + s.timeout_ms

    def client_heard(self, session_id: int) -> None:
        """The client pings again before its deadline: the session lives on."""
        s = self.sessions[session_id]
        if not s.closed:
            s.expires_ms = None

    def close_session(self, session_id: int, now_ms: int) -> list[WatchedEvent]:
        """An orderly close (``ZooKeeper.close``): a closeSession txn deletes its ephemerals."""
        s = self.sessions[session_id]
        if s.closed:
            return []
        s.closed = True
        return self._commit("closeSession", "/", "", session_id, now_ms)[1]

    # -- writes (through the leader) --------------------------------------------------------

    def create(
        self, session_id: int, path: str, data: str, now_ms: int, *, ephemeral: bool = False
    ) -> tuple[WriteReply, list[WatchedEvent]]:
        self._live(session_id, path)
        tree = self.leader.nodes
        if path in tree:
            return self._refused(session_id, NodeExistsError(path), now_ms), []
        if parent_of(path) not in tree:
            return self._refused(session_id, NoNodeError(parent_of(path)), now_ms), []
        op = "createEphemeral" if ephemeral else "create"
        return self._commit(op, path, data, session_id, now_ms)

    def delete(
        self, session_id: int, path: str, now_ms: int
    ) -> tuple[WriteReply, list[WatchedEvent]]:
        self._live(session_id, path)
        if path not in self.leader.nodes:
            return self._refused(session_id, NoNodeError(path), now_ms), []
        if self.leader.children(path):
            return self._refused(session_id, NotEmptyError(path), now_ms), []
        return self._commit("delete", path, "", session_id, now_ms)

    def set_data(
        self, session_id: int, path: str, data: str, now_ms: int
    ) -> tuple[WriteReply, list[WatchedEvent]]:
        self._live(session_id, path)
        if path not in self.leader.nodes:
            return self._refused(session_id, NoNodeError(path), now_ms), []
        return self._commit("setData", path, data, session_id, now_ms)

    # -- reads (the client's own server) ----------------------------------------------------

    def get_children(self, session_id: int, path: str, *, watch: bool = False) -> list[str]:
        server = self._server_of(session_id, path)
        if path not in server.nodes:
            raise NoNodeError(path)
        if watch:
            server.child_watches.setdefault(path, {})[session_id] = None
        return server.children(path)

    def get_data(self, session_id: int, path: str, *, watch: bool = False) -> str:
        server = self._server_of(session_id, path)
        node = server.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if watch:
            server.data_watches.setdefault(path, {})[session_id] = None
        return node.data

    def exists(self, session_id: int, path: str, *, watch: bool = False) -> bool:
        server = self._server_of(session_id, path)
        if watch:
            server.data_watches.setdefault(path, {})[session_id] = None
        return path in server.nodes

    def view(self, server: str) -> Mapping[str, Znode]:
        """A server's copy of the tree (path -> node), for reports and tests."""
        return self.servers[server].nodes

    # -- time -------------------------------------------------------------------------------

    def next_due(self) -> int | None:
        """When :meth:`advance` has something to do: a follower's next commit or an expiry."""
        times = [s.pending[0][0] for s in self.servers.values() if s.pending]
        times += [
            s.expires_ms
            for s in self.sessions.values()
            if s.expires_ms is not None and not s.closed
        ]
        return min(times) if times else None

    def advance(self, now_ms: int) -> tuple[list[Txn], list[WatchedEvent]]:
        """Expire the sessions due and let followers apply the commits due, in time order."""
        expired: list[Txn] = []
        fired: list[WatchedEvent] = []
        while True:
            due = self.next_due()
            if due is None or due > now_ms:
                return expired, fired
            for s in sorted(self.sessions.values(), key=lambda s: s.session_id):
                if not s.closed and s.expires_ms is not None and s.expires_ms == due:
                    s.closed = True
                    reply, ev = self._commit("closeSession", "/", "expired", s.session_id, due)
                    assert reply.txn is not None
                    expired.append(reply.txn)
                    fired += ev
            for server in self.servers.values():
                while server.pending and server.pending[0][0] == due:
                    _, txn = server.pending.pop(0)
                    fired += self._apply(server, txn, due)

    # -- internals --------------------------------------------------------------------------

    def _live(self, session_id: int, path: str) -> None:
        s = self.sessions.get(session_id)
        if s is None or s.closed:
            raise SessionExpiredError(path)

    def _server_of(self, session_id: int, path: str) -> Server:
        self._live(session_id, path)
        return self.servers[self.sessions[session_id].server]

    @staticmethod
    def _apply_ms(server: Server, now_ms: int) -> int:
        """When ``server`` applies a commit made now: after its lag, and never before the
        commits it has not applied yet (a follower applies in zxid order)."""
        last = server.pending[-1][0] if server.pending else now_ms
        return max(now_ms + server.lag_ms, last)

    def _reply_ms(self, session_id: int, now_ms: int) -> int:
        return self._apply_ms(self.servers[self.sessions[session_id].server], now_ms)

    def _refused(self, session_id: int, error: ZkError, now_ms: int) -> WriteReply:
        # an error also travels the commit pipeline back through the client's server
        return WriteReply(None, error, self._reply_ms(session_id, now_ms))

    def _commit(
        self, op: str, path: str, data: str, session_id: int, now_ms: int
    ) -> tuple[WriteReply, list[WatchedEvent]]:
        self.zxid += 1
        txn = Txn(self.zxid, op, path, data, session_id, now_ms)
        self.log.append(txn)
        fired = self._apply(self.leader, txn, now_ms)
        session = self.sessions.get(session_id)
        reply_ms = now_ms
        for server in self.servers.values():
            if server is self.leader:
                continue
            at = self._apply_ms(server, now_ms)
            if at <= now_ms:
                fired += self._apply(server, txn, now_ms)
            else:
                server.pending.append((at, txn))
            if session is not None and session.server == server.name:
                reply_ms = at
        return WriteReply(txn, None, reply_ms), fired

    def _apply(self, server: Server, txn: Txn, at_ms: int) -> list[WatchedEvent]:
        """``DataTree.processTxn`` on one server, with the watches it triggers."""
        server.applied_zxid = txn.zxid
        if txn.op == "closeSession":
            owned = sorted(
                p for p, n in server.nodes.items() if n.ephemeral_owner == txn.session_id
            )
            fired: list[WatchedEvent] = []
            for p in owned:
                fired += self._remove(server, p, txn, at_ms)
            # the server forgets the closed session's watches (WatchManager.removeWatcher)
            for table in (server.data_watches, server.child_watches):
                for watchers in table.values():
                    watchers.pop(txn.session_id, None)
            return fired
        if txn.op in ("create", "createEphemeral"):
            owner = txn.session_id if txn.op == "createEphemeral" else None
            server.nodes[txn.path] = Znode(txn.data, 0, owner)
            return self._trigger(server, txn, at_ms, [(txn.path, NODE_CREATED, "data")]) + (
                self._trigger(
                    server, txn, at_ms, [(parent_of(txn.path), NODE_CHILDREN_CHANGED, "child")]
                )
            )
        if txn.op == "delete":
            return self._remove(server, txn.path, txn, at_ms)
        if txn.op == "setData":
            old = server.nodes[txn.path]
            server.nodes[txn.path] = Znode(txn.data, old.version + 1, old.ephemeral_owner)
            return self._trigger(server, txn, at_ms, [(txn.path, NODE_DATA_CHANGED, "data")])
        raise ValueError(f"unknown txn {txn.op}")

    def _remove(self, server: Server, path: str, txn: Txn, at_ms: int) -> list[WatchedEvent]:
        server.nodes.pop(path, None)
        return self._trigger(
            server,
            txn,
            at_ms,
            [
                (path, NODE_DELETED, "data"),
                (path, NODE_DELETED, "child"),
                (parent_of(path), NODE_CHILDREN_CHANGED, "child"),
            ],
        )

    def _trigger(
        self,
        server: Server,
        txn: Txn,
        at_ms: int,
        what: Iterable[tuple[str, str, str]],
    ) -> list[WatchedEvent]:
        fired: list[WatchedEvent] = []
        told: set[tuple[int, str, str]] = set()
        for path, kind, table_name in what:
            table = server.data_watches if table_name == "data" else server.child_watches
            watchers = table.pop(path, None)
            for sid in watchers or ():
                key = (sid, path, kind)
                if key in told:  # one notification per watcher and path (WatchManager)
                    continue
                told.add(key)
                fired.append(WatchedEvent(at_ms, server.name, sid, path, kind, txn.zxid))
        return fired
