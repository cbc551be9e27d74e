"""Plain records and values: classes made at every start of the CLI, defined without generating code.

A ``@dataclass`` compiles its ``__init__``, ``__repr__`` and ``__eq__`` from source when its module is
imported: about a third of a millisecond a class, paid by every ``opencode`` command for each one on its
way (a start-up figure, measured in ``benchmarks/cli_startup.py``). The records the registry, the policy,
the config and the skills make while a command starts are written as :class:`Record` subclasses instead:
fields in ``__slots__``, an ``__init__`` of their own, compared by identity (as their dataclasses were).
The small frozen values every command makes (:class:`~opencode_cli.toolspec.ToolSource`,
:class:`~opencode_cli.modelref.ModelRef`) are :class:`Value` subclasses: equal and hashed by their fields.
Public classes whose fields plugin authors replace (``dataclasses.replace``) stay dataclasses.
"""

from __future__ import annotations

from typing import Any


class Record:
    """A record whose fields are its ``__slots__`` (those not starting with ``_`` are shown by ``repr``);
    compared by identity."""

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name, None)!r}" for name in self.__slots__ if not name.startswith("_")
        )
        return f"{type(self).__name__}({shown})"


class Value:
    """A frozen value: its fields are its ``__slots__``, named in constructor order by ``_fields``; equal to
    a value of its class with equal fields, hashed by them, shown by ``repr``, and copied and pickled
    through its constructor. A subclass's ``__init__`` sets its fields with :meth:`_set`."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def _set(self, *values: Any) -> None:
        """Set the fields, in ``_fields`` order (once, from ``__init__``)."""
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a {type(self).__name__} is frozen: make another for another {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a {type(self).__name__} is frozen")

    def __reduce__(self) -> tuple[type[Value], tuple[Any, ...]]:
        return type(self), self._values()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self._values(), strict=True)
        )
        return f"{type(self).__name__}({shown})"
