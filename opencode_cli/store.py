"""The sqlite store: state that outlives one process (permission approvals given with "always", and
each session's todo list).

One file, ``<data>/opencode.db``, in WAL mode with a busy timeout so two processes can use it at once.
The schema is versioned with ``PRAGMA user_version``; each migration runs once, in order, inside a
transaction. Later issues add tables here (the call log).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE permission_approval (
        session_id TEXT NOT NULL,
        permission TEXT NOT NULL,
        pattern TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (session_id, permission, pattern)
    );
    """,
    # 2: the todo list of each session (the todowrite tool); ``position`` keeps the model's order
    """
    CREATE TABLE todo (
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        content TEXT NOT NULL,
        status TEXT NOT NULL,
        priority TEXT NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (session_id, position)
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class Store:
    """Access to the project's sqlite file; each call opens a short-lived connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._migrated = False

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection with the schema up to date, committed on success and closed afterwards."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            connection.execute("PRAGMA busy_timeout = 30000")
            if not self._migrated:
                self._migrate(connection)
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        finally:
            connection.close()

    def _migrate(self, connection: sqlite3.Connection) -> None:
        self._use_wal(connection)
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                newer = f"schema version {version}, newer than this opencode-cli's {SCHEMA_VERSION}"
                raise RuntimeError(f"{self.path} has {newer}")
            for number in range(version, SCHEMA_VERSION):
                for statement in filter(str.strip, MIGRATIONS[number].split(";")):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {number + 1}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        self._migrated = True

    @staticmethod
    def _use_wal(connection: sqlite3.Connection, timeout: float = 30.0) -> None:
        """Switch to WAL mode, retrying: while another connection holds a write lock on a file still in
        rollback-journal mode (as when processes create the file at once), the switch fails at once with
        "database is locked" instead of waiting for the busy timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    connection.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    # -- permission approvals ------------------------------------------------------------------------

    def add_approvals(self, session_id: str, rules: list[tuple[str, str]]) -> None:
        """Remember ``(permission, pattern)`` approvals given with "always" in ``session_id``."""
        now = time.time()
        with self.connect() as connection:
            connection.executemany(
                "INSERT OR IGNORE INTO permission_approval VALUES (?, ?, ?, ?)",
                [(session_id, permission, pattern, now) for permission, pattern in rules],
            )

    def approvals(self, session_id: str) -> list[tuple[str, str]]:
        """The ``(permission, pattern)`` approvals of a session, oldest first."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT permission, pattern FROM permission_approval WHERE session_id = ? "
                "ORDER BY created_at, rowid",
                (session_id,),
            ).fetchall()
        return [(permission, pattern) for permission, pattern in rows]

    # -- todo lists ----------------------------------------------------------------------------------

    def set_todos(self, session_id: str, todos: list[dict[str, str]]) -> None:
        """Replace the todo list of ``session_id`` (dicts with ``content``, ``status`` and ``priority``)."""
        now = time.time()
        with self.connect() as connection:
            connection.execute("DELETE FROM todo WHERE session_id = ?", (session_id,))
            connection.executemany(
                "INSERT INTO todo VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (session_id, position, item["content"], item["status"], item["priority"], now)
                    for position, item in enumerate(todos)
                ],
            )

    def todos(self, session_id: str) -> list[dict[str, str]]:
        """The todo list of ``session_id``, in the order it was written (empty when there is none)."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT content, status, priority FROM todo WHERE session_id = ? ORDER BY position",
                (session_id,),
            ).fetchall()
        return [{"content": c, "status": s, "priority": p} for c, s, p in rows]
