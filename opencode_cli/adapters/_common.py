"""What both adapters share: the check for their extra, the model steps of a framework's calls, and
reading a dispatched call's outcome."""

from __future__ import annotations

import base64
import importlib
from collections.abc import Hashable
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results import Attachment
    from ..session import Session, ToolPart


class MissingExtraError(ImportError):
    """An adapter's framework is not installed; the message names the extra that installs it."""


def require(module: str, extra: str, adapter: str) -> ModuleType:
    """Import ``module`` for ``adapter``, or raise :class:`MissingExtraError` with a one-line message
    naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] != module:
            raise  # the framework is there but one of its own dependencies is broken: say so as it is
        raise MissingExtraError(
            f"{adapter} needs the {extra} extra ({module} is not installed): "
            f"pip install 'opencode-tools[{extra}]'"
        ) from None


def is_invalid_arguments(part: ToolPart) -> bool:
    """Whether a dispatched call could not run as the model wrote it (arguments that did not fit the
    tool's schema, or a call rerouted to ``invalid``): the model should correct it."""
    from ..session import Outcome

    return part.outcome is Outcome.INVALID_ARGUMENTS


class Steps:
    """Which model response a framework's tool call belongs to: a call whose step key differs from the
    last one's starts a new step of the session (:meth:`~opencode_cli.session.Session.step`), so the
    doom-loop window is one model response. A call with no key (the framework does not say) is a step of
    its own."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._last: Hashable | None = None

    def enter(self, key: Hashable | None) -> None:
        """Note a call of step ``key`` before dispatching it."""
        if key is None or key != self._last:
            self._last = key
            self.session.step()


def data_of(attachment: Attachment) -> bytes | None:
    """The bytes of an attachment given as a base64 ``data:`` URL (``None`` for any other URL)."""
    header, comma, payload = attachment.url.partition(",")
    if not (comma and header.startswith("data:")):
        return None
    if header.endswith(";base64"):
        return base64.b64decode(payload)
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(payload)
