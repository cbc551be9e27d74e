"""Code mode: the ``execute`` tool runs a Python script that calls the MCP tools as functions.

With code mode on (``OPENCODE_EXPERIMENTAL_CODE_MODE``), a model is offered one tool, ``execute``, instead of
every MCP tool (builtin-tools §15.3, core §6.1 "Code Mode early return"). The script runs in a
``pydantic-monty`` sandbox (a Python interpreter in Rust: no file system, network or imports unless
granted) and calls ``await tools.<server>.<tool>(...)``; each call goes through the session like a direct
call of that MCP tool.

* :mod:`.catalog`: the callable tools as typed Python signatures built from their JSON Schemas, and the
  catalogue appended to ``execute``'s description;
* :mod:`.sandbox`: the worker pool (a project service) and the drive of one script, with its limits;
* :mod:`.script`: one ``execute`` call: the inner calls through the session, their live metadata, the
  output as the model reads it.

``pydantic_monty`` is imported only when a script runs.
"""
