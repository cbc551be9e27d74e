"""The package's rooms import in floors, never in circles: no module imports (at module level or inside a
function; ``if TYPE_CHECKING:`` blocks aside) a module that imports it back, however long the way round;
and the floors are kept (the layering contract below).
"""

from __future__ import annotations

import ast
from pathlib import Path

import opencode_cli

PACKAGE = Path(opencode_cli.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["opencode_cli", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


class _Imports(ast.NodeVisitor):
    """The package's modules one module imports, wherever the import statement stands."""

    def __init__(self, name: str, path: Path, modules: dict[str, Path]) -> None:
        self.package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        self.modules = modules
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.orelse:
                self.visit(statement)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names if alias.name in self.modules)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            name = submodule if submodule in self.modules else target
            if name in self.modules:
                self.found.add(name)


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        visitor = _Imports(name, path, modules)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = visitor.found - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    return circles


def test_the_finder_sees_a_circle_made_inside_functions() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_holds_imports_made_inside_functions() -> None:
    graph = _graph()
    assert "opencode_cli.models.loop" in graph["opencode_cli.session"]  # `Session.run` imports it lazily
    assert "opencode_cli.session" not in graph["opencode_cli.models.loop"]  # a TYPE_CHECKING import only


def test_no_module_of_the_package_imports_one_that_imports_it_back() -> None:
    assert _circles(_graph()) == []


# -- the layering contract (issue 42 item 8) ---------------------------------------------------------
#
# Read over the same graph as the cycles above: every import, at module level or inside a function, that
# runs; an ``if TYPE_CHECKING:`` import is for annotations only (it runs nowhere) and is left out, so a
# lower layer may name a higher layer's type in an annotation (``models.loop`` takes a ``Session``).
#
# 1. ``opencode_cli.cli`` is on top: no module imports it but ``opencode_cli.__main__`` and its own.
# 2. ``opencode_cli.tools`` never imports ``opencode_cli.session`` (its face or its internals) or the cli.
# 3. ``opencode_cli.mcp`` and ``opencode_cli.models`` never import the cli, and reach each other only
#    through the other's face (``from opencode_cli.models import open_model``), never a module behind it.
# 4. A private module (a name that starts with ``_``) is imported only from inside the package that holds
#    it (``tools._question`` by ``tools.*``), but for the pairs in ``FRIENDS``.

#: Importers allowed a private module outside their package, each with its reason.
FRIENDS = {
    # the built-in plugins register the built-in tools: a tool's description is made from its prompt
    # module without importing the tool's module (``tools list`` imports no tool)
    ("opencode_cli.builtin.agents", "opencode_cli.tools._skill_prompt"),
    ("opencode_cli.builtin.shell", "opencode_cli.tools._bash_prompt"),
    ("opencode_cli.builtin.web", "opencode_cli.tools._websearch_prompt"),
    # ``opencode sandbox check`` shows what bash would decide for a command: bash's own scan and decision
    ("opencode_cli.cli.sandbox_cmd", "opencode_cli.tools._sandbox"),
    ("opencode_cli.cli.sandbox_cmd", "opencode_cli.tools._shell_scan"),
}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _breaches(graph: dict[str, set[str]]) -> list[str]:
    """Each import in ``graph`` that breaks one of the four rules above: ``importer -> imported: rule``."""
    found = []
    for importer, targets in sorted(graph.items()):
        for target in sorted(targets):
            rule = None
            if _within(target, "opencode_cli.cli") and not (
                _within(importer, "opencode_cli.cli") or importer == "opencode_cli.__main__"
            ):
                rule = "only __main__ imports the cli"
            elif _within(importer, "opencode_cli.tools") and _within(target, "opencode_cli.session"):
                rule = "tools never import the session"
            for one, other in (("mcp", "models"), ("models", "mcp")):
                if _within(importer, f"opencode_cli.{one}") and target.startswith(f"opencode_cli.{other}."):
                    rule = f"{one} imports {other} through its face only"
            parts = target.split(".")
            private = next(
                (at for at, part in enumerate(parts) if part.startswith("_") and part[:2] != "__"), None
            )
            if private is not None:
                owner = ".".join(parts[:private])
                if not _within(importer, owner) and (importer, target) not in FRIENDS:
                    rule = f"a private module of {owner}"
            if rule:
                found.append(f"{importer} -> {target}: {rule}")
    return found


def test_the_contract_catches_each_kind_of_breach() -> None:
    graph = {
        "opencode_cli.session": {"opencode_cli.cli.run_cmd"},
        "opencode_cli.__main__": {"opencode_cli.cli"},
        "opencode_cli.cli.tools_cmd": {"opencode_cli.cli.output", "opencode_cli.tools._question"},
        "opencode_cli.tools.task": {"opencode_cli.session"},
        "opencode_cli.tools.read": {"opencode_cli.tools._paths", "opencode_cli.session.calls"},
        "opencode_cli.mcp.asks": {"opencode_cli.models", "opencode_cli.models.chat"},
        "opencode_cli.models.loop": {"opencode_cli.tools._question", "opencode_cli.mcp"},
        "opencode_cli.builtin.web": {"opencode_cli.tools._websearch_prompt"},
    }
    assert _breaches(graph) == [
        "opencode_cli.cli.tools_cmd -> opencode_cli.tools._question: a private module of opencode_cli.tools",
        "opencode_cli.mcp.asks -> opencode_cli.models.chat: mcp imports models through its face only",
        "opencode_cli.models.loop -> opencode_cli.tools._question: a private module of opencode_cli.tools",
        "opencode_cli.session -> opencode_cli.cli.run_cmd: only __main__ imports the cli",
        "opencode_cli.tools.read -> opencode_cli.session.calls: tools never import the session",
        "opencode_cli.tools.task -> opencode_cli.session: tools never import the session",
    ]


def test_the_layers_hold() -> None:
    assert _breaches(_graph()) == []


def test_the_project_stays_small() -> None:
    """``Project`` owns lifetimes and little else (issue 37): at most 30 methods and properties, its cached
    properties counted; what a generation knows is asked of ``project.generation``."""
    import inspect
    from functools import cached_property

    from opencode_cli.project import Project

    kinds = (property, cached_property, staticmethod, classmethod)
    members = [
        name for name, value in vars(Project).items() if inspect.isfunction(value) or isinstance(value, kinds)
    ]
    assert len(members) <= 30, members


def test_the_session_is_a_face_over_its_jobs() -> None:
    """``Session`` keeps no job of its own beyond its lifetime (issue 37): no private method, every job in a
    module of ``opencode_cli/session/`` (offering, repair, calls, asking, turns), none of them large."""
    import inspect

    from opencode_cli.session import Session

    private = [
        name
        for name, value in vars(Session).items()
        if name.startswith("_") and not name.startswith("__") and inspect.isfunction(value)
    ]
    assert private == []
    face = [
        name
        for name, value in vars(Session).items()
        if not name.startswith("_")
        and name != "prompt"  # ``prompt`` is a field (its default a function)
        and (inspect.isfunction(value) or isinstance(value, property | classmethod))
    ]
    assert len(face) <= 22, face
    sizes = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in (PACKAGE / "session").glob("*.py")
    }
    assert {"offering.py", "repair.py", "calls.py", "asking.py", "turns.py"} <= set(sizes)
    assert max(sizes.values()) <= 450, sizes


def test_every_relative_import_names_a_module_of_the_package() -> None:
    """An import inside a function is only tried when the function runs: one left pointing at a module
    that moved (``from .modelref`` in a module that went into a subpackage) must fail here, not in a user's
    command."""
    modules = _modules()
    wrong = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
                if target not in modules:
                    wrong.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {target}")
    assert wrong == []
