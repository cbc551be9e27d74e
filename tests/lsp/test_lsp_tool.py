"""The ``lsp`` tool (builtin spec §15.1) against real language servers on a small project in tmp_path:
ty for all nine operations, jedi-language-server for the common ones, the permission and path flow."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _lsp_servers import configure

from opencode_cli import ToolError
from opencode_cli.permission import Rule
from opencode_cli.project import Project
from opencode_cli.session import Decision

ProjectFactory = Callable[..., Project]


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def calls(project: Project, *args: dict[str, Any], prompt: Any = None) -> list[Any]:
    """Run each ``lsp`` call in one session; a ToolError is returned as it is."""
    results: list[Any] = []
    options: dict[str, Any] = {}
    if prompt is not None:
        options = {"prompt": prompt, "rules": [Rule("lsp", "*", "ask", "test")]}
    async with project, project.session(**options) as session:
        for arguments in args:
            try:
                results.append(await session.execute("lsp", dict(arguments)))
            except ToolError as error:
                results.append(error)
    return results


def at(operation: str, file: str, line: int = 1, character: int = 1, **extra: Any) -> dict[str, Any]:
    return {"operation": operation, "filePath": file, "line": line, "character": character, **extra}


def names(result: Any, key: str | None = None) -> set[str]:
    items = result.metadata["result"]
    return {(item[key] if key else item)["name"] for item in items}


def test_every_operation_gets_the_real_answer_from_ty(
    make_project: ProjectFactory, ty_project: Path, lsp_env: dict[str, str]
) -> None:
    project = make_project(extra_env=lsp_env)
    lib = str(ty_project / "pkg" / "lib.py")
    results = run(
        calls(
            project,
            at("goToDefinition", "main.py", 3, 7),
            at("findReferences", lib, 1, 5),
            at("hover", "main.py", 3, 7),
            at("documentSymbol", "pkg/lib.py"),
            at("workspaceSymbol", "main.py", query="Greet"),
            at("goToImplementation", "main.py", 3, 7),
            at("prepareCallHierarchy", "pkg/lib.py", 1, 5),
            at("incomingCalls", "pkg/lib.py", 1, 5),
            at("outgoingCalls", "pkg/lib.py", 7, 10),
        )
    )
    definition, references, hover, symbols, workspace, implementation, prepare, incoming, outgoing = results

    [target] = definition.metadata["result"]  # across files: main.py's greet is defined in pkg/lib.py
    assert target["targetUri"] == (ty_project / "pkg" / "lib.py").as_uri()
    assert target["targetSelectionRange"]["start"] == {"line": 0, "character": 4}
    assert definition.title == "goToDefinition main.py:3:7"
    assert definition.output == json.dumps(definition.metadata["result"], indent=2)

    uris = [item["uri"] for item in references.metadata["result"]]
    assert (ty_project / "main.py").as_uri() in uris and (ty_project / "pkg" / "lib.py").as_uri() in uris
    assert len(uris) >= 3 and references.title == "findReferences pkg/lib.py:1:5"

    [answer] = hover.metadata["result"]
    assert "def greet(name: str) -> str" in answer["contents"]["value"]
    assert "Say hello." in answer["contents"]["value"]

    assert {"greet", "Greeter"} <= names(symbols) and symbols.title == "documentSymbol pkg/lib.py"
    assert "Greeter" in names(workspace) and workspace.title == "workspaceSymbol"

    assert implementation.output == "No results found for goToImplementation"
    assert implementation.metadata["result"] == []

    assert names(prepare) == {"greet"}
    assert "run" in names(incoming, "from")  # Greeter.run calls greet
    assert "greet" in names(outgoing, "to")


def test_jedi_language_server_answers_too(
    make_project: ProjectFactory, jedi_project: Path, lsp_env: dict[str, str]
) -> None:
    project = make_project(extra_env=lsp_env)
    definition, hover, symbols, implementation = run(
        calls(
            project,
            at("goToDefinition", "main.py", 3, 7),
            at("hover", "main.py", 3, 7),
            at("documentSymbol", "pkg/lib.py"),
            at("goToImplementation", "main.py", 3, 7),
        )
    )
    assert definition.metadata["result"][0]["uri"] == (jedi_project / "pkg" / "lib.py").as_uri()
    assert "Say hello." in hover.metadata["result"][0]["contents"]["value"]
    assert {"greet", "Greeter"} <= names(symbols)
    # jedi-language-server has no implementation provider: it adds nothing to the answer
    assert implementation.output == "No results found for goToImplementation"


def test_permission_metadata_and_order_of_checks(
    make_project: ProjectFactory, ty_project: Path, lsp_env: dict[str, str], tmp_path: Path
) -> None:
    (ty_project / "notes.toml").write_text("a = 1\n")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    asked: list[Any] = []

    async def prompt(request: Any) -> Decision:
        asked.append(request)
        return Decision("reject") if request.permission == "external_directory" else Decision("once")

    project = make_project(extra_env=lsp_env)
    main = str(ty_project / "main.py")
    results = run(
        calls(
            project,
            at("goToDefinition", "main.py", 3, 7),
            at("documentSymbol", "main.py", query="ignored"),
            at("workspaceSymbol", "main.py", query="x"),
            at("hover", "missing.py", 1, 1),
            at("hover", "notes.toml", 1, 1),
            at("hover", str(outside), 1, 1),
            prompt=prompt,
        )
    )
    lsp_asks = [(r.patterns, r.always, r.metadata) for r in asked if r.permission == "lsp"]
    missing = str(ty_project / "missing.py")
    assert lsp_asks == [
        (["*"], ["*"], {"operation": "goToDefinition", "filePath": main, "line": 3, "character": 7}),
        (["*"], ["*"], {"operation": "documentSymbol", "filePath": main}),
        (["*"], ["*"], {"operation": "workspaceSymbol"}),
        (["*"], ["*"], {"operation": "hover", "filePath": missing, "line": 1, "character": 1}),
        (
            ["*"],
            ["*"],
            {"operation": "hover", "filePath": str(ty_project / "notes.toml"), "line": 1, "character": 1},
        ),
    ]
    assert str(results[3]) == f"File not found: {missing}"
    assert str(results[4]) == "No LSP server available for this file type."
    assert isinstance(results[5], ToolError)  # the external_directory ask came first and was rejected
    assert [r.permission for r in asked][-1] == "external_directory"


def test_bad_positions_and_operations_are_validation_errors(
    make_project: ProjectFactory, ty_project: Path, lsp_env: dict[str, str]
) -> None:
    project = make_project(extra_env=lsp_env)
    results = run(
        calls(
            project,
            at("hover", "main.py", 0, 1),
            at("hover", "main.py", 1, 0),
            at("rename", "main.py", 1, 1),
            {"operation": "hover", "filePath": "main.py"},
        )
    )
    for result in results:
        assert isinstance(result, ToolError)
        assert "invalid arguments" in str(result).lower()


def test_the_tool_is_offered_only_with_its_flag(make_project: ProjectFactory, ty_project: Path) -> None:
    assert "lsp" not in make_project().generation.offer().ids()
    assert (
        "lsp" in make_project(extra_env={"OPENCODE_EXPERIMENTAL_LSP_TOOL": "true"}).generation.offer().ids()
    )
    assert "lsp" in make_project(extra_env={"OPENCODE_EXPERIMENTAL": "true"}).generation.offer().ids()


def test_lsp_false_turns_every_server_off(
    make_project: ProjectFactory, ty_project: Path, lsp_env: dict[str, str]
) -> None:
    (ty_project / "opencode.toml").write_text("lsp = false\n")
    [result] = run(calls(make_project(extra_env=lsp_env), at("hover", "main.py", 3, 7)))
    assert str(result) == "No LSP server available for this file type."


def test_a_server_command_that_does_not_exist_is_a_clear_error(
    make_project: ProjectFactory, py_project: Path, lsp_env: dict[str, str]
) -> None:
    configure(py_project, None, missing={"command": ["no-such-language-server-xyz"], "extensions": [".py"]})
    first, second = run(
        calls(make_project(extra_env=lsp_env), at("hover", "main.py", 3, 7), at("hover", "main.py", 3, 7))
    )
    for result in (first, second):  # it is tried again, and says the same
        assert isinstance(result, ToolError)
        assert "no-such-language-server-xyz" in str(result)
        assert "No such file or directory" in str(result)


def test_description_and_parameters(make_project: ProjectFactory, lsp_env: dict[str, str]) -> None:
    [tool] = [t for t in make_project(extra_env=lsp_env).generation.offer().tools if t.id == "lsp"]
    schema = tool.parameters
    assert schema["required"] == ["operation", "filePath", "line", "character"]
    assert schema["properties"]["operation"]["enum"] == [
        "goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol",
        "goToImplementation", "prepareCallHierarchy", "incomingCalls", "outgoingCalls",
    ]  # fmt: skip
    assert schema["properties"]["line"]["minimum"] == 1 and schema["properties"]["character"]["minimum"] == 1
    assert schema["properties"]["line"]["type"] == "integer"
    assert "1-based" in tool.description
