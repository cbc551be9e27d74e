"""The fixtures come from opencode-tools's pytest plugin (``opencode_cli.testing``); this file only says
which plugin the ``opencode_project`` and ``run_tool`` fixtures register."""

import opencode_demo_tools
import pytest


@pytest.fixture
def opencode_plugins():
    return [opencode_demo_tools]
