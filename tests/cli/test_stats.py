"""``opencode stats``: the figures of scripted runs, counted from the store as the runs left it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "models"))
from _scripted import ScriptedModel, call, configure, local_config, opencode


@pytest.fixture
def scripted_model(tmp_path: Path) -> Any:
    server = ScriptedModel(tmp_path / "scripted")
    try:
        yield server
    finally:
        server.stop()


def test_stats_count_what_scripted_runs_did(
    project_dir: Path, scripted_model: ScriptedModel, env: dict[str, str], tmp_path: Path
) -> None:
    (project_dir / "notes.txt").write_text("one\n")
    config = local_config(scripted_model.url)
    config["provider"]["local"]["models"] = {"scripted-model": {"cost": {"input": 2.0, "output": 10.0}}}
    configure(project_dir, config)
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    scripted_model.script(
        [
            # run 1: a read that works, a read with bad arguments, a bash call a --deny rule refuses
            {
                "tool_calls": [
                    call("c1", "read", filePath="notes.txt"),
                    call("c2", "read", offset=3),
                    call("c3", "bash", command="ls", description="list"),
                ],
                "usage": usage,
            },
            {"text": "done", "usage": usage},
            # run 2: the same read three times in a row: the doom-loop guard refuses the third
            {"tool_calls": [call("d1", "read", filePath="notes.txt")], "usage": usage},
            {"tool_calls": [call("d2", "read", filePath="notes.txt")], "usage": usage},
            {"tool_calls": [call("d3", "read", filePath="notes.txt")], "usage": usage},
        ]
    )
    first = opencode(project_dir, env, "run", "first", "--deny", "bash=ls", "--allow", "read")
    assert first.returncode == 0, first.stderr
    second = opencode(project_dir, env, "run", "second")
    assert second.returncode == 3, second.stderr  # stopped by the doom-loop guard

    done = opencode(project_dir, env, "stats", "--json", "--project", ".")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    read, bash = figures["tools"]["read"], figures["tools"]["bash"]
    assert (read["calls"], read["errors"], read["invalid_arguments"], read["doom_loop"]) == (5, 2, 1, 1)
    assert (bash["calls"], bash["errors"], bash["refused"]) == (1, 1, 1)
    assert read["median_ms"] is not None and read["p95_ms"] >= read["median_ms"]
    [model] = figures["models"].values()
    assert model["steps"] == 5 and model["tokens"]["input"] == 5000 and model["tokens"]["output"] == 500
    assert model["cost"] == pytest.approx(5 * (1000 * 2.0 + 100 * 10.0) / 1e6)

    only_tools = json.loads(opencode(project_dir, env, "stats", "--tools", "--json").stdout)
    assert set(only_tools) == {"scope", "tools"} and only_tools["scope"]["project"] is None
    elsewhere = json.loads(opencode(project_dir, env, "stats", "--json", "--project", str(tmp_path)).stdout)
    assert elsewhere["tools"] == {} and elsewhere["models"] == {}
    text = opencode(project_dir, env, "stats", "--days", "1")
    assert text.returncode == 0 and "read" in text.stdout and "█" in text.stdout
    bad = opencode(project_dir, env, "stats", "--days", "0")
    assert bad.returncode == 2 and "--days" in bad.stderr


def test_percentiles_are_nearest_rank() -> None:
    from opencode_cli.stats import percentile

    assert percentile([], 50) is None
    assert percentile([5], 95) == 5
    assert percentile(list(range(1, 101)), 50) == 50 and percentile(list(range(1, 101)), 95) == 95


def test_the_bytes_cut_are_read_from_the_spilled_file_never_through_a_link(tmp_path: Path) -> None:
    from opencode_cli.stats import _cut

    spilled = tmp_path / "tool_1"
    spilled.write_text("x" * 1000)
    assert _cut(str(spilled), "x" * 100) == 900
    planted = tmp_path / "tool_2"
    planted.symlink_to(spilled)  # a command replaced the spill file with a link
    assert _cut(str(planted), "") == 0 and _cut(str(tmp_path / "gone"), "") == 0
