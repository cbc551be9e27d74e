"""Diagnostics after edit, write and apply_patch (builtin spec §1.9, §6.1 step 10, §7, §8.3): the block
format, then ty on a real project: an edit that breaks a name gets the block, one that fixes it none."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli.lsp.diagnostics import Report, block
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def diagnostic(line: int, character: int, message: str, severity: int = 1) -> dict[str, Any]:
    position = {"line": line, "character": character}
    return {"range": {"start": position, "end": position}, "message": message, "severity": severity}


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def tools(project: Project, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async with project, project.session() as session:
        return [await session.execute(tool, dict(args)) for tool, args in calls]


# -- the block ------------------------------------------------------------------------------------------


def test_block_shows_errors_only_one_based() -> None:
    items = [diagnostic(0, 0, "first"), diagnostic(4, 2, "a warning", 2), diagnostic(9, 11, "second")]
    assert block("/p/a.py", items) == (
        '<diagnostics file="/p/a.py">\nERROR [1:1] first\nERROR [10:12] second\n</diagnostics>'
    )
    assert block("/p/a.py", [diagnostic(0, 0, "hint", 4)]) == ""


def test_block_keeps_twenty_and_counts_the_rest() -> None:
    text = block("/p/a.py", [diagnostic(n, 0, f"e{n}") for n in range(23)])
    lines = text.splitlines()
    assert lines[1] == "ERROR [1:1] e0" and lines[20] == "ERROR [20:1] e19"
    assert lines[21:] == ["... and 3 more", "</diagnostics>"]


@settings(max_examples=50)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**4), st.text(), st.integers(1, 4))))
def test_block_holds_at_most_twenty_errors_whatever_the_server_sends(raw: list[Any]) -> None:
    items = [diagnostic(*entry) for entry in raw]
    errors = sum(1 for entry in raw if entry[3] == 1)
    text = block("/f", items)
    if not errors:
        assert text == ""
        return
    assert text.startswith('<diagnostics file="/f">\n') and text.endswith("\n</diagnostics>")
    assert text.count("\nERROR [") == min(errors, 20)
    assert (f"\n... and {errors - 20} more\n" in text) == (errors > 20)


def test_write_shows_five_other_files_each_with_its_header() -> None:
    report = Report({f"/p/{n}.py": [diagnostic(0, 0, f"bad {n}")] for n in range(8)})
    report.files["/p/clean.py"] = [diagnostic(0, 0, "only a warning", 2)]
    text = report.for_write("/p/0.py")
    assert text.startswith('\n\nLSP errors detected in this file, please fix:\n<diagnostics file="/p/0.py">')
    assert text.count("\n\nLSP errors detected in other files:\n") == 5
    assert "/p/6.py" not in text and "clean" not in text
    assert report.for_patch([("/p/1.py", "1.py"), ("/p/clean.py", "clean.py")]) == (
        '\n\nLSP errors detected in 1.py, please fix:\n<diagnostics file="/p/1.py">\nERROR [1:1] bad 1\n'
        "</diagnostics>"
    )
    assert Report().for_edit("/p/0.py") == ""


# -- with ty --------------------------------------------------------------------------------------------


def test_an_edit_that_breaks_a_name_gets_the_block_and_the_fix_gets_none(
    make_project: ProjectFactory, ty_project: Path
) -> None:
    main = str(ty_project / "main.py")
    broken, fixed = run(
        tools(
            make_project(),
            ("edit", {"filePath": main, "oldString": 'greet("you")', "newString": 'gret("you")'}),
            ("edit", {"filePath": main, "oldString": 'gret("you")', "newString": 'greet("you")'}),
        )
    )
    assert broken.output == (
        "Edit applied successfully.\n\nLSP errors detected in this file, please fix:\n"
        f'<diagnostics file="{main}">\nERROR [3:7] Name `gret` used when not defined\n</diagnostics>'
    )
    [item] = broken.metadata["diagnostics"][main]
    assert item["severity"] == 1 and item["range"]["start"] == {"line": 2, "character": 6}
    assert fixed.output == "Edit applied successfully."
    assert fixed.metadata["diagnostics"] == {}


def test_write_reports_the_file_and_other_files_it_broke(
    make_project: ProjectFactory, ty_project: Path
) -> None:
    main, lib = str(ty_project / "main.py"), str(ty_project / "pkg" / "lib.py")
    renamed = (ty_project / "pkg" / "lib.py").read_text().replace("greet", "hello")
    opened, written = run(
        tools(
            make_project(),
            ("edit", {"filePath": main, "oldString": "print(greet", "newString": "print( greet"}),
            ("write", {"filePath": lib, "content": renamed + "\nundefined_name\n"}),
        )
    )
    assert opened.output == "Edit applied successfully."
    assert written.output.startswith(
        "Wrote file successfully.\n\nLSP errors detected in this file, please fix:\n"
        f'<diagnostics file="{lib}">\nERROR [10:1] Name `undefined_name` used when not defined\n'
        "</diagnostics>"
        "\n\nLSP errors detected in other files:\n"
        f'<diagnostics file="{main}">\nERROR [1:'
    )
    assert "greet" in written.output.split("other files:")[1]
    assert set(written.metadata["diagnostics"]) == {lib, main}


def test_apply_patch_reports_each_target_with_errors(make_project: ProjectFactory, ty_project: Path) -> None:
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: extra.py",
            "+value = missing_thing",
            "*** Add File: clean.py",
            "+value = 1",
            "*** Delete File: pkg/__init__.py",
            "*** End Patch",
        ]
    )
    [result] = run(tools(make_project(), ("apply_patch", {"patchText": patch})))
    extra = str(ty_project / "extra.py")
    assert result.output == (
        "Success. Updated the following files:\nA extra.py\nA clean.py\nD pkg/__init__.py"
        "\n\nLSP errors detected in extra.py, please fix:\n"
        f'<diagnostics file="{extra}">\nERROR [1:9] Name `missing_thing` used when not defined\n'
        "</diagnostics>"
    )
    assert result.title == result.output
    assert list(result.metadata["diagnostics"]) == [extra]


def test_no_server_no_wait_and_no_pygls(ty_project: Path, env: dict[str, str]) -> None:
    """A file no server handles: the output as before, and pygls is never imported (a real process)."""
    script = (
        "import sys\n"
        "from opencode_cli.project import Project\n"
        "with Project(sys.argv[1]) as project:\n"
        "    result = project.run_tool('write', {'filePath': 'notes.txt', 'content': 'hi'})\n"
        "    args = {'filePath': 'notes.txt', 'oldString': 'hi', 'newString': 'ho'}\n"
        "    edit = project.run_tool('edit', args)\n"
        "loaded = 'pygls' in sys.modules or 'lsprotocol' in sys.modules\n"
        "print(repr(result.output), repr(edit.output), result.metadata['diagnostics'], loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(ty_project)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "'Wrote file successfully.' 'Edit applied successfully.' {} False", (
        done.stderr
    )


def test_a_broken_lsp_table_never_fails_an_edit(
    make_project: ProjectFactory, project_dir: Path, warnings: list[str]
) -> None:
    (project_dir / "opencode.toml").write_text('[lsp.mine]\ncommand = "not-a-list"\nextensions = [".py"]\n')
    code = project_dir / "a.py"
    code.write_text("x = 1\n")
    project = make_project(extra_env={"OPENCODE_EXPERIMENTAL_LSP_TOOL": "1"})

    async def main() -> tuple[Any, Any]:
        async with project, project.session() as session:
            edited = await session.execute(
                "edit", {"filePath": str(code), "oldString": "1", "newString": "2"}
            )
            try:
                await session.execute(
                    "lsp", {"operation": "hover", "filePath": str(code), "line": 1, "character": 1}
                )
            except Exception as error:
                return edited, error
            return edited, None

    edited, error = run(main())
    assert edited.output == "Edit applied successfully." and code.read_text() == "x = 2\n"
    assert any("lsp.mine.command must be a non-empty list" in w for w in warnings)
    assert str(error).startswith("The language server configuration is invalid: lsp.mine.command")


def test_a_deleted_file_no_longer_shows_in_other_files(
    make_project: ProjectFactory, ty_project: Path
) -> None:
    broken = ty_project / "broken.py"
    patch = "*** Begin Patch\n*** Delete File: broken.py\n*** End Patch"
    first, deleted, written = run(
        tools(
            make_project(),
            ("write", {"filePath": str(broken), "content": "value = nowhere\n"}),
            ("apply_patch", {"patchText": patch}),
            ("write", {"filePath": str(ty_project / "fine.py"), "content": "value = 1\n"}),
        )
    )
    assert "nowhere" in first.output
    assert deleted.output == "Success. Updated the following files:\nD broken.py"
    assert written.output == "Wrote file successfully." and written.metadata["diagnostics"] == {}
