"""A toolbox: three tools sharing one SQLite database, opened by ``setup`` and closed by ``teardown``.

The project owns the toolbox as a service: the database is opened on the first call of any of the three
tools and closed when the project closes (the command ends, Ctrl-C, or ``project.close()``).
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING

from opencode_cli import Field, Toolbox, ToolError

if TYPE_CHECKING:
    from opencode_cli import Project


class DemoNotes(Toolbox):
    """Short notes kept in ``$XDG_DATA_HOME/opencode/demo-notes.sqlite`` (in memory without a project)."""

    prefix = "demo_notes"

    def setup(self, project: Project | None) -> None:
        """Open (and create) the database; a plain setup runs in a worker thread."""
        if project is None:
            target = ":memory:"
        else:
            from opencode_cli.plugin import data_dir

            folder = data_dir(project.env)
            folder.mkdir(parents=True, exist_ok=True)
            target = str(folder / "demo-notes.sqlite")
        # the tools run in worker threads: one connection, used under a lock
        self.lock = threading.Lock()
        self.db: sqlite3.Connection | None = sqlite3.connect(target, check_same_thread=False)
        with self.lock, self.db:
            self.db.execute("create table if not exists notes (id integer primary key, text text not null)")

    def teardown(self) -> None:
        """Close the database."""
        if self.db is not None:
            with self.lock:
                self.db.close()
                self.db = None

    def _connection(self) -> sqlite3.Connection:
        if self.db is None:
            raise ToolError("The notes database is closed.")
        return self.db

    def add(self, text: str = Field(min_length=1, description="The note, one line or a few")) -> str:
        """Keep a short note for later in this project's notes."""
        with self.lock, self._connection() as db:
            number = db.execute("insert into notes (text) values (?)", (text,)).lastrowid
        return f"Kept note {number}."

    def find(self, words: str = Field(description="Words the notes must all contain")) -> str:
        """Find the notes that contain all of these words (case does not matter)."""
        terms = words.lower().split()
        with self.lock:
            rows = self._connection().execute("select id, text from notes order by id").fetchall()
        found = [f"{number}: {text}" for number, text in rows if all(t in text.lower() for t in terms)]
        return "\n".join(found) if found else "No note contains those words."

    def count(self) -> str:
        """How many notes are kept."""
        with self.lock:
            (number,) = self._connection().execute("select count(*) from notes").fetchone()
        return f"{number} notes"
