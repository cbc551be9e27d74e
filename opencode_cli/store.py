"""The sqlite store: state that outlives one process (permission approvals given with "always", each
session's todo list, session transcripts: sessions, messages and parts as OpenCode's JSON, and the nearby
instruction files a remembered session was shown).

One file, ``<data>/opencode.db``, in WAL mode with a busy timeout so two processes can use it at once.
The schema is versioned with ``PRAGMA user_version``; each migration runs once, in order, inside a
transaction. Later issues add tables here (the call log).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
    # 3: session transcripts (opencode_cli.transcript); ``data`` is the OpenCode JSON of the row, and
    # ``position`` keeps insertion order (ids and clocks may tie; an upsert keeps its first position)
    """
    CREATE TABLE session (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        data TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX session_parent ON session (parent_id, created_at);
    CREATE TABLE message (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX message_session ON message (session_id, position);
    CREATE TABLE part (
        id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX part_message ON part (message_id, position);
    CREATE INDEX part_session ON part (session_id);
    """,
    # 4: the nearby instruction files (AGENTS.md…) the read tool showed in a remembered session, so a
    # later process of the same session does not show them again (opencode_cli.tools._instructions)
    """
    CREATE TABLE instruction_shown (
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (session_id, path)
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
                newer = f"schema version {version}, newer than this opencode-tools's {SCHEMA_VERSION}"
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

    # -- instruction files shown -------------------------------------------------------------------

    def claim_instruction(self, session_id: str, path: str) -> bool:
        """Record that the instructions of ``path`` are shown in ``session_id``; ``False`` when they already
        were (by this process or another: the check and the record are one statement)."""
        with self.connect() as connection:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO instruction_shown VALUES (?, ?, ?)", (session_id, path, time.time())
            )
            return cursor.rowcount == 1

    def instructions_shown(self, session_id: str) -> set[str]:
        """The instruction file paths already shown in ``session_id``."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT path FROM instruction_shown WHERE session_id = ?", (session_id,)
            ).fetchall()
        return {path for (path,) in rows}

    def forget_instructions(self, session_id: str) -> None:
        """Forget which instruction files ``session_id`` was shown (its history was compacted)."""
        with self.connect() as connection:
            connection.execute("DELETE FROM instruction_shown WHERE session_id = ?", (session_id,))

    # -- transcripts: sessions, messages, parts ------------------------------------------------------

    def save_session(self, info: dict[str, Any]) -> None:
        """Insert or replace a session's info (OpenCode's ``Session.Info`` JSON with ``id``, ``parentID``
        and ``time: {created, updated}`` in ms); the first ``created`` stays."""
        times = info.get("time") or {}
        created = times.get("created", _now_ms())
        updated = times.get("updated", created)
        with self.connect() as connection:
            connection.execute(
                "INSERT INTO session VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "parent_id = excluded.parent_id, data = excluded.data, updated_at = excluded.updated_at",
                (info["id"], info.get("parentID"), _dump(info), created, updated),
            )

    def session(self, session_id: str) -> dict[str, Any] | None:
        """The info of a session, or ``None`` when there is none with this id."""
        with self.connect() as connection:
            row = connection.execute("SELECT data FROM session WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else json.loads(row[0])

    def children(self, parent_id: str) -> list[dict[str, Any]]:
        """The infos of the sessions whose parent is ``parent_id`` (e.g. ``task`` subagents), oldest first."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT data FROM session WHERE parent_id = ? ORDER BY created_at, id", (parent_id,)
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def latest_session(self, directory: str) -> str | None:
        """The id of the most recently updated top-level session of ``directory`` (``run --continue``)."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT id, data FROM session WHERE parent_id IS NULL ORDER BY updated_at DESC, rowid DESC"
            ).fetchall()
        return next((key for key, data in rows if json.loads(data).get("directory") == directory), None)

    def save_message(self, session_id: str, info: dict[str, Any]) -> None:
        """Insert or update a message's info (OpenCode's ``Message`` JSON, without its parts); a new
        message goes after the session's others, an update keeps its place."""
        created = (info.get("time") or {}).get("created", _now_ms())
        with self.connect() as connection:
            connection.execute(
                "INSERT INTO message VALUES (?, ?, "
                "(SELECT coalesce(max(position), -1) + 1 FROM message WHERE session_id = ?), ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET data = excluded.data",
                (info["id"], session_id, session_id, _dump(info), created),
            )

    def save_part(self, part: dict[str, Any]) -> None:
        """Insert or update a part (``id``, ``sessionID``, ``messageID``, ``type``…); a new part goes after
        its message's others, an update (a tool part whose state changed) keeps its place."""
        message_id = part["messageID"]
        with self.connect() as connection:
            connection.execute(
                "INSERT INTO part VALUES (?, ?, ?, "
                "(SELECT coalesce(max(position), -1) + 1 FROM part WHERE message_id = ?), ?) "
                "ON CONFLICT (id) DO UPDATE SET data = excluded.data",
                (part["id"], message_id, part["sessionID"], message_id, _dump(part)),
            )

    def messages(self, session_id: str, start: int = 0) -> list[dict[str, Any]]:
        """The messages of a session as ``{"info": …, "parts": […]}``, each list in insertion order; with
        ``start``, from the message at that position (0 is the first) on."""
        with self.connect() as connection:
            messages = connection.execute(
                "SELECT id, data FROM message WHERE session_id = ? AND position >= ? ORDER BY position",
                (session_id, start),
            ).fetchall()
            parts = connection.execute(
                "SELECT part.message_id, part.data FROM part JOIN message ON message.id = part.message_id "
                "WHERE part.session_id = ? AND message.position >= ? ORDER BY part.message_id, part.position",
                (session_id, start),
            ).fetchall()
        by_message: dict[str, list[dict[str, Any]]] = {}
        for message_id, data in parts:
            by_message.setdefault(message_id, []).append(json.loads(data))
        return [{"info": json.loads(data), "parts": by_message.get(key, [])} for key, data in messages]

    def write_session(self, info: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        """Write a whole session (its info, and its messages with their parts, in order) in one
        transaction: a fork, an import. A :class:`ValueError` when the store has a session with its id."""
        times = info.get("time") or {}
        created = times.get("created", _now_ms())
        with self.connect() as connection:
            if connection.execute("SELECT 1 FROM session WHERE id = ?", (info["id"],)).fetchone():
                raise ValueError(f"a session {info['id']} is kept already")
            connection.execute(
                "INSERT INTO session VALUES (?, ?, ?, ?, ?)",
                (info["id"], info.get("parentID"), _dump(info), created, times.get("updated", created)),
            )
            for position, message in enumerate(messages):
                head = message["info"]
                when = (head.get("time") or {}).get("created", created)
                connection.execute(
                    "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                    (head["id"], info["id"], position, _dump(head), when),
                )
                connection.executemany(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?)",
                    [(p["id"], head["id"], info["id"], n, _dump(p)) for n, p in enumerate(message["parts"])],
                )

    def last_model(self, session_id: str) -> dict[str, Any] | None:
        """The ``{providerID, modelID}`` the session's latest message that names a model was made with."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT data FROM message WHERE session_id = ? ORDER BY position DESC", (session_id,)
            ).fetchall()
        return _model_of(json.loads(data) for (data,) in rows)

    def last_summary(self, session_id: str) -> int:
        """The position of the message before the session's last completed compaction summary (the
        compaction's request), or 0 when the session was never compacted."""
        with self.connect() as connection:
            row = connection.execute(
                "SELECT max(position) FROM message WHERE session_id = ? AND json_extract(data, '$.summary') "
                "AND json_extract(data, '$.time.completed') IS NOT NULL",
                (session_id,),
            ).fetchone()
        return max(0, row[0] - 1) if row and row[0] is not None else 0

    def usage(
        self, since_ms: int = 0
    ) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, dict[str, Any]]]]:
        """What ``opencode stats`` counts, from messages created at ``since_ms`` or later: each assistant
        message's info and each tool part, with the directory of the session it belongs to."""
        with self.connect() as connection:
            directories = {
                key: json.loads(data).get("directory", "")
                for key, data in connection.execute("SELECT id, data FROM session").fetchall()
            }
            messages = connection.execute(
                "SELECT session_id, data FROM message WHERE created_at >= ? "
                "AND json_extract(data, '$.role') = 'assistant'",
                (since_ms,),
            ).fetchall()
            parts = connection.execute(
                "SELECT part.session_id, part.data FROM part JOIN message ON message.id = part.message_id "
                "WHERE message.created_at >= ? AND json_extract(part.data, '$.type') = 'tool'",
                (since_ms,),
            ).fetchall()
        return (
            [(directories.get(key, ""), json.loads(data)) for key, data in messages],
            [(directories.get(key, ""), json.loads(data)) for key, data in parts],
        )

    # -- sessions as the user sees them (opencode session …) ------------------------------------------

    def project_sessions(self, directory: str) -> list[dict[str, Any]]:
        """The top-level sessions of ``directory``, most recently updated first, each as its info with
        ``messages`` (how many it holds) and ``model`` (``{providerID, modelID}`` of its last message
        that names one, else ``None``)."""
        with self.connect() as connection:
            rows = connection.execute(
                "SELECT id, data, (SELECT count(*) FROM message WHERE session_id = session.id) "
                "FROM session WHERE parent_id IS NULL ORDER BY updated_at DESC, rowid DESC"
            ).fetchall()
            found = []
            for key, data, count in rows:
                info = json.loads(data)
                if info.get("directory") != directory:
                    continue
                last = connection.execute(
                    "SELECT data FROM message WHERE session_id = ? ORDER BY position DESC", (key,)
                ).fetchall()
                found.append({**info, "messages": count, "model": _model_of(json.loads(m) for (m,) in last)})
        return found

    def delete_session(self, session_id: str) -> list[str]:
        """Delete a session with its subagents' sessions (``task``), their messages, parts, approvals,
        todo lists and shown instructions, in one transaction; the ids deleted, the session's first
        (empty when there is no such session)."""
        with self.connect() as connection:
            ids: list[str] = []
            waiting = [session_id]
            while waiting:
                key = waiting.pop()
                if connection.execute("SELECT 1 FROM session WHERE id = ?", (key,)).fetchone() is None:
                    continue
                ids.append(key)
                children = connection.execute("SELECT id FROM session WHERE parent_id = ?", (key,))
                waiting.extend(child for (child,) in children.fetchall())
            for key in ids:
                for table in ("part", "message", "permission_approval", "todo", "instruction_shown"):
                    connection.execute(f"DELETE FROM {table} WHERE session_id = ?", (key,))
                connection.execute("DELETE FROM session WHERE id = ?", (key,))
        return ids


def _now_ms() -> int:
    return int(time.time() * 1000)


def _model_of(messages: Iterator[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``{providerID, modelID}`` of the first of ``messages`` that names a model."""
    for info in messages:
        model = info.get("model") if info.get("role") == "user" else info
        if isinstance(model, dict) and model.get("modelID"):
            return {"providerID": model.get("providerID"), "modelID": model["modelID"]}
    return None


def _dump(value: dict[str, Any]) -> str:
    """Compact JSON; ASCII-escaped so lone surrogates (undecodable tool output) survive the UTF-8 file."""
    return json.dumps(value, separators=(",", ":"))
