"""An assignment summarised for groups too large for the one-column-per-member table.

At 2,000 members a column per member is unreadable (and rich squeezes the columns to nothing), so
``groupsim assign`` and ``groupsim run`` switch to these figures past ``FULL_TABLE_MAX_MEMBERS``:
partitions per member (min, median, max, the spread that Kafka's ``isBalanced`` looks at), members
with nothing, topics per member, and, when the previous owners are known, how many partitions move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.table import Table

FULL_TABLE_MAX_MEMBERS = 30  # wider tables wrap into empty columns on an ordinary terminal


def _topic(tp: str) -> str:
    return tp.rpartition("-")[0] or tp


def summarize(
    assignment: Mapping[str, Sequence[str]],
    *,
    owned: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Figures of an assignment (member -> partitions as ``"topic-N"`` strings), JSON-ready.

    ``owned`` (member -> partitions owned before) adds ``moved``: partitions assigned now to a
    member other than their previous owner (newly owned partitions are not moves), and
    ``revoked``: previously owned partitions their owner no longer has.
    """
    counts = sorted(len(parts) for parts in assignment.values())
    topics = sorted(len({_topic(tp) for tp in parts}) for parts in assignment.values())
    n = len(counts)
    out: dict[str, Any] = {
        "members": n,
        "partitions": sum(counts),
        "partitions_per_member": {
            "min": counts[0] if n else 0,
            "median": counts[n // 2] if n else 0,
            "max": counts[-1] if n else 0,
            "mean": round(sum(counts) / n, 3) if n else 0,
        },
        "imbalance": (counts[-1] - counts[0]) if n else 0,
        "members_without_partitions": sum(1 for c in counts if c == 0),
        "topics_per_member": {
            "min": topics[0] if n else 0,
            "max": topics[-1] if n else 0,
        },
    }
    if owned is not None:
        before = {tp: m for m, parts in owned.items() for tp in parts}
        now = {tp: m for m, parts in assignment.items() for tp in parts}
        out["moved"] = sum(1 for tp, m in now.items() if tp in before and before[tp] != m)
        out["revoked"] = sum(1 for tp, m in before.items() if now.get(tp) != m)
    return out


def summary_table(summary: Mapping[str, Any], *, title: str | None = None) -> Table:
    """The summary as a two-column table (figure, value)."""
    table = Table(title=title, box=box.ASCII, title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    per = summary["partitions_per_member"]
    tpm = summary["topics_per_member"]
    rows = [
        ("members", summary["members"]),
        ("partitions assigned", summary["partitions"]),
        (
            "partitions per member: min / median / max",
            f"{per['min']} / {per['median']} / {per['max']}",
        ),
        ("partitions per member: mean", per["mean"]),
        ("imbalance (max - min partitions)", summary["imbalance"]),
        ("members without partitions", summary["members_without_partitions"]),
        ("topics per member: min / max", f"{tpm['min']} / {tpm['max']}"),
    ]
    if "moved" in summary:
        rows.append(("partitions moved to another member", summary["moved"]))
        rows.append(("partitions revoked from their owner", summary["revoked"]))
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def member_rows_table(
    assignment: Mapping[str, Sequence[str]], *, title: str | None = None
) -> Table:
    """Every member's partitions, one row per member: the full assignment at any group size
    (a column per member cannot fit a terminal past a few dozen members)."""
    table = Table(title=title, box=box.ASCII, title_justify="left")
    table.add_column("member")
    table.add_column("count", justify="right")
    table.add_column("partitions", overflow="fold")
    for member in sorted(assignment):
        parts = list(assignment[member])
        table.add_row(member, str(len(parts)), ", ".join(map(str, parts)))
    return table
