"""What the agent's own tools cost: the MCP server and the memory tool.

* ``sessions-graph mcp`` as an agent runtime starts it: spawn, initialize and
  list the tools over stdio (the SDK's own client), against ``python -c pass``
  started the same way and a process that only imports the MCP SDK's server
  (the floor any server on this SDK pays); then one ``search_memories`` call
  over stdio against the same search through the façade in-process.
* ``SessionsGraphMemoryTool`` on the embedded engine: ``create`` and
  ``str_replace`` per call, next to ``save_memory`` / ``update_memory``, the
  plain Memory writes they add a file row and a kept version to.

Medians (and p90) of interleaved runs, so machine noise hits every row alike.
Usage: ``python bench/bench_agent_tools.py [--runs 15] [--files 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mcp import Client, StdioServerParameters

from sessions_graph import SessionsGraph
from sessions_graph.agent import SessionsGraphMemoryTool

SCRIPT = str(Path(sys.executable).parent / "sessions-graph")


def _summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"| {name} | {statistics.median(ordered) * 1000:.1f} ms | {p90 * 1000:.1f} ms |"


def _process(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


async def _mcp_start_and_list(params: StdioServerParameters) -> float:
    start = time.perf_counter()
    async with Client(params, read_timeout_seconds=60) as client:
        await client.list_tools()
        return time.perf_counter() - start


async def _mcp_calls(params: StdioServerParameters, calls: int) -> list[float]:
    out = []
    async with Client(params, read_timeout_seconds=60) as client:
        await client.call_tool("search_memories", {"query": "python"})  # opens the store
        for _ in range(calls):
            start = time.perf_counter()
            await client.call_tool("search_memories", {"query": "python"})
            out.append(time.perf_counter() - start)
    return out


def bench_mcp(db: Path, runs: int) -> None:
    env = {"SESSIONS_GRAPH_DB": str(db), "SESSIONS_GRAPH_USER_ID": "alice"}
    params = StdioServerParameters(command=SCRIPT, args=["mcp"], env=env)
    rows: dict[str, list[float]] = {
        "python -c pass": [],
        "import mcp.server.mcpserver": [],
        "sessions-graph mcp: start, initialize, list tools": [],
    }
    for _ in range(runs):
        rows["python -c pass"].append(_process([sys.executable, "-c", "pass"]))
        rows["import mcp.server.mcpserver"].append(
            _process([sys.executable, "-c", "import mcp.server.mcpserver"])
        )
        rows["sessions-graph mcp: start, initialize, list tools"].append(
            asyncio.run(_mcp_start_and_list(params))
        )
    with SessionsGraph(db=str(db)) as graph:
        direct = []
        for _ in range(runs * 5):
            start = time.perf_counter()
            graph.search_memories("alice", "python")
            direct.append(time.perf_counter() - start)
    rows["search_memories through the facade (in-process)"] = direct
    rows["search_memories over stdio (one MCP call)"] = asyncio.run(_mcp_calls(params, runs * 5))
    print("| MCP | median | p90 |\n| --- | --- | --- |")
    for name, samples in rows.items():
        print(_summary(name, samples))


def bench_memory_tool(db: Path, files: int) -> None:
    with SessionsGraph(db=str(db)) as graph:
        tool = SessionsGraphMemoryTool(graph, user_id="bench", session_id="s-bench")

        def timed(work: Callable[[int], object]) -> list[float]:
            out = []
            for i in range(files):
                start = time.perf_counter()
                work(i)
                out.append(time.perf_counter() - start)
            return out

        ids: list[str] = []

        def save(i: int) -> None:
            ids.append(graph.save_memory("bench", f"note {i} python", "s-bench").memory_id)

        rows = {
            "save_memory": timed(save),
            "memory tool create": timed(
                lambda i: tool.call(
                    {
                        "command": "create",
                        "path": f"/memories/n/{i}.md",
                        "file_text": f"note {i} python\n",
                    }
                )
            ),
            "update_memory": timed(lambda i: graph.update_memory(ids[i], f"note {i} rust")),
            "memory tool str_replace": timed(
                lambda i: tool.call(
                    {
                        "command": "str_replace",
                        "path": f"/memories/n/{i}.md",
                        "old_str": "python",
                        "new_str": "rust",
                    }
                )
            ),
        }
    print(f"\n| memory tool, {files} files | median | p90 |\n| --- | --- | --- |")
    for name, samples in rows.items():
        print(_summary(name, samples))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # an install has its bytecode
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        with SessionsGraph(db=str(db)) as graph:
            graph.setup()
            for i in range(1000):
                graph.save_memory("alice", f"memory {i}: prefers python for tooling {i % 7}")
        bench_mcp(db, args.runs)
        bench_memory_tool(Path(tmp) / "files.db", args.files)


if __name__ == "__main__":
    main()
