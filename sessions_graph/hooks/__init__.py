"""Agent hook integration: ``sessions-graph hook`` and what it needs.

Everything under this package runs inside an agent's hook process, on every
event, so it imports only the standard library and the write path of the
façade: no pydantic, typer, rich, neo4j (unless Memgraph is configured) or
LLM client.
"""
