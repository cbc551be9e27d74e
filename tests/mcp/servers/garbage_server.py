"""A "server" that never speaks MCP: it prints lines that are not JSON on stdout, for about 60 seconds."""

import os
import sys
import time

DEADLINE = time.monotonic() + 60


def main() -> None:
    number = 0
    try:
        while time.monotonic() < DEADLINE:
            number += 1
            print(f"garbage line {number}: this is not JSON {{", flush=True)
            time.sleep(0.01)
    except BrokenPipeError:
        # the reader went away: no second error when the interpreter flushes stdout on exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
