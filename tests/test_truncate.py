"""Output truncation (core spec §2; checklist §11.1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opencode_cli import truncate
from opencode_cli.agents import Agent
from opencode_cli.errors import ConfigError
from opencode_cli.permission import Rule
from opencode_cli.truncate import (
    HINT_PLAIN,
    HINT_TASK,
    MAX_BYTES,
    MAX_LINES,
    Truncator,
    cleanup,
    schedule_cleanup,
)

DAY = 24 * 3600
SPILL_NAME = re.compile(r"^tool_[0-9a-f]{12}[0-9A-Za-z]{14}$")


@pytest.fixture
def truncator(tmp_path: Path) -> Truncator:
    return Truncator(tmp_path / "out")


def lines(n: int) -> str:
    return "\n".join(f"line{i}" for i in range(n))


def spill_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("tool_*")) if directory.is_dir() else []


# -- the cases of §11.1 ----------------------------------------------------------------------------------


def test_truncates_large_json_by_bytes(truncator: Truncator) -> None:
    # a stand-in for models-api.json: one long line of JSON, far over 50 KiB
    data = {f"model-{i}": {"id": f"model-{i}", "limit": {"context": 128000 + i}} for i in range(2000)}
    text = json.dumps(data)
    assert text.count("\n") == 0 and len(text.encode()) > MAX_BYTES

    result = truncator.output(text)

    assert result.truncated is True
    assert "bytes truncated..." in result.content
    assert result.output_path is not None
    assert Path(result.output_path).read_text(encoding="utf-8") == text


def test_returns_content_unchanged_under_limits(truncator: Truncator) -> None:
    result = truncator.output("line1\nline2\nline3")

    assert result.truncated is False
    assert result.content == "line1\nline2\nline3"
    assert result.output_path is None
    assert spill_files(truncator.directory) == []


def test_truncates_by_line_count(truncator: Truncator) -> None:
    result = truncator.output(lines(100), max_lines=10)

    assert result.truncated is True
    assert "...90 lines truncated..." in result.content


def test_truncates_by_byte_count(truncator: Truncator) -> None:
    result = truncator.output("a" * 1000, max_bytes=100)

    assert result.truncated is True
    assert "truncated..." in result.content
    # the one line does not fit at all: nothing is kept, every byte is counted as removed
    hint = HINT_PLAIN.format(path=result.output_path)
    assert result.content == f"\n\n...1000 bytes truncated...\n\n{hint}"


def test_truncates_from_head_by_default(truncator: Truncator) -> None:
    result = truncator.output(lines(10), max_lines=3)

    assert result.truncated is True
    for kept in ("line0", "line1", "line2"):
        assert kept in result.content
    assert "line9" not in result.content
    hint = HINT_PLAIN.format(path=result.output_path)
    assert result.content == f"line0\nline1\nline2\n\n...7 lines truncated...\n\n{hint}"


def test_truncates_from_tail_when_direction_is_tail(truncator: Truncator) -> None:
    result = truncator.output(lines(10), max_lines=3, direction="tail")

    assert result.truncated is True
    for kept in ("line7", "line8", "line9"):
        assert kept in result.content
    assert "line0" not in result.content
    hint = HINT_PLAIN.format(path=result.output_path)
    assert result.content == f"...7 lines truncated...\n\n{hint}\n\nline7\nline8\nline9"


def test_default_limits_are_2000_lines_and_51200_bytes(tmp_path: Path) -> None:
    assert MAX_LINES == 2000
    assert MAX_BYTES == 51200
    plain = Truncator(tmp_path)
    assert (plain.max_lines, plain.max_bytes) == (2000, 51200)
    # exactly at the limits: untouched; one more line or byte: cut
    assert plain.output(lines(2000)).truncated is False
    assert plain.output(lines(2001)).truncated is True
    assert plain.output("x" * 51200).truncated is False
    assert plain.output("x" * 51201).truncated is True


def test_limits_without_config_are_the_constants(make_project) -> None:
    project = make_project()
    truncator = project.generation.truncator
    assert (truncator.max_lines, truncator.max_bytes) == (MAX_LINES, MAX_BYTES)


def test_limits_come_from_tool_output_config(make_project, project_dir: Path, write_file) -> None:
    write_file(project_dir / "opencode.toml", "[tool_output]\nmax_lines = 123\nmax_bytes = 456\n")

    project = make_project()

    assert (project.generation.truncator.max_lines, project.generation.truncator.max_bytes) == (123, 456)


def test_config_max_lines_applies(make_project, project_dir: Path, write_file) -> None:
    write_file(project_dir / "opencode.toml", "[tool_output]\nmax_lines = 10\nmax_bytes = 104857600\n")

    result = make_project().generation.truncator.output(lines(100))

    assert result.truncated is True
    assert "...90 lines truncated..." in result.content


def test_config_max_bytes_applies(make_project, project_dir: Path, write_file) -> None:
    write_file(project_dir / "opencode.toml", "[tool_output]\nmax_lines = 100000\nmax_bytes = 100\n")

    result = make_project().generation.truncator.output("a" * 1000)

    assert result.truncated is True
    assert "bytes truncated..." in result.content


def test_per_call_options_override_config(make_project, project_dir: Path, write_file) -> None:
    write_file(project_dir / "opencode.toml", "[tool_output]\nmax_lines = 10\nmax_bytes = 100\n")
    truncator = make_project().generation.truncator
    text = lines(50)

    assert truncator.output(text).truncated is True
    result = truncator.output(text, max_lines=1000, max_bytes=1024 * 1024)
    assert result.truncated is False
    assert result.content == text


@pytest.mark.parametrize("value", ["0", "-5", '"10"', "true", "1.5"])
def test_config_limits_must_be_positive_integers(make_project, project_dir: Path, write_file, value) -> None:
    write_file(project_dir / "opencode.toml", f"[tool_output]\nmax_lines = {value}\n")

    with pytest.raises(ConfigError, match=r"tool_output.max_lines"):
        _ = make_project().generation.truncator


def test_project_spill_directory_is_under_xdg_data_home(make_project, env: dict[str, str]) -> None:
    project = make_project()
    result = project.generation.truncator.output(lines(3000))

    expected = Path(env["XDG_DATA_HOME"]) / "opencode" / "tool-output"
    assert Path(result.output_path).parent == expected
    assert project.generation.truncator.glob == str(expected / "*")


def test_spill_directory_defaults_to_local_share(make_project, env: dict[str, str], home: Path) -> None:
    env_without_xdg = {k: v for k, v in env.items() if k != "XDG_DATA_HOME"}
    from opencode_cli.project import Project

    project = Project(make_project().directory, env=env_without_xdg, autoload_plugins=False)

    assert project.generation.truncator.directory == home / ".local" / "share" / "opencode" / "tool-output"


def test_large_single_line(truncator: Truncator) -> None:
    text = "x" * (MAX_BYTES + 5000)

    result = truncator.output(text)

    assert result.truncated is True
    assert "bytes truncated..." in result.content
    assert len(text.encode()) > MAX_BYTES


def test_writes_full_output_to_file(truncator: Truncator) -> None:
    text = lines(100)

    result = truncator.output(text, max_lines=10)

    assert "The tool call succeeded but the output was truncated" in result.content
    assert "Grep" in result.content
    assert "tool_" in result.output_path
    path = Path(result.output_path)
    assert path.parent == truncator.directory
    assert SPILL_NAME.match(path.name), path.name
    assert path.read_text(encoding="utf-8") == text


def test_each_truncation_gets_its_own_file(truncator: Truncator) -> None:
    first = truncator.output(lines(50), max_lines=5)
    second = truncator.output(lines(60), max_lines=5)

    assert first.output_path != second.output_path
    assert len(spill_files(truncator.directory)) == 2
    # ids sort by creation time
    assert sorted([first.output_path, second.output_path]) == [first.output_path, second.output_path]


def test_suggests_task_tool_when_agent_may_use_task(truncator: Truncator) -> None:
    agent = Agent("custom", "primary", permission=[Rule("task", "*", "allow")])

    result = truncator.output(lines(100), max_lines=10, task_capable=agent.task_capable)

    assert "Grep" in result.content
    assert "Task tool" in result.content
    assert result.content.endswith(HINT_TASK.format(path=result.output_path))


def test_omits_task_hint_when_task_is_denied(truncator: Truncator) -> None:
    agent = Agent("custom", "primary", permission=[Rule("task", "*", "deny")])

    result = truncator.output(lines(100), max_lines=10, task_capable=agent.task_capable)

    assert "Grep" in result.content
    assert "Task tool" not in result.content
    assert result.content.endswith(HINT_PLAIN.format(path=result.output_path))


def test_hint_texts_are_exact() -> None:
    assert HINT_TASK.format(path="/p") == (
        "The tool call succeeded but the output was truncated. Full output saved to: /p\n"
        "Use the Task tool to have explore agent process this file with Grep and Read (with offset/limit). "
        "Do NOT read the full file yourself - delegate to save context."
    )
    assert HINT_PLAIN.format(path="/p") == (
        "The tool call succeeded but the output was truncated. Full output saved to: /p\n"
        "Use Grep to search the full content or Read with offset/limit to view specific sections."
    )


def test_does_not_write_file_when_not_truncated(truncator: Truncator) -> None:
    result = truncator.output("small")

    assert result.output_path is None
    assert not truncator.directory.exists()


def test_loads_truncate_module_in_a_fresh_process(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "h"),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "PATH": os.environ.get("PATH", ""),
    }
    completed = subprocess.run(
        [sys.executable, "-c", "import opencode_cli.truncate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    # importing does nothing on disk
    assert not (tmp_path / "d").exists()
    assert not (tmp_path / "h").exists()


# -- line and byte accounting ------------------------------------------------------------------------------


def test_trailing_newline_counts_as_an_extra_line(truncator: Truncator) -> None:
    text = "a\nb\nc\n"  # four lines: a, b, c and ""

    assert truncator.output(text, max_lines=4).truncated is False
    result = truncator.output(text, max_lines=3)
    assert result.truncated is True
    assert result.content.startswith("a\nb\nc\n\n...1 lines truncated...")


def test_bytes_are_counted_in_utf8(truncator: Truncator) -> None:
    text = "é" * 60  # 60 characters, 120 bytes

    assert truncator.output(text, max_bytes=120).truncated is False
    result = truncator.output(text, max_bytes=119)
    assert result.truncated is True
    assert "...120 bytes truncated..." in result.content


def test_byte_limit_counts_separators_between_kept_lines(truncator: Truncator) -> None:
    # "aaaa" (4) + "\n" + "bbbb" (4) = 9 bytes; the third line would make it 14
    result = truncator.output("aaaa\nbbbb\ncccc", max_bytes=13)

    assert result.truncated is True
    assert result.content.startswith("aaaa\nbbbb\n\n...5 bytes truncated...")


def test_tail_byte_limit_keeps_the_last_lines(truncator: Truncator) -> None:
    result = truncator.output("aaaa\nbbbb\ncccc", max_bytes=9, direction="tail")

    assert result.truncated is True
    assert result.content.startswith("...5 bytes truncated...")
    assert result.content.endswith("\n\nbbbb\ncccc")


multiline_text = st.lists(st.text(max_size=30), min_size=0, max_size=60).map("\n".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=multiline_text,
    max_lines=st.integers(min_value=1, max_value=40),
    max_bytes=st.integers(min_value=1, max_value=400),
    direction=st.sampled_from(["head", "tail"]),
)
def test_preview_respects_limits_and_file_keeps_everything(
    truncator: Truncator, text: str, max_lines: int, max_bytes: int, direction: str
) -> None:
    result = truncator.output(text, max_lines=max_lines, max_bytes=max_bytes, direction=direction)
    all_lines = text.split("\n")
    fits = len(all_lines) <= max_lines and len(text.encode()) <= max_bytes

    if fits:
        assert result.truncated is False
        assert result.content == text
        assert result.output_path is None
        return

    assert result.truncated is True
    hint = HINT_PLAIN.format(path=result.output_path)
    if direction == "head":
        assert result.content.endswith("\n\n" + hint)
        preview, marker = result.content[: -len(hint) - 2].rsplit("\n\n", 1)
    else:
        marker, rest = result.content.split("\n\n", 1)
        assert rest.startswith(hint + "\n\n")
        preview = rest[len(hint) + 2 :]
    found = re.fullmatch(r"\.\.\.(\d+) (lines|bytes) truncated\.\.\.", marker)
    assert found is not None, marker
    kept = preview.split("\n")
    assert len(kept) <= max_lines
    assert len(preview.encode("utf-8")) <= max_bytes
    if preview:
        assert kept == (all_lines[: len(kept)] if direction == "head" else all_lines[-len(kept) :])
    removed, unit = int(found.group(1)), found.group(2)
    if unit == "lines":
        assert removed == len(all_lines) - len(kept)
    else:
        assert removed == len(text.encode()) - len(preview.encode())
    with open(result.output_path, encoding="utf-8", newline="") as handle:
        assert handle.read() == text


# -- cleanup -----------------------------------------------------------------------------------------------


def age(path: Path, days: float) -> None:
    stamp = time.time() - days * DAY
    os.utime(path, (stamp, stamp))


def test_cleanup_removes_files_older_than_seven_days(tmp_path: Path) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    old = directory / "tool_old"
    recent = directory / "tool_recent"
    other = directory / "notes.txt"
    for path in (old, recent, other):
        path.write_text("x")
    age(old, 10)
    age(recent, 3)
    age(other, 30)

    removed = cleanup(directory)

    assert removed == [old]
    assert not old.exists()
    assert recent.exists()
    assert other.exists()  # only tool_* files are swept


def test_cleanup_boundary_is_seven_days(tmp_path: Path) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    just_over = directory / "tool_a"
    just_under = directory / "tool_b"
    just_over.write_text("x")
    just_under.write_text("x")
    now = time.time()
    os.utime(just_over, (now - 7 * DAY - 60, now - 7 * DAY - 60))
    os.utime(just_under, (now - 7 * DAY + 60, now - 7 * DAY + 60))

    cleanup(directory, now=now)

    assert not just_over.exists()
    assert just_under.exists()


def test_cleanup_swallows_errors(tmp_path: Path) -> None:
    assert cleanup(tmp_path / "missing") == []
    directory = tmp_path / "out"
    stuck = directory / "tool_dir"  # a directory cannot be unlinked: skipped, not raised
    stuck.mkdir(parents=True)
    old = directory / "tool_zzz"
    old.write_text("x")
    age(stuck, 10)
    age(old, 10)

    assert cleanup(directory) == [old]
    assert stuck.is_dir()


def test_schedule_cleanup_runs_in_a_thread_at_most_hourly(tmp_path: Path) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    old = directory / "tool_old"
    old.write_text("x")
    age(old, 10)

    thread = schedule_cleanup(directory)

    assert isinstance(thread, threading.Thread)
    assert thread is not threading.current_thread()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert not old.exists()

    # a second sweep within the hour is not started
    second_old = directory / "tool_old2"
    second_old.write_text("x")
    age(second_old, 10)
    assert schedule_cleanup(directory) is None
    assert second_old.exists()

    # once the stamp is over an hour old, it runs again
    stamps = [p for p in directory.iterdir() if not p.name.startswith("tool_")]
    assert stamps, "the schedule is kept in a stamp file in the directory"
    for stamp in stamps:
        age(stamp, 2 / 24)
    thread = schedule_cleanup(directory)
    assert thread is not None
    thread.join(timeout=60)
    assert not second_old.exists()


def test_schedule_cleanup_creates_a_missing_directory(tmp_path: Path) -> None:
    directory = tmp_path / "not" / "yet"
    thread = schedule_cleanup(directory)
    assert thread is not None
    thread.join(timeout=60)
    assert directory.is_dir()


def test_truncating_triggers_the_sweep(truncator: Truncator) -> None:
    truncator.directory.mkdir(parents=True)
    old = truncator.directory / "tool_old"
    old.write_text("x")
    age(old, 10)

    result = truncator.output(lines(100), max_lines=10)

    deadline = time.monotonic() + 60
    while old.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not old.exists()
    assert Path(result.output_path).exists()  # the fresh spill file is kept


def test_ascending_ids_are_unique_and_ordered() -> None:
    ids = [truncate.ascending_id("tool") for _ in range(500)]
    assert len(set(ids)) == 500
    prefixes = [i[:17] for i in ids]  # "tool_" + 12 hex digits
    assert prefixes == sorted(prefixes)
    assert all(SPILL_NAME.match(i) for i in ids)
