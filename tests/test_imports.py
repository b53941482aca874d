"""The packages import each other in layers, and no module imports itself back.

The graph is read from the source with ``ast``: every ``import`` anywhere in a module counts,
function-level ones included (an import that runs late is still a dependency), and importing
``a.b.c`` also runs ``a`` and ``a.b``. Imports under ``if TYPE_CHECKING:`` are left out: they never
run, and annotating with a higher layer's type is no dependency.

Layers, lowest first: coordinator; assignors (may use coordinator); members (coordinator,
assignors); scenarios (all three); pipeline (everything).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("coordinator", "assignors", "members", "scenarios", "pipeline")
LAYER = {name: rank for rank, name in enumerate(PACKAGES)}
# scenarios.cli adds the Spark pipeline's commands when pipeline.cli imports (and leaves them
# out when pyspark is missing): a plugin hook, the only import of a higher layer
ALLOWED_UPWARD = {("scenarios.cli", "pipeline"), ("scenarios.cli", "pipeline.cli")}


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


@cache
def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (run-time imports only, at any depth)."""
    modules = _modules()

    def resolve(name: str) -> list[str]:
        """The project modules importing ``name`` runs: the deepest one, and its packages."""
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if not name:
            return []
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skipped = _type_checking_only(tree)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    targets.update(resolve(alias.name))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    targets.update(resolve(f"{base}.{alias.name}"))
        # a module's own packages run before it: not an import of them
        graph[module] = {t for t in targets if t != module and not module.startswith(t + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path) per strongly connected component of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for component in components:
        members = set(component)
        path = [component[0]]
        while True:  # walk inside the component until a module repeats
            nxt = min(graph[path[-1]] & members)
            if nxt in path:
                cycles.append([*path[path.index(nxt) :], nxt])
                break
            path.append(nxt)
    return cycles


def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    # Simulation.add_consumer imports the Consumer inside the method; `from assignors.api import`
    # also runs the assignors package
    assert "members.consumer" in graph["scenarios.simulation"]
    assert "assignors" in graph["members.consumer"]
    # and it finds a cycle when there is one
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_import_cycles() -> None:
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_packages_import_only_lower_layers() -> None:
    upward = sorted(
        (module, target)
        for module, targets in import_graph().items()
        for target in targets
        if LAYER[target.split(".")[0]] > LAYER[module.split(".")[0]]
        and (module, target) not in ALLOWED_UPWARD
    )
    assert not upward, "imports of a higher layer:\n" + "\n".join(f"{a} -> {b}" for a, b in upward)
