"""OpenCode's tools inside other agent frameworks: pydantic-ai and the OpenAI Agents SDK.

Each adapter is a module of its own, importing its framework (an optional extra) and nothing else of
note: :mod:`opencode_cli.adapters.pydantic_ai` (``pip install 'opencode-tools[pydantic-ai]'``) and
:mod:`opencode_cli.adapters.openai_agents` (``pip install 'opencode-tools[openai-agents]'``). Both wrap a
:class:`~opencode_cli.session.Session` the host opens, so what the framework's model is offered is
``Session.resolve()`` and every call goes through ``Session.dispatch`` (repair, hooks, permissions with
the session's prompt, validation, truncation). See docs/adapters.md.
"""
