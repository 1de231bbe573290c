"""The ``sessions-graph`` command line.

``app`` is the typer application (one module per group of verbs registers
its commands there). ``recall`` holds the ``recall`` command, which
``sessions_graph.__main__`` runs before typer loads, as it runs the hook:
this package's own import stays free of typer for that reason.
"""
