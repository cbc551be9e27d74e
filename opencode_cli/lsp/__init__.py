"""Language servers: ``[lsp.NAME]`` and the built-in table (``config``), one server as a project service
on pygls's client side (``client``), the servers of a project (``servers``), and the diagnostics blocks
edit, write and apply_patch append (``diagnostics``).

Nothing is imported from pygls or lsprotocol until a server is really needed for a file.
"""
