"""``python -m opencode_cli``: the same as the ``opencode`` command."""

from opencode_cli.cli import main

if __name__ == "__main__":
    main()
