"""Reading a user's memory back: the ``sessions`` / ``show`` commands and the
``sessions-graph ui`` web viewer.

``views`` builds what both show from the façade, with no web library; ``app``
(the viewer, extra ``[ui]``) is imported only by ``sessions-graph ui``, so that
every other command stays free of Starlette and Jinja2.
"""
