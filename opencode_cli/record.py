"""Plain records: the internal classes made at every start of the CLI, defined without generating code.

A ``@dataclass`` compiles its ``__init__``, ``__repr__`` and ``__eq__`` from source when its module is
imported: about a third of a millisecond a class, paid by every ``opencode`` command for each one on its
way (a start-up figure, measured in ``benchmarks/cli_startup.py``). The records the registry, the policy,
the config and the skills make while a command starts are written as :class:`Record` subclasses instead:
fields in ``__slots__``, an ``__init__`` of their own, compared by identity (as their dataclasses were).
Public classes that plugin authors construct or compare stay dataclasses.
"""

from __future__ import annotations


class Record:
    """A record whose fields are its ``__slots__`` (those not starting with ``_`` are shown by ``repr``);
    compared by identity."""

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name, None)!r}" for name in self.__slots__ if not name.startswith("_")
        )
        return f"{type(self).__name__}({shown})"
