"""The demo server behind a line on stdout that is not JSON-RPC (a banner some servers print)."""

import runpy
import sys
from pathlib import Path

print("noisy server 1.0 starting, this line is not JSON-RPC", flush=True)
sys.argv = [sys.argv[0], "stdio"]
runpy.run_path(str(Path(__file__).with_name("demo_server.py")), run_name="__main__")
