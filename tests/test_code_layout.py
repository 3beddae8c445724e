"""The package's layout (docs/development/code-layout.md): imports run one way, with no cycle
between fabricgen's modules, and each base of the pydantic models is defined once.

Read statically (ast over every module's source, nothing imported), so an import inside a function
or under TYPE_CHECKING counts as much as one at the top: each is a dependency a reader follows."""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

from fabricgen.basics.models import FileModel, InputModel, JsonOutputModel

PACKAGE = Path(__file__).resolve().parents[1] / "fabricgen"


def module_name(path: Path) -> str:
    """fabricgen/a/b.py -> fabricgen.a.b; fabricgen/a/__init__.py -> fabricgen.a."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The fabricgen modules `name` (at `path`) imports: `import a.b`, `from a import b` (the
    submodule a.b when there is one, else a), relative imports resolved against its package. A
    module with no source here (fabricgen._version, written when the package is installed) is no
    edge, and neither is the package a submodule's import loads first."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in known and target != name)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm, iterative),
    as the modules in import order, the first repeated at the end; a group larger than its cycle
    ends with "(+ N more modules in the same knot)"."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    found = []
    for group in groups:
        cycle = _cycle_in(graph, group)
        more = len(group) - len(cycle) + 1
        found.append(cycle + ([f"(+ {more} more modules in the same knot)"] if more else []))
    return found


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest import path from the group's first module back to itself, within the group."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no cycle in {sorted(group)}")


def test_the_cycle_finder_names_each_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}
    assert sorted(cycles(graph)) == [["a", "b", "c", "a"], ["e", "f", "e"]]
    knot = {"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}
    assert cycles(knot) == [["a", "b", "a", "(+ 1 more modules in the same knot)"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_relative_and_function_level_imports_are_edges(tmp_path):
    known = {"fabricgen.x": Path(), "fabricgen.x.a": Path(), "fabricgen.x.b": Path(), "fabricgen.y": Path()}
    source = tmp_path / "a.py"
    source.write_text("from . import b\ndef f():\n    from ..y import thing\n    import fabricgen.x\n    from fabricgen._version import v\n")
    assert imported("fabricgen.x.a", source, known) == {"fabricgen.x.b", "fabricgen.y", "fabricgen.x"}


def test_no_import_cycle_between_fabricgen_modules():
    graph = import_graph()
    assert graph.get("fabricgen.compiler.pipeline"), "the walk found the package's imports"
    found = cycles(graph)
    assert not found, "import cycles (move what both modules need to the one that owns it): " + "; ".join(" -> ".join(cycle) for cycle in found)


# The bases of fabricgen's pydantic models are defined once, in fabricgen/basics/models.py; the
# private per-module copies they replaced must not come back, under their old names or new ones.
RETIRED_MODEL_BASES = ("_Strict", "_Closed", "_Lab")


def _model_configs(tree: ast.AST) -> list[tuple[int, dict[str, object]]]:
    """Each `model_config = ConfigDict(key=literal, ...)` in a module: its line and settings."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            call = node.value
            if any(isinstance(t, ast.Name) and t.id == "model_config" for t in targets) and getattr(call.func, "id", None) == "ConfigDict":
                with contextlib.suppress(ValueError):  # a setting that is not a literal is not one of the bases'
                    found.append((node.lineno, {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}))
    return found


def test_model_bases_are_defined_once():
    bases = {name: dict(base.model_config) for name, base in (("InputModel", InputModel), ("FileModel", FileModel), ("JsonOutputModel", JsonOutputModel))}
    home = PACKAGE / "basics" / "models.py"
    again = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = path.relative_to(PACKAGE.parent)
        again += [f"{where}:{node.lineno}: class {node.name}" for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name in RETIRED_MODEL_BASES]
        if path != home:
            again += [f"{where}:{line}: {name}'s model_config" for line, config in _model_configs(tree) for name, base in bases.items() if config == base]
    assert not again, "derive from fabricgen.basics.models' bases instead: " + ", ".join(again)
