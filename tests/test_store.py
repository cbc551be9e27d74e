"""The sqlite store: versioned schema, approvals, and two processes writing at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opencode_cli.store import MIGRATIONS, SCHEMA_VERSION, Store


def user_version(path: Path) -> int:
    connection = sqlite3.connect(path)
    try:
        return connection.execute("PRAGMA user_version").fetchone()[0]
    finally:
        connection.close()


def test_schema_version_is_set_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "data" / "opencode.db"
    store = Store(path)
    assert not path.exists()  # building a Store touches nothing
    assert store.approvals("ses_1") == []
    assert path.is_file()  # parents created
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 1
    assert user_version(path) == SCHEMA_VERSION
    connection = sqlite3.connect(path)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        connection.close()
    assert "permission_approval" in tables
    assert journal == "wal"


def test_reopening_does_not_migrate_again(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    Store(path).add_approvals("ses_1", [("read", "*")])
    # a second store (another process, in effect) finds the schema current and keeps the data
    again = Store(path)
    assert again.approvals("ses_1") == [("read", "*")]
    assert user_version(path) == SCHEMA_VERSION


def test_an_older_file_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    sqlite3.connect(path).close()  # an empty database at version 0
    assert user_version(path) == 0
    Store(path).add_approvals("ses_1", [("bash", "ls *")])
    assert user_version(path) == SCHEMA_VERSION
    assert Store(path).approvals("ses_1") == [("bash", "ls *")]


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE future (x)")
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    connection.commit()
    connection.close()
    store = Store(path)
    with pytest.raises(RuntimeError) as caught:
        store.approvals("ses_1")
    message = str(caught.value)
    assert str(path) in message
    assert f"schema version {SCHEMA_VERSION + 5}" in message
    assert f"newer than this opencode-tools's {SCHEMA_VERSION}" in message
    with pytest.raises(RuntimeError):  # refused every time, not just once
        store.add_approvals("ses_1", [("read", "*")])
    # and left untouched
    assert user_version(path) == SCHEMA_VERSION + 5
    connection = sqlite3.connect(path)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        connection.close()
    assert tables == {"future"}


def test_approvals_round_trip_in_order_and_duplicates_are_ignored(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    store.add_approvals("ses_1", [("external_directory", "/srv/data/*"), ("bash", "git *")])
    store.add_approvals("ses_1", [("read", "*.env"), ("bash", "git *")])  # duplicate ignored
    store.add_approvals("ses_1", [("bash", "git *")])
    store.add_approvals("ses_2", [("edit", "src/*")])
    store.add_approvals("ses_1", [])
    assert store.approvals("ses_1") == [
        ("external_directory", "/srv/data/*"),
        ("bash", "git *"),
        ("read", "*.env"),
    ]
    assert store.approvals("ses_2") == [("edit", "src/*")]
    assert store.approvals("ses_unknown") == []
    # the same pattern under another permission is a different approval
    store.add_approvals("ses_2", [("read", "src/*")])
    assert store.approvals("ses_2") == [("edit", "src/*"), ("read", "src/*")]


def test_unicode_and_odd_patterns_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    odd = [("read", "/home/zoë/日本/*"), ("bash", "echo 'a; b' \"c\""), ("read", "")]
    store.add_approvals("ses ü", odd)
    assert Store(store.path).approvals("ses ü") == odd


def test_a_failure_inside_a_connection_rolls_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    store.add_approvals("ses_1", [("read", "a")])
    with pytest.raises(sqlite3.IntegrityError), store.connect() as connection:
        connection.execute("INSERT INTO permission_approval VALUES ('ses_1', 'read', 'b', 0)")
        connection.execute("INSERT INTO permission_approval VALUES ('ses_1', 'read', 'a', 0)")
    assert store.approvals("ses_1") == [("read", "a")]


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from opencode_cli.store import Store

    path, worker, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    start = Path(sys.argv[4])
    while not start.exists():  # every writer starts at the same moment
        pass
    store = Store(path)
    for n in range(count):
        store.add_approvals(f"ses_{worker}", [("read", f"{worker}/{n}")])
        if n % 3 == 0:
            store.add_approvals("ses_shared", [("bash", f"{worker}-{n}"), ("bash", "common")])
        store.approvals(f"ses_{worker}")
    print("ok", worker)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("writers", [2, 4])
def test_processes_writing_at_once_lose_nothing(tmp_path: Path, writers: int) -> None:
    """Several real processes create the file and add 200 approvals each, at the same time."""
    path = tmp_path / "data" / "opencode.db"  # does not exist yet: they also race to create the schema
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    start = tmp_path / "go"
    count = 200
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), str(worker), str(count), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(writers)
    ]
    start.touch()
    outcomes = [(process.wait(timeout=120), *process.communicate()) for process in processes]
    for worker, (code, out, err) in enumerate(outcomes):
        assert (code, err) == (0, ""), f"writer {worker} failed:\n{err}"
        assert out.strip() == f"ok {worker}"
        assert "database is locked" not in err
    store = Store(path)
    for worker in range(writers):
        assert store.approvals(f"ses_{worker}") == [("read", f"{worker}/{n}") for n in range(count)]
    shared = store.approvals("ses_shared")
    expected = {("bash", f"{w}-{n}") for w in range(writers) for n in range(0, count, 3)} | {
        ("bash", "common")
    }
    assert len(shared) == len(expected) and set(shared) == expected
    connection = sqlite3.connect(path)
    try:
        total = connection.execute("SELECT count(*) FROM permission_approval").fetchone()[0]
    finally:
        connection.close()
    assert total == writers * count + len(expected)
    assert user_version(path) == SCHEMA_VERSION


HOLDER_VICTIM = textwrap.dedent(
    """
    import sys
    from opencode_cli.store import Store

    store = Store(__import__("pathlib").Path(sys.argv[1]))
    store.add_approvals("ses_1", [("read", "*")])
    print(store.approvals("ses_1"))
    """
)


def test_first_use_waits_while_another_process_writes_an_old_style_file(tmp_path: Path) -> None:
    """A file still in rollback-journal mode, with another connection in a write transaction: switching
    to WAL fails at once in SQLite (no busy wait), so the store must retry, not report "database is
    locked"."""
    path = tmp_path / "opencode.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE unrelated (x)")
    assert holder.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO unrelated VALUES (1)")
    script = tmp_path / "victim.py"
    script.write_text(HOLDER_VICTIM)
    process = subprocess.Popen(
        [sys.executable, str(script), str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):  # it waits for the writer...
            process.wait(timeout=1.5)
    finally:
        holder.execute("COMMIT")
        holder.close()
    out, err = process.communicate(timeout=60)  # ...and finishes once the writer is done
    assert (process.returncode, err) == (0, "")
    assert out.strip() == "[('read', '*')]"
    assert user_version(path) == SCHEMA_VERSION
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("SELECT x FROM unrelated").fetchall() == [(1,)]
    finally:
        connection.close()


CREATOR = textwrap.dedent(
    """
    import sys
    import time
    from pathlib import Path

    from opencode_cli.store import Store

    folder, worker, workers, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for n in range(rounds):
        (folder / f"ready-{n}-{worker}").touch()
        deadline = time.monotonic() + 90
        while len(list(folder.glob(f"ready-{n}-*"))) < workers:  # all open database n for the first time
            if (folder / "failed").exists() or time.monotonic() > deadline:
                sys.exit(3)
            time.sleep(0.0005)
        try:
            Store(folder / f"db-{n}" / "opencode.db").add_approvals(f"ses_{worker}", [("read", "*")])
        except BaseException:
            (folder / "failed").touch()
            raise
    print("ok")
    """
)


def test_processes_creating_the_file_at_once(tmp_path: Path) -> None:
    """The very first use (creating the file, switching it to WAL, migrating) is raced many times."""
    script = tmp_path / "creator.py"
    script.write_text(CREATOR)
    workers, rounds = 3, 30
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path), str(worker), str(workers), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(workers)
    ]
    outcomes = [(process.wait(timeout=120), *process.communicate()) for process in processes]
    for worker, (code, out, err) in enumerate(outcomes):
        assert (code, out.strip(), err) == (0, "ok", ""), f"process {worker} failed:\n{err}"
    for n in range(rounds):
        path = tmp_path / f"db-{n}" / "opencode.db"
        assert user_version(path) == SCHEMA_VERSION
        store = Store(path)
        assert [store.approvals(f"ses_{worker}") for worker in range(workers)] == [[("read", "*")]] * workers
