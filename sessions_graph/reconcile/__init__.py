"""Reconciliation: turning a session's opaque text into linked entities.

Runs out of band (cron, ``sessions-graph reconcile``), never inside a hook.
The stages, one module each: ``redact`` (secrets never leave the machine),
``chunking`` (normalise, cut, hash), ``extraction`` (LightRAG's prompts and
parser, our store as the sink), ``llm`` (OpenAI / Anthropic model functions),
``pipeline`` (claims, hash dedup, status) and ``summary`` (what a run did).

Nothing here is imported by ``import sessions_graph``; LightRAG and the LLM
SDKs load only when a run starts.
"""
