"""The ``sessions-graph`` command line.

``main`` runs a command line: ``parse`` reads it without typer (from the
table in ``commands`` and the declarations of ``params``) and imports only
the invoked command's module; ``app`` builds the typer application for
``--help`` and for what ``parse`` leaves to it. ``recall`` holds the
``recall`` command, which ``sessions_graph.__main__`` runs before any of
this, as it runs the hook.
"""
