"""A "server" that fails at once: an error on stderr, then exit code 1."""

import sys

print("exit_server: cannot start: this server always fails", file=sys.stderr, flush=True)
sys.exit(1)
