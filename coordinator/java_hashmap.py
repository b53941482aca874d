"""An exact model of the key order of OpenJDK 17's ``java.util.HashMap``, tree bins included.

:mod:`coordinator.java` orders a map by bucket then by position in the bucket's list, which is
Java's order as long as no bucket becomes a *tree bin*. OpenJDK turns a bucket into a red-black
tree when an insertion leaves a list of ``TREEIFY_THRESHOLD`` + 1 = 9 nodes (``putVal``) or of
8 nodes (``computeIfAbsent`` counts the nodes it walked past, not the new one), provided the table
has at least ``MIN_TREEIFY_CAPACITY`` = 64 buckets; a smaller table is doubled instead (an *early
resize*). A tree bin still iterates along its ``next`` list, but that list is reordered:

* ``treeifyBin``/``TreeNode.treeify`` keep the list's order and then ``moveRootToFront`` puts the
  tree's root first;
* ``putTreeVal`` links the new node right after its tree parent (``xp.next = x``) and moves the
  rebalanced root to the front;
* a resize's ``TreeNode.split`` keeps the list order in each half, makes a half of at most
  ``UNTREEIFY_THRESHOLD`` = 6 nodes a list again and re-treeifies a larger half when the other
  half is not empty (root to the front again);
* ``removeTreeNode`` unlinks the node, and turns the bin back into a list when the tree was small
  (no right child of the root, no left child, or no left-left grandchild), otherwise removes it
  from the tree and moves the new root to the front.

Nodes of a tree are ordered by their spread hash (a signed ``int``), then by ``compareTo`` when
the keys are ``Comparable`` of one class (``Integer``, Kafka's ``Uuid``: most significant bits
then least, signed). Keys with equal hashes that are not comparable fall back to
``tieBreakOrder`` (``System.identityHashCode``), which no model can reproduce: this one raises.

This module is the reference the fast paths of the assignors fall back to when a bucket may
become a tree (:mod:`coordinator.assignor.treeify`); it is a plain port of the behaviour, node
by node, checked against the JVM (tools/hashmap-vectors, tests/coordinator/data).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

from coordinator.java import table_size_for
from coordinator.kafka_uuid import Uuid

K = TypeVar("K", bound=Hashable)

TREEIFY_THRESHOLD = 8
UNTREEIFY_THRESHOLD = 6
MIN_TREEIFY_CAPACITY = 64


def _signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def spread_signed(hash_code: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` as the signed ``int`` a node stores."""
    u = hash_code & 0xFFFFFFFF
    return _signed32(u ^ (u >> 16))


class _Node:
    """A ``HashMap.Node``, or a ``TreeNode`` when ``tree`` is set (then the tree links count)."""

    __slots__ = ("hash", "key", "left", "next", "parent", "prev", "red", "right", "tree")

    def __init__(self, hash_: int, key: object, next_: _Node | None) -> None:
        self.hash = hash_
        self.key = key
        self.next = next_
        self.tree = False
        self.prev: _Node | None = None
        self.parent: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.red = False


class TieBreakOrder(Exception):
    """Two distinct keys with equal hashes that ``compareTo`` cannot order: Java would use
    ``System.identityHashCode``, which is not reproducible."""


class JavaHashMap(Generic[K]):
    """The keys of one ``HashMap`` (or ``HashSet``), in Java's iteration order at any time.

    ``hash_code(key)`` is the key's ``hashCode()`` (any int, taken modulo 2**32);
    ``compare(a, b)`` its ``compareTo`` (negative, zero, positive). ``initial_capacity`` is the
    argument of ``new HashMap<>(n)`` (None: ``new HashMap<>()``).
    """

    def __init__(
        self,
        hash_code: Callable[[K], int],
        compare: Callable[[K, K], int],
        initial_capacity: int | None = None,
    ) -> None:
        self._hash_code = hash_code
        self._compare = compare
        self._table: list[_Node | None] = []
        # HashMap(int) keeps the table size in `threshold` until the first insertion
        self._threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
        self._nodes: dict[K, _Node] = {}
        #: how often each tree-related branch ran (for tests that check what a sequence covers)
        self.events: Counter[str] = Counter()

    # --- public operations -----------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Buckets of the table (0 before the first insertion)."""
        return len(self._table)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, key: object) -> bool:
        return key in self._nodes

    def __iter__(self) -> Iterator[K]:
        for head in self._table:
            node = head
            while node is not None:
                yield node.key  # type: ignore[misc]
                node = node.next

    def keys(self) -> list[K]:
        return list(self)

    def put(self, key: K) -> None:
        """``HashMap.put`` (``HashSet.add``): a present key keeps its place."""
        if key in self._nodes:
            return
        h = spread_signed(self._hash_code(key))
        if not self._table:
            self._resize()
        tab = self._table
        i = (len(tab) - 1) & h
        first = tab[i]
        if first is None:
            node = tab[i] = _Node(h, key, None)
        elif first.tree:
            node = self._put_tree_val(first, h, key)
        else:
            p = first
            bin_count = 0
            while p.next is not None:
                p = p.next
                bin_count += 1
            node = p.next = _Node(h, key, None)
            if bin_count >= TREEIFY_THRESHOLD - 1:  # the bin now holds 9 or more
                self._treeify_bin(h)
        self._nodes[key] = node
        if len(self._nodes) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: K) -> None:
        """``HashMap.computeIfAbsent`` with a function that returns a value: it resizes
        *before* looking (when the size already exceeds the threshold), links a new key at the
        head of a list bin, and treeifies a list bin that now holds 8 or more."""
        if len(self._nodes) > self._threshold or not self._table:
            self._resize()
        if key in self._nodes:
            return
        h = spread_signed(self._hash_code(key))
        tab = self._table
        i = (len(tab) - 1) & h
        first = tab[i]
        if first is not None and first.tree:
            self.events["compute_if_absent_tree"] += 1
            node = self._put_tree_val(first, h, key)
        else:
            bin_count = 0
            p = first
            while p is not None:
                bin_count += 1
                p = p.next
            node = tab[i] = _Node(h, key, first)
            if bin_count >= TREEIFY_THRESHOLD - 1:
                self._treeify_bin(h)
        self._nodes[key] = node

    def touch(self) -> None:
        """The resize check of a ``computeIfAbsent`` call whose key is present."""
        if len(self._nodes) > self._threshold or not self._table:
            self._resize()

    def remove(self, key: K) -> None:
        """``HashMap.remove``: the table never shrinks."""
        node = self._nodes.pop(key, None)
        if node is None:
            return
        tab = self._table
        i = (len(tab) - 1) & node.hash
        if node.tree:
            self._remove_tree_node(node)
        elif tab[i] is node:
            tab[i] = node.next
        else:
            p = tab[i]
            assert p is not None
            while p.next is not node:
                p = p.next
                assert p is not None
            p.next = node.next

    def clear(self) -> None:
        """``HashMap.clear`` keeps the table's size."""
        self._nodes.clear()
        self._table = [None] * len(self._table)

    # --- table -----------------------------------------------------------------------------

    def _resize(self) -> None:
        old = self._table
        old_cap = len(old)
        if old_cap > 0:
            new_cap = old_cap << 1
        elif self._threshold > 0:
            new_cap = self._threshold
        else:
            new_cap = 16
        self._threshold = int(new_cap * 0.75)  # (int) (newCap * 0.75f), exact for powers of 2
        tab: list[_Node | None] = [None] * new_cap
        self._table = tab
        for j, e in enumerate(old):
            if e is None:
                continue
            if e.next is None:
                tab[e.hash & (new_cap - 1)] = e
            elif e.tree:
                self._split(e, j, old_cap)
            else:
                lo, hi = _split_list(e, old_cap)
                tab[j] = _link(lo)
                tab[j + old_cap] = _link(hi)

    def _treeify_bin(self, h: int) -> None:
        tab = self._table
        if len(tab) < MIN_TREEIFY_CAPACITY:
            self.events["early_resize"] += 1
            self._resize()
            return
        i = (len(tab) - 1) & h
        nodes = []
        e = tab[i]
        while e is not None:
            nodes.append(e)
            e = e.next
        self.events["treeify"] += 1
        prev = None
        for node in nodes:
            node.tree = True
            node.prev = prev
            prev = node
        self._treeify(nodes[0])

    def _split(self, head: _Node, index: int, bit: int) -> None:
        tab = self._table
        lo, hi = _split_list(head, bit)
        for half, other, slot in ((lo, hi, index), (hi, lo, index + bit)):
            if not half:
                continue
            prev = None
            for node in half:
                node.prev = prev
                prev = node
            tab[slot] = _link(half)
            if len(half) <= UNTREEIFY_THRESHOLD:
                self.events["split_untreeify"] += 1
                _untreeify(half)
            elif other:  # else the tree is whole and stays as it is
                self.events["split_retreeify"] += 1
                self._treeify(half[0])

    # --- tree bins -------------------------------------------------------------------------

    def _dir(self, h: int, key: K, p: _Node) -> int:
        """Which side of ``p`` a key goes: hash, then ``compareTo``."""
        if p.hash > h:
            return -1
        if p.hash < h:
            return 1
        d = self._compare(key, p.key)  # type: ignore[arg-type]
        if d == 0:
            raise TieBreakOrder(f"{key!r} and {p.key!r}")
        return d

    def _treeify(self, head: _Node) -> None:
        """``TreeNode.treeify`` of the list from ``head`` (every node already a tree node)."""
        root: _Node | None = None
        x: _Node | None = head
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                p = root
                while True:
                    d = self._dir(x.hash, x.key, p)  # type: ignore[arg-type]
                    xp = p
                    child = p.left if d <= 0 else p.right
                    if child is None:
                        x.parent = xp
                        if d <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = nxt
        self._move_root_to_front(root)

    def _put_tree_val(self, first: _Node, h: int, key: K) -> _Node:
        self.events["put_tree_val"] += 1
        root = _root_of(first)
        p = root
        while True:
            d = self._dir(h, key, p)
            xp = p
            child = p.left if d <= 0 else p.right
            if child is None:
                xpn = xp.next
                x = _Node(h, key, xpn)
                x.tree = True
                if d <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                self._move_root_to_front(_balance_insertion(root, x))
                return x
            p = child

    def _move_root_to_front(self, root: _Node | None) -> None:
        tab = self._table
        if root is None or not tab:
            return
        i = (len(tab) - 1) & root.hash
        first = tab[i]
        if root is not first:
            tab[i] = root
            rp, rn = root.prev, root.next
            if rn is not None:
                rn.prev = rp
            if rp is not None:
                rp.next = rn
            if first is not None:
                first.prev = root
            root.next = first
            root.prev = None

    def _remove_tree_node(self, p: _Node) -> None:
        """``TreeNode.removeTreeNode(map, tab, movable = true)``."""
        tab = self._table
        i = (len(tab) - 1) & p.hash
        first = tab[i]
        root = first
        succ, pred = p.next, p.prev
        if pred is None:
            tab[i] = first = succ
        else:
            pred.next = succ
        if succ is not None:
            succ.prev = pred
        if first is None:
            return
        assert root is not None
        if root.parent is not None:
            root = _root_of(root)
        self.events["remove_tree_node"] += 1
        if root.right is None or root.left is None or root.left.left is None:
            self.events["remove_untreeify"] += 1
            nodes = []
            e: _Node | None = first
            while e is not None:
                nodes.append(e)
                e = e.next
            _untreeify(nodes)
            return
        pl, pr = p.left, p.right
        if pl is not None and pr is not None:
            s = pr
            while s.left is not None:  # the successor
                s = s.left
            s.red, p.red = p.red, s.red
            sr = s.right
            pp = p.parent
            if s is pr:
                p.parent = s
                s.right = p
            else:
                sp = s.parent
                p.parent = sp
                if sp is not None:
                    if s is sp.left:
                        sp.left = p
                    else:
                        sp.right = p
                s.right = pr
                pr.parent = s
            p.left = None
            p.right = sr
            if sr is not None:
                sr.parent = p
            s.left = pl
            pl.parent = s
            s.parent = pp
            if pp is None:
                root = s
            elif p is pp.left:
                pp.left = s
            else:
                pp.right = s
            replacement = sr if sr is not None else p
        elif pl is not None:
            replacement = pl
        elif pr is not None:
            replacement = pr
        else:
            replacement = p
        if replacement is not p:
            pp = replacement.parent = p.parent
            if pp is None:
                root = replacement
                replacement.red = False
            elif p is pp.left:
                pp.left = replacement
            else:
                pp.right = replacement
            p.left = p.right = p.parent = None
        r = root if p.red else _balance_deletion(root, replacement)
        if replacement is p:  # detach
            pp = p.parent
            p.parent = None
            if pp is not None:
                if p is pp.left:
                    pp.left = None
                elif p is pp.right:
                    pp.right = None
        self._move_root_to_front(r)


# --- helpers on nodes ------------------------------------------------------------------------


def _split_list(head: _Node, bit: int) -> tuple[list[_Node], list[_Node]]:
    lo: list[_Node] = []
    hi: list[_Node] = []
    e: _Node | None = head
    while e is not None:
        (hi if e.hash & bit else lo).append(e)
        e = e.next
    return lo, hi


def _link(nodes: list[_Node]) -> _Node | None:
    """Chain ``nodes`` by ``next`` in this order; the head (None when empty)."""
    for a, b in itertools.pairwise(nodes):
        a.next = b
    if nodes:
        nodes[-1].next = None
        return nodes[0]
    return None


def _untreeify(nodes: list[_Node]) -> None:
    """``TreeNode.untreeify``: plain nodes, same order."""
    for node in nodes:
        node.tree = False
        node.prev = node.parent = node.left = node.right = None
        node.red = False


def _root_of(node: _Node) -> _Node:
    while node.parent is not None:
        node = node.parent
    return node


def _rotate_left(root: _Node, p: _Node | None) -> _Node:
    if p is not None and p.right is not None:
        r = p.right
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node | None) -> _Node:
    if p is not None and p.left is not None:
        left = p.left
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _is_red(node: _Node | None) -> bool:
    return node is not None and node.red


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    """Red-black insertion fix-up (CLR), as ``TreeNode.balanceInsertion`` does it."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        if xp is xpp.left:
            uncle = xpp.right
            if _is_red(uncle):
                assert uncle is not None
                uncle.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.right:
                x = xp
                root = _rotate_left(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_right(root, xpp)
        else:
            uncle = xpp.left
            if _is_red(uncle):
                assert uncle is not None
                uncle.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.left:
                x = xp
                root = _rotate_right(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_left(root, xpp)


def _balance_deletion(root: _Node, x: _Node | None) -> _Node:
    """Red-black deletion fix-up (CLR), as ``TreeNode.balanceDeletion`` does it."""
    while True:
        if x is None or x is root:
            return root
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        if x.red:
            x.red = False
            return root
        if xp.left is x:
            xpr = xp.right
            if _is_red(xpr):
                assert xpr is not None
                xpr.red = False
                xp.red = True
                root = _rotate_left(root, xp)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is None:
                x = xp
                continue
            sl, sr = xpr.left, xpr.right
            if not _is_red(sr) and not _is_red(sl):
                xpr.red = True
                x = xp
                continue
            if not _is_red(sr):
                if sl is not None:
                    sl.red = False
                xpr.red = True
                root = _rotate_right(root, xpr)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is not None:
                xpr.red = False if xp is None else xp.red
                if xpr.right is not None:
                    xpr.right.red = False
            if xp is not None:
                xp.red = False
                root = _rotate_left(root, xp)
            x = root
        else:
            xpl = xp.left
            if _is_red(xpl):
                assert xpl is not None
                xpl.red = False
                xp.red = True
                root = _rotate_right(root, xp)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is None:
                x = xp
                continue
            sl, sr = xpl.left, xpl.right
            if not _is_red(sl) and not _is_red(sr):
                xpl.red = True
                x = xp
                continue
            if not _is_red(sl):
                if sr is not None:
                    sr.red = False
                xpl.red = True
                root = _rotate_left(root, xpl)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is not None:
                xpl.red = False if xp is None else xp.red
                if xpl.left is not None:
                    xpl.left.red = False
            if xp is not None:
                xp.red = False
                root = _rotate_right(root, xp)
            x = root


# --- the key types Kafka's assignors use -----------------------------------------------------


def _compare_ints(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def uuid_hash_code(topic_id: Uuid) -> int:
    """``Uuid.hashCode``: ``(int) (xor >> 32) ^ (int) xor`` with ``xor = msb ^ lsb``."""
    xor = (topic_id.most_significant_bits ^ topic_id.least_significant_bits) & ((1 << 64) - 1)
    return ((xor >> 32) ^ xor) & 0xFFFFFFFF


def compare_uuids(a: Uuid, b: Uuid) -> int:
    """``Uuid.compareTo``: most significant bits, then least, both as signed longs."""
    ka = (_signed64(a.most_significant_bits), _signed64(a.least_significant_bits))
    kb = (_signed64(b.most_significant_bits), _signed64(b.least_significant_bits))
    return (ka > kb) - (ka < kb)


def int_hashmap(initial_capacity: int | None = None) -> JavaHashMap[int]:
    """A ``HashMap<Integer, ?>`` / ``HashSet<Integer>`` (``Integer.hashCode`` is the value)."""
    return JavaHashMap(int, _compare_ints, initial_capacity)


def uuid_hashmap(initial_capacity: int | None = None) -> JavaHashMap[Uuid]:
    """A ``HashMap<Uuid, ?>`` keyed by Kafka's ``Uuid``."""
    return JavaHashMap(uuid_hash_code, compare_uuids, initial_capacity)


def int_set_order(values: Iterable[int], initial_capacity: int | None = None) -> list[int]:
    """Order of ``new HashSet<>(initial_capacity)`` after ``add`` of ``values`` in order."""
    model = int_hashmap(initial_capacity)
    for v in values:
        model.put(v)
    return model.keys()
