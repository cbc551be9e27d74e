"""The console script starts with the cyclic garbage collector off; work that may go on for a while turns it
back on, with what start-up built frozen out of its sweeps."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from opencode_cli.cli.common import collect_from_now_on, run_in_project


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector as ``opencode_cli.cli.main`` leaves it at start; as it was, afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()


def test_collect_from_now_on_freezes_what_start_up_built(collector_off: None) -> None:
    built_at_start = [[] for _ in range(100)]
    collect_from_now_on()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built_at_start)


def test_collect_from_now_on_leaves_a_running_collector_alone() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    collect_from_now_on()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_command_s_async_work_runs_with_the_collector_on(collector_off: None, make_project) -> None:
    project = make_project()
    seen = []

    async def work() -> str:
        seen.append(gc.isenabled())
        return "done"

    assert run_in_project(project, work) == "done"
    assert seen == [True]
