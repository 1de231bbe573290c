"""CLI commands: hooks (filled in by its own change)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the application."""
