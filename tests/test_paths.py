"""``paths.tmp_dir``: the system temporary directory as Node's ``os.tmpdir()`` finds it, plus ``opencode``."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencode_cli import paths


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "/tmp/opencode"),
        ({"TMPDIR": "/var/scratch"}, "/var/scratch/opencode"),
        ({"TMPDIR": "/var/scratch/"}, "/var/scratch/opencode"),
        ({"TMP": "/a", "TEMP": "/b"}, "/a/opencode"),
        ({"TEMP": "/b"}, "/b/opencode"),
        ({"TMPDIR": "", "TMP": "/a"}, "/a/opencode"),
        ({"TMPDIR": "/first", "TMP": "/a", "TEMP": "/b"}, "/first/opencode"),
        ({"TMPDIR": "/"}, "/opencode"),
    ],
)
def test_tmp_dir_reads_the_variables_in_nodes_order(env: dict[str, str], expected: str) -> None:
    assert paths.tmp_dir(env) == Path(expected)


def test_tmp_dir_probes_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "not-there"
    assert paths.tmp_dir({"TMPDIR": str(missing)}) == missing / "opencode"
    assert not missing.exists()
