"""The output limits of core spec §2: what a tool result may hold before it is truncated.

Their own module so that reading the configuration (whose defaults they are) needs nothing of
:mod:`opencode_cli.truncate`, which applies them.
"""

from __future__ import annotations

MAX_LINES = 2000
"""Lines of output a result keeps (``tool_output.max_lines`` overrides it)."""

MAX_BYTES = 50 * 1024
"""UTF-8 bytes of output a result keeps (``tool_output.max_bytes`` overrides it)."""

TRANSCRIPT_BYTES = 8 * 1024 * 1024
"""Characters (about bytes) of tool inputs, outputs and texts a session's transcript holds in memory;
older parts stay in the store (``transcript.max_bytes`` overrides it)."""
