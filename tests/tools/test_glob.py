"""The built-in ``glob`` tool (builtin-tools spec §4; test list "glob.test.ts" in §17) and the ripgrep lookup.

Every test runs the real ``rg`` (from the ``ripgrep`` package) on real files under ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness, Recorder

from opencode_cli import Project
from opencode_cli.context import AbortSignal
from opencode_cli.errors import AbortedError, DeniedError, InvalidArgumentsError, ToolError
from opencode_cli.tools import _ripgrep
from opencode_cli.tools import glob as glob_module

NOTICE = "(Results are truncated: showing first 100 results. Consider using a more specific path or pattern.)"


# -- helpers -------------------------------------------------------------------------------------------


@pytest.fixture
def harness(project: Project) -> Harness:
    return Harness(project, "glob", env=True)


def touch(*paths: Path, text: str = "x\n") -> None:
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def glob(project: Project, args: dict[str, Any], prompt: Recorder | None = None) -> Any:
    return project.run_tool("glob", args, prompt=prompt or Recorder())


def listed(result: Any) -> set[str]:
    return set(result.output.split("\n")) - {"", NOTICE}


# -- glob.test.ts --------------------------------------------------------------------------------------


def test_matches_files_from_a_directory_path(project: Project, root: Path) -> None:
    (root / "a.ts").write_text("export const a = 1\n")
    (root / "b.txt").write_text("hello\n")
    result = glob(project, {"pattern": "*.ts", "path": str(root)})
    assert result.metadata == {"count": 1, "truncated": False}
    assert str(root / "a.ts") in result.output
    assert str(root / "b.txt") not in result.output


def test_rejects_exact_file_paths(project: Project, root: Path) -> None:
    (root / "a.ts").write_text("export const a = 1\n")
    with pytest.raises(ToolError) as caught:
        glob(project, {"pattern": "*.ts", "path": str(root / "a.ts")})
    assert str(caught.value) == f"glob path must be a directory: {root / 'a.ts'}"


# -- output format --------------------------------------------------------------------------------------


def test_one_result_is_exactly_its_absolute_path(project: Project, root: Path) -> None:
    touch(root / "src" / "main.py")
    result = glob(project, {"pattern": "*.py"})
    assert result.output == str(root / "src" / "main.py")
    assert result.title == ""
    assert result.metadata == {"count": 1, "truncated": False}


def test_several_results_one_absolute_path_a_line(project: Project, root: Path) -> None:
    names = ["a.py", "b/c.py", "b/d/e.py"]
    touch(*(root / n for n in names))
    result = glob(project, {"pattern": "*.py"})
    lines = result.output.split("\n")
    assert sorted(lines) == sorted(str(root / n) for n in names)
    assert result.metadata == {"count": 3, "truncated": False}


def test_no_match_says_no_files_found(project: Project, root: Path) -> None:
    touch(root / "a.txt")
    result = glob(project, {"pattern": "*.rs"})
    assert result.output == "No files found"
    assert result.metadata == {"count": 0, "truncated": False}


def test_empty_directory(project: Project, root: Path) -> None:
    (root / "empty").mkdir()
    result = glob(project, {"pattern": "*", "path": "empty"})
    assert result.output == "No files found"
    assert result.title == "empty"


def test_title_is_relative_to_the_worktree(project: Project, root: Path) -> None:
    touch(root / "pkg" / "sub" / "m.py")
    result = glob(project, {"pattern": "*.py", "path": "pkg/sub"})
    assert result.title == "pkg/sub"
    assert result.output == str(root / "pkg" / "sub" / "m.py")


def test_relative_path_is_resolved_against_the_project(project: Project, root: Path) -> None:
    touch(root / "one" / "x.md", root / "two" / "y.md")
    result = glob(project, {"pattern": "*.md", "path": "one"})
    assert result.output == str(root / "one" / "x.md")


def test_no_generic_truncation(project: Project, root: Path) -> None:
    touch(root / "a.py")
    result = glob(project, {"pattern": "*.py"})
    assert "outputPath" not in result.metadata


# -- glob semantics (ripgrep's --glob) ------------------------------------------------------------------


def test_pattern_without_slash_matches_at_any_depth(project: Project, root: Path) -> None:
    touch(root / "a.ts", root / "src" / "b.ts", root / "src" / "deep" / "er" / "c.ts", root / "d.tsx")
    result = glob(project, {"pattern": "*.ts"})
    assert listed(result) == {str(root / "a.ts"), str(root / "src/b.ts"), str(root / "src/deep/er/c.ts")}


def test_double_star_and_anchored_patterns(project: Project, root: Path) -> None:
    touch(root / "src" / "a.ts", root / "src" / "x" / "b.ts", root / "lib" / "c.ts")
    result = glob(project, {"pattern": "src/**/*.ts"})
    assert listed(result) == {str(root / "src/a.ts"), str(root / "src/x/b.ts")}


def test_brace_alternatives(project: Project, root: Path) -> None:
    touch(root / "a.ts", root / "b.tsx", root / "c.js")
    result = glob(project, {"pattern": "*.{ts,tsx}"})
    assert listed(result) == {str(root / "a.ts"), str(root / "b.tsx")}


def test_invalid_glob_is_an_error_with_ripgreps_message(project: Project, root: Path) -> None:
    touch(root / "a.ts")
    with pytest.raises(ToolError) as caught:
        glob(project, {"pattern": "src/{a,b"})
    assert "error parsing glob" in str(caught.value)
    assert "src/{a,b" in str(caught.value)


# -- hidden files and ignore files ---------------------------------------------------------------------


def test_hidden_directories_are_not_searched(project: Project, root: Path) -> None:
    touch(root / "a.ts", root / ".hidden" / "b.ts", root / "src" / ".cache" / "c.ts")
    result = glob(project, {"pattern": "*.ts"})
    assert listed(result) == {str(root / "a.ts")}


def test_gitignored_directories_are_not_searched(project: Project, root: Path) -> None:
    (root / ".gitignore").write_text("build/\nnode_modules/\n*.log\n")
    touch(root / "a.js", root / "build" / "b.js", root / "node_modules" / "x" / "c.js", root / "d.log")
    result = glob(project, {"pattern": "**/*.js"})
    assert listed(result) == {str(root / "a.js")}
    assert glob(project, {"pattern": "*.txt"}).output == "No files found"


def test_ignore_and_rgignore_files_are_honoured(project: Project, root: Path) -> None:
    (root / ".ignore").write_text("generated/\n")
    (root / ".rgignore").write_text("vendor/\n")
    touch(root / "a.go", root / "generated" / "b.go", root / "vendor" / "c.go")
    result = glob(project, {"pattern": "*.go"})
    assert listed(result) == {str(root / "a.go")}


def test_pattern_naming_a_hidden_or_ignored_file_lists_it(project: Project, root: Path) -> None:
    """Pinned ripgrep behaviour (upstream runs the same command): a ``--glob`` that matches a path
    whitelists it over the hidden and ignore rules; only directories the pattern does not match are
    pruned."""
    (root / ".gitignore").write_text("secret.ts\nout/\n")
    touch(root / "a.ts", root / ".b.ts", root / "secret.ts", root / "out" / "c.ts")
    result = glob(project, {"pattern": "*.ts"})
    assert listed(result) == {str(root / "a.ts"), str(root / ".b.ts"), str(root / "secret.ts")}
    touch(root / "src" / ".eslintrc", root / "src" / "main.c")
    result = glob(project, {"pattern": "src/**"})
    assert listed(result) == {str(root / "src" / ".eslintrc"), str(root / "src" / "main.c")}


def test_git_directory_is_never_listed(project: Project, root: Path) -> None:
    touch(root / ".git" / "config", root / ".git" / "objects" / "ab" / "cd", root / "a.txt")
    for pattern in ("*", "**/*", "**", ".git/**", "config"):
        result = glob(project, {"pattern": pattern})
        assert not any("/.git/" in line for line in result.output.split("\n")), pattern


def test_gitignore_outside_a_git_repository_is_not_used(tmp_path: Path, env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    touch(plain / "a.log", plain / "b.txt")
    (plain / ".gitignore").write_text("*.log\n")
    project = Project(plain, env=env, autoload_plugins=False)
    result = glob(project, {"pattern": "*.log"})
    assert result.output == str(plain / "a.log")


def test_symlinked_directories_are_not_followed(project: Project, root: Path, outer: Path) -> None:
    touch(outer / "lib" / "x.py", root / "a.py")
    (root / "linked").symlink_to(outer / "lib", target_is_directory=True)
    result = glob(project, {"pattern": "*.py"})
    assert listed(result) == {str(root / "a.py")}


def test_user_ripgrep_config_is_ignored(make_project: Any, root: Path, tmp_path: Path) -> None:
    config = tmp_path / "ripgreprc"
    config.write_text("--hidden\n--no-ignore\n")
    project = make_project(extra_env={"RIPGREP_CONFIG_PATH": str(config)})
    (root / ".gitignore").write_text("ignored/\n")
    touch(root / "a.md", root / ".hidden" / "b.md", root / "ignored" / "c.md")
    result = glob(project, {"pattern": "*.md"})
    assert listed(result) == {str(root / "a.md")}


# -- the 100-result limit ------------------------------------------------------------------------------


def make_files(folder: Path, count: int) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (folder / f"file{index:04d}.txt").write_text("x")
    return [str(folder / f"file{index:04d}.txt") for index in range(count)]


def test_99_results_are_not_truncated(project: Project, root: Path) -> None:
    make_files(root / "many", 99)
    result = glob(project, {"pattern": "*.txt"})
    assert result.metadata == {"count": 99, "truncated": False}
    assert NOTICE not in result.output
    assert len(result.output.split("\n")) == 99


def test_exactly_100_results_are_flagged_truncated(project: Project, root: Path) -> None:
    """Upstream flags ``count == 100`` (it cannot tell exactly 100 from more): kept as is."""
    files = make_files(root / "many", 100)
    result = glob(project, {"pattern": "*.txt"})
    assert result.metadata == {"count": 100, "truncated": True}
    lines = result.output.split("\n")
    assert sorted(lines[:100]) == sorted(files)
    assert lines[100:] == ["", NOTICE]


def test_more_than_100_results_show_the_first_100(project: Project, root: Path) -> None:
    files = make_files(root / "many", 250)
    result = glob(project, {"pattern": "*.txt"})
    assert result.metadata == {"count": 100, "truncated": True}
    lines = result.output.split("\n")
    assert len(lines) == 102
    assert set(lines[:100]) <= set(files)
    assert len(set(lines[:100])) == 100
    assert result.output.endswith("\n\n" + NOTICE)


# -- permissions and the external-directory guard ------------------------------------------------------


def test_asks_glob_with_the_pattern(harness: Harness, root: Path) -> None:
    touch(root / "a.py")
    harness.run({"pattern": "*.py", "path": "."})
    [request] = harness.requests
    assert request.permission == "glob"
    assert request.patterns == ["*.py"]
    assert request.always == ["*"]
    assert request.metadata == {"pattern": "*.py", "path": "."}


def test_ask_metadata_leaves_out_a_missing_path(harness: Harness, root: Path) -> None:
    harness.run({"pattern": "*.py"})
    assert harness.requests[0].metadata == {"pattern": "*.py"}


def test_outside_directory_asks_external_directory_after_glob(harness: Harness, outer: Path) -> None:
    touch(outer / "a.py")
    result = harness.run({"pattern": "*.py", "path": str(outer)})
    assert [r.permission for r in harness.requests] == ["glob", "external_directory"]
    external = harness.requests[1]
    assert external.patterns == [f"{outer}/*"]
    assert external.always == [f"{outer}/*"]
    assert external.metadata == {"filepath": str(outer), "parentDir": str(outer)}
    assert result.output == str(outer / "a.py")


def test_outside_directory_through_the_session_asks_the_user(project: Project, outer: Path) -> None:
    touch(outer / "a.py")
    prompt = Recorder()
    result = glob(project, {"pattern": "*.py", "path": str(outer)}, prompt)
    assert [r.patterns for r in prompt.asked("external_directory")] == [[f"{outer}/*"]]
    assert result.output == str(outer / "a.py")


def test_rejected_external_directory_stops_before_listing(project: Project, outer: Path) -> None:
    touch(outer / "a.py")
    with pytest.raises(ToolError, match="rejected permission"):
        glob(project, {"pattern": "*.py", "path": str(outer)}, Recorder("reject"))


def test_inside_directory_asks_no_external_directory(harness: Harness, root: Path) -> None:
    touch(root / "sub" / "a.py")
    harness.run({"pattern": "*.py", "path": str(root / "sub")})
    assert [r.permission for r in harness.requests] == ["glob"]


def test_glob_is_asked_before_the_directory_check(project: Project, root: Path, write_file: Any) -> None:
    write_file(root / "opencode.toml", '[permission]\nglob = "deny"\n')
    (root / "a.ts").write_text("x")
    with pytest.raises(DeniedError):
        glob(project, {"pattern": "*.ts", "path": "a.ts"})


def test_file_check_comes_before_the_external_directory_ask(harness: Harness, outer: Path) -> None:
    touch(outer / "a.py")
    with pytest.raises(ToolError, match="glob path must be a directory"):
        harness.run({"pattern": "*.py", "path": str(outer / "a.py")})
    assert [r.permission for r in harness.requests] == ["glob"]


# -- errors and validation -----------------------------------------------------------------------------


def test_missing_directory_fails_as_upstream(project: Project) -> None:
    with pytest.raises(ToolError) as caught:
        glob(project, {"pattern": "*", "path": "no/such/dir"})
    assert str(caught.value) == "ripgrep execution failed"


def test_pattern_is_required(project: Project) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        glob(project, {"path": "."})
    assert '["pattern"]' in str(caught.value)


def test_unknown_arguments_are_ignored(project: Project, root: Path) -> None:
    touch(root / "a.py")
    result = glob(project, {"pattern": "*.py", "sort": "mtime"})
    assert result.metadata["count"] == 1


def test_schema_names_and_required(project: Project) -> None:
    schema = project.registry.get("glob").tool.load().schema()
    assert list(schema["properties"]) == ["pattern", "path"]
    assert schema["required"] == ["pattern"]
    assert schema["properties"]["path"]["type"] == "string"


def test_description_is_read_from_the_text_file(project: Project) -> None:
    tool = project.registry.get("glob").tool
    text = (Path(glob_module.__file__).parent / "glob.txt").read_text()
    assert tool.description == text
    assert 400 < len(text) < 650
    assert "**/*.js" in text


def test_registered_after_read(project: Project) -> None:
    ids = list(project.registry.entries)
    assert ids.index("read") + 1 == ids.index("glob")
    assert ids.index("glob") + 1 == ids.index("grep")


def test_aborted_before_start(harness: Harness, root: Path) -> None:
    touch(root / "a.py")
    abort = AbortSignal()
    abort.abort()
    with pytest.raises(AbortedError):
        harness.run({"pattern": "*.py"}, abort=abort)


# -- finding and running ripgrep -----------------------------------------------------------------------


def fake_rg(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rg"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_find_prefers_the_package_directories(tmp_path: Path) -> None:
    package = fake_rg(tmp_path / "scripts")
    on_path = fake_rg(tmp_path / "usr-bin")
    found = _ripgrep.find([tmp_path / "empty", tmp_path / "scripts"], search_path=str(on_path.parent))
    assert found == str(package)


def test_find_falls_back_to_path(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    on_path = fake_rg(tmp_path / "usr-bin")
    search = os.pathsep.join([str(tmp_path / "nothing"), str(on_path.parent)])
    assert _ripgrep.find([tmp_path / "scripts"], search_path=search) == str(on_path)


def test_find_without_package_or_path_says_how_to_install(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "rg").write_text("not executable")
    with pytest.raises(ToolError) as caught:
        _ripgrep.find([tmp_path / "scripts"], search_path=str(tmp_path / "bin"))
    assert isinstance(caught.value, _ripgrep.RipgrepNotFoundError)
    message = str(caught.value)
    assert "pip install 'ripgrep>=14.1,<15'" in message
    assert "PATH" in message


def test_default_lookup_finds_the_package_binary_once() -> None:
    found = _ripgrep.binary()
    assert os.access(found, os.X_OK)
    in_scripts = Path(found).parent.as_posix() in {Path(d).as_posix() for d in _ripgrep.package_directories()}
    assert in_scripts or found == _ripgrep.recorded()  # the environment's own, or where the record says
    assert _ripgrep.binary() is found


def test_the_packages_record_finds_rg_for_an_environment_that_borrows_it(tmp_path: Path) -> None:
    """An environment whose ``bin/`` has no ``rg`` and whose ``sys.path`` borrows this one's packages (a
    ``.pth`` line, as the plugin tests build): with no ``rg`` on ``PATH`` either, the ``ripgrep`` package's
    installed record still says where its binary is."""
    import subprocess
    import sys
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    python = tmp_path / "env" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    borrowed = [
        path for path in sys.path if path.endswith("-packages") or path == sysconfig.get_path("purelib")
    ]
    borrowed.append(str(Path(_ripgrep.__file__).parents[2]))  # this checkout (an editable install)
    Path(site, "_borrowed.pth").write_text("".join(f"{path}\n" for path in dict.fromkeys(borrowed)))
    assert not (tmp_path / "env" / "bin" / "rg").exists()
    found = subprocess.run(
        [str(python), "-c", "from opencode_cli.tools import _ripgrep; print(_ripgrep.binary())"],
        capture_output=True,
        text=True,
        env={"PATH": str(tmp_path / "nothing"), "HOME": str(tmp_path)},
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == _ripgrep.recorded() and os.access(found.stdout.strip(), os.X_OK)


def test_run_stops_reading_and_kills_after_the_limit(tmp_path: Path) -> None:
    """Far more output than a pipe holds: ripgrep is still writing when the 101st path arrives."""
    folder = tmp_path / "tree"
    folder.mkdir()
    for index in range(6000):
        (folder / f"{'long-name-' * 8}{index:05d}.txt").write_text("")

    outcome = asyncio.run(_ripgrep.run(["--files", "."], cwd=str(folder), limit=100, parse=lambda line: line))
    assert outcome.truncated
    assert len(outcome.items) == 100
    assert outcome.killed
    assert outcome.code is None


def test_run_reports_exit_code_and_stderr(tmp_path: Path) -> None:
    outcome = asyncio.run(
        _ripgrep.run(["--files", "missing-dir"], cwd=str(tmp_path), limit=100, parse=lambda line: line)
    )
    assert outcome.code == 2
    assert "missing-dir" in outcome.stderr
    assert not outcome.killed
    assert _ripgrep.judge(outcome) == []


def test_judge_other_exit_codes() -> None:
    with pytest.raises(ToolError) as caught:
        _ripgrep.judge(_ripgrep.Outcome(code=3))
    assert str(caught.value) == "ripgrep failed with code 3"
    with pytest.raises(ToolError) as caught:
        _ripgrep.judge(_ripgrep.Outcome(code=101, stderr="  panicked  \n"))
    assert str(caught.value) == "panicked"
    assert _ripgrep.judge(_ripgrep.Outcome(items=["a"], code=1)) == []
    assert _ripgrep.judge(_ripgrep.Outcome(items=["a"], code=2, stderr="rg: ./x: Permission denied")) == ["a"]


def test_relative_path_normalisation() -> None:
    assert _ripgrep.relative_path("./a/b.txt") == "a/b.txt"
    assert _ripgrep.relative_path("././a") == "a"
    assert _ripgrep.relative_path(".\\a\\b") == "a/b"
    assert _ripgrep.relative_path("/a") == "a"
    assert _ripgrep.relative_path(".hidden/x") == ".hidden/x"


@pytest.mark.parametrize("system_site", [True, False])
def test_the_base_scripts_directory_is_searched_when_its_packages_are_used(
    tmp_path: Path, system_site: bool
) -> None:
    """A virtual environment made with ``--system-site-packages`` imports the base installation's
    packages, so the ``ripgrep`` package's ``rg`` may be in the base's scripts directory: it is looked for
    there before any installed record is read; an environment that does not use those packages does not
    look there."""
    import subprocess
    import sys
    import sysconfig

    options = ["--system-site-packages"] if system_site else []
    environment = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", *options, str(environment)], check=True)
    code = (
        "import sys; sys.path.append(sys.argv[1]); from opencode_cli.tools import _ripgrep; "
        "print('\\n'.join(_ripgrep.package_directories()))"
    )
    checkout = str(Path(_ripgrep.__file__).parents[2])
    listed = subprocess.run(
        [str(environment / "bin" / "python"), "-c", code, checkout],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    base = sysconfig.get_path("scripts", vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    assert (base in listed) is system_site
