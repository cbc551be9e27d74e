"""Servers that fail: killed mid-request, hanging or crashing while an edit waits for diagnostics; the
lifecycle (one server per root, reused, stopped with the project, no orphan); push diagnostics (jedi)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _lsp_servers import configure, fixture_server
from _processes import alive, wait_gone

from opencode_cli import ToolError
from opencode_cli.lsp.servers import LspServers
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def server_pids(project: Project) -> list[int]:
    """The pids of the project's running language servers (from their service status)."""
    return [
        int(status.detail.split(",")[0].removeprefix("pid "))
        for status in project.services.statuses()
        if status.name.startswith("lsp:") and status.state == "running" and status.detail
    ]


def hover(file: str, line: int) -> dict[str, Any]:
    return {"operation": "hover", "filePath": file, "line": line, "character": 1}


def test_a_server_killed_mid_request_is_a_clear_error_and_the_next_call_restarts_it(
    make_project: ProjectFactory, project_dir: Path, lsp_env: dict[str, str], tmp_path: Path
) -> None:
    mark = tmp_path / "hover-received"
    fixture_server(project_dir, FIXTURE_MARK=str(mark))
    (project_dir / "code.fx").write_text("first line\nthis one makes it hang\n")
    project = make_project(extra_env=lsp_env)

    async def main() -> tuple[Any, Any, int, list[int]]:
        async with project, project.session() as session:
            pending = asyncio.ensure_future(session.execute("lsp", hover("code.fx", 2)))
            while not mark.exists():
                await asyncio.sleep(0.02)
            pid = int(mark.read_text())
            os.kill(pid, signal.SIGKILL)
            try:
                await pending
                failed: Any = None
            except ToolError as error:
                failed = error
            again = await session.execute("lsp", hover("code.fx", 1))
            return failed, again, pid, server_pids(project)

    failed, again, old, now = run(main())
    assert failed is not None and "fixture" in str(failed) and "exited" in str(failed)
    assert '"value": "line: first line"' in again.output
    assert old not in now and len(now) == 1
    assert wait_gone(now[0])  # stopped with the project


def test_a_hanging_server_costs_the_bound_once_and_never_fails_the_edit(
    make_project: ProjectFactory, project_dir: Path, warnings: list[str]
) -> None:
    fixture_server(project_dir, FIXTURE_DIAGNOSTICS="hang")
    code = project_dir / "code.fx"
    code.write_text("fine\n")
    project = make_project(extra_env={"OPENCODE_LSP_DIAGNOSTICS_TIMEOUT_MS": "1200"})

    async def main() -> list[Any]:
        async with project, project.session() as session:
            # started beforehand, however loaded the machine: the bound is spent on diagnostics only
            clients, errors = await (await LspServers.of(project)).clients(str(code))
            assert len(clients) == 1 and not errors
            first = await session.execute(
                "edit", {"filePath": str(code), "oldString": "fine", "newString": "oops"}
            )
            second = await session.execute(
                "edit", {"filePath": str(code), "oldString": "oops", "newString": "ok"}
            )
            return [first, second]

    first, second = run(main())
    assert (first.output, second.output) == ("Edit applied successfully.", "Edit applied successfully.")
    assert first.metadata["diagnostics"] == {}
    reports = [w for w in warnings if "language server fixture" in w]
    assert len(reports) == 1 and "did not answer diagnostics" in reports[0]
    assert code.read_text() == "ok\n"


def test_a_crashing_server_is_reported_once(
    make_project: ProjectFactory, project_dir: Path, warnings: list[str]
) -> None:
    fixture_server(project_dir, FIXTURE_DIAGNOSTICS="crash")
    code = project_dir / "code.fx"
    code.write_text("fine\n")
    results = run(_edits(make_project(), code, ["oops", "fine", "oops"]))
    assert [r.output for r in results] == ["Edit applied successfully."] * 3
    reports = [w for w in warnings if "language server fixture" in w]
    assert len(reports) == 1 and "exited" in reports[0]


async def _edits(project: Project, code: Path, texts: list[str]) -> list[Any]:
    results = []
    async with project, project.session() as session:
        for text in texts:
            old = code.read_text().strip()
            args = {"filePath": str(code), "oldString": old, "newString": text}
            results.append(await session.execute("edit", args))
    return results


def test_servers_are_reused_per_root_and_stopped_with_the_project(
    make_project: ProjectFactory, project_dir: Path, lsp_env: dict[str, str]
) -> None:
    fixture_server(project_dir)
    (project_dir / "a.fx").write_text("oops here\n")
    (project_dir / "b.fx").write_text("fine\n")
    sub = project_dir / "sub"
    sub.mkdir()
    (sub / "c.fx").write_text("fine\n")
    project = make_project(extra_env=lsp_env)

    async def main() -> tuple[list[Any], list[int], list[str]]:
        async with project, project.session() as session:
            results = [await session.execute("lsp", hover(name, 1)) for name in ("a.fx", "b.fx", "sub/c.fx")]
            names = [s.name for s in project.services.statuses() if s.name.startswith("lsp:")]
            return results, server_pids(project), names

    results, pids, names = run(main())
    assert [r.metadata["result"][0]["contents"]["value"] for r in results] == [
        "line: oops here", "line: fine", "line: fine"
    ]  # fmt: skip
    assert len(pids) == 1 and names == [f"lsp:fixture:{project_dir}"]  # no marker file: the project root
    assert all(wait_gone(pid) for pid in pids)
    assert not any(alive(pid) for pid in pids)


def test_the_fixture_servers_errors_show_after_an_edit(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    fixture_server(project_dir)
    code = project_dir / "code.fx"
    code.write_text("fine\n")
    [result] = run(_edits(make_project(), code, ["an oops"]))
    assert result.output == (
        "Edit applied successfully.\n\nLSP errors detected in this file, please fix:\n"
        f'<diagnostics file="{code}">\nERROR [1:4] oops is not allowed\n</diagnostics>'
    )


@pytest.mark.slow
def test_push_diagnostics_from_jedi_language_server(make_project: ProjectFactory, jedi_project: Path) -> None:
    """jedi-language-server pushes its diagnostics (syntax errors) after a change instead of being asked."""
    main = jedi_project / "main.py"
    broken, fixed = run(
        _edits_of(make_project(), main, [("print(greet", "print(greet(("), ("print(greet((", "print(greet")])
    )
    assert broken.output.startswith(
        "Edit applied successfully.\n\nLSP errors detected in this file, please fix:\n"
        f'<diagnostics file="{main}">\nERROR [3:'
    )
    assert fixed.output == "Edit applied successfully."


async def _edits_of(project: Project, path: Path, pairs: list[tuple[str, str]]) -> list[Any]:
    async with project, project.session() as session:
        return [
            await session.execute("edit", {"filePath": str(path), "oldString": old, "newString": new})
            for old, new in pairs
        ]


def test_sync_use_through_the_portal_leaves_no_orphan(
    project_dir: Path, env: dict[str, str], lsp_env: dict[str, str]
) -> None:
    fixture_server(project_dir)
    (project_dir / "a.fx").write_text("some text\n")
    with Project(project_dir, env={**env, **lsp_env}, autoload_plugins=False) as project:
        result = project.run_tool("lsp", hover("a.fx", 1))
        again = project.run_tool("lsp", hover("a.fx", 1))
        [pid] = server_pids(project)
    assert result.output == again.output and "line: some text" in result.output
    assert wait_gone(pid)


def test_a_server_that_exits_at_start_says_why(
    make_project: ProjectFactory, project_dir: Path, lsp_env: dict[str, str]
) -> None:
    script = "import sys; sys.stderr.write('cannot read my settings\\n'); sys.exit(4)"
    configure(project_dir, broken={"command": [sys.executable, "-c", script], "extensions": [".fx"]})
    (project_dir / "a.fx").write_text("x\n")

    async def main() -> Any:
        async with make_project(extra_env=lsp_env) as project, project.session() as session:
            try:
                await session.execute("lsp", hover("a.fx", 1))
            except ToolError as error:
                return error

    error = run(main())
    assert "broken" in str(error) and "exit code 4" in str(error) and "cannot read my settings" in str(error)


def test_the_client_uses_no_private_attribute_of_pygls() -> None:
    """pygls is driven through its public API (issue 25): no ``obj._name`` but on ``self``."""
    import ast
    import inspect

    from opencode_cli.lsp import client

    tree = ast.parse(inspect.getsource(client))
    private = [
        f"{ast.unparse(node)} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert private == []
