"""The JoinGroup walk-throughs in docs/ name only modules, classes and functions that exist.

Issue 14 asks that a newcomer can follow one JoinGroup from a YAML line to the coordinator and
back; a walk-through that cites a renamed function sends them looking for nothing. Every
backticked reference in those sections is resolved against the source (read with ``ast``):
``path/module.py`` must be a file, ``Class.member`` a member defined in that class's body (or a
base's), a bare name something the packages define or a catalogued event. Kafka's own
(camelCase) method names are left alone: they name Java, not this repository.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from coordinator.events import CATALOG

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("coordinator", "assignors", "members", "scenarios", "pipeline")
WALKTHROUGHS = (
    ("docs/coordinator.md", "### How one JoinGroup goes through"),
    ("docs/members.md", "### One JoinGroup, from the consumer out and back"),
    ("docs/members.md", "### One JoinGroup, from a YAML line to the coordinator and back"),
)
IDENTIFIER = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
JAVA_METHOD = re.compile(r"[a-z][A-Z]")  # joinGroupIfNeeded: a Kafka method, not ours
NODE = re.compile(r"C\d+|broker-\d+")  # the example's consumer and broker names


@cache
def definitions() -> tuple[frozenset[str], dict[str, set[str]], dict[str, list[str]]]:
    """(every name the packages define, class -> its members, class -> its base names)."""
    names: set[str] = set()
    members: dict[str, set[str]] = {}
    bases: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(node.name)
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names.update(t.id for t in targets if isinstance(t, ast.Name))
                    names.update(t.attr for t in targets if isinstance(t, ast.Attribute))
                if isinstance(node, ast.ClassDef):
                    own = members.setdefault(node.name, set())
                    bases.setdefault(node.name, []).extend(ast.unparse(b) for b in node.bases)
                    for item in ast.walk(node):
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                            own.add(item.name)
                        elif isinstance(item, ast.Assign | ast.AnnAssign):
                            targets = (
                                item.targets if isinstance(item, ast.Assign) else [item.target]
                            )
                            own.update(t.id for t in targets if isinstance(t, ast.Name))
                            own.update(t.attr for t in targets if isinstance(t, ast.Attribute))
    return frozenset(names), members, bases


def has_member(cls: str, member: str) -> bool:
    _, members, bases = definitions()
    seen: set[str] = set()
    todo = [cls]
    while todo:
        name = todo.pop().rpartition(".")[2]
        if name in seen or name not in members:
            continue
        seen.add(name)
        if member in members[name]:
            return True
        todo.extend(bases[name])
    return False


def section(doc: str, heading: str) -> str:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert heading in text, f"{doc} lost its section {heading!r}"
    start = text.index(heading) + len(heading)
    end = text.find("\n#", start)
    return text[start : end if end >= 0 else None]


def unresolved(text: str) -> tuple[list[str], int]:
    """(the references in ``text`` that name nothing in the repository, how many were checked)."""
    names, members, _ = definitions()
    missing: list[str] = []
    checked = 0
    for ref in re.findall(r"`([^`\n]+)`", text):
        target = re.sub(r"\(.*\)$", "", ref.strip())  # Simulation.start("C1") -> Simulation.start
        if target.endswith(".py"):
            checked += 1
            if not (ROOT / target).is_file() and not any(
                (ROOT / p / target).is_file() for p in PACKAGES
            ):
                missing.append(ref)
            continue
        if not IDENTIFIER.fullmatch(target) or NODE.fullmatch(target):
            continue  # a YAML line, a timer's rendered key, an example node: not a code name
        head, *rest = target.split(".")
        if rest and head in members:
            checked += 1
            if not has_member(head, rest[0]):
                missing.append(ref)
        elif rest and any(JAVA_METHOD.search(p) for p in rest):
            continue  # AbstractCoordinator.joinGroupIfNeeded and the like
        else:
            checked += 1
            if target.rpartition(".")[2] not in names and target not in CATALOG:
                missing.append(ref)
    return missing, checked


@pytest.mark.parametrize(("doc", "heading"), WALKTHROUGHS)
def test_the_walkthrough_names_only_what_exists(doc: str, heading: str) -> None:
    missing, checked = unresolved(section(doc, heading))
    assert missing == [], f"{doc} {heading!r} cites names the source does not define"
    assert checked >= 10, "the section's references were found"


def test_the_checker_flags_a_name_that_is_gone() -> None:
    text = (
        "`scenarios/engine.py`, `Engine.run`, `KafkaCluster.handle_request`, `request_sent`, "
        "`scenarios/gone.py`, `Engine.run_all`, `KafkaCluster.handle_everything`, `_no_such_step`"
    )
    missing, checked = unresolved(text)
    assert missing == [
        "scenarios/gone.py",
        "Engine.run_all",
        "KafkaCluster.handle_everything",
        "_no_such_step",
    ]
    assert checked == 8
