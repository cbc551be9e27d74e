"""What both adapters share: the check for their extra, and reading a dispatched call's outcome."""

from __future__ import annotations

import base64
import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import InvalidArgumentsError

if TYPE_CHECKING:
    from ..contract import Attachment
    from ..session import ToolPart


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
            f"pip install 'opencode-cli[{extra}]'"
        ) from None


def is_invalid_arguments(part: ToolPart) -> bool:
    """Whether a dispatched call failed because its arguments did not fit the tool's schema (the text
    :class:`~opencode_cli.errors.InvalidArgumentsError` gives, which the model should correct)."""
    if part.status != "error" or not part.error:
        return False
    prefix = InvalidArgumentsError.TEMPLATE.split("{detail}", 1)[0].format(tool=part.tool)
    return part.error.startswith(prefix)


def data_of(attachment: Attachment) -> bytes | None:
    """The bytes of an attachment given as a base64 ``data:`` URL (``None`` for any other URL)."""
    header, comma, payload = attachment.url.partition(",")
    if not (comma and header.startswith("data:")):
        return None
    if header.endswith(";base64"):
        return base64.b64decode(payload)
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(payload)
