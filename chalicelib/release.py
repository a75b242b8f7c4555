"""The release this code is (docs/operations.md#releases): ``pyproject.toml``'s version
and, once cut, the git tag ``v<RELEASE>``. The deploys set ``PINEWORK_RELEASE`` to it on
every function, which the index steps read to know what runs (``infra/upgrade.py``); the
MCP server names it in its ``serverInfo``."""

from __future__ import annotations

RELEASE = "0.2.0"
"""Dot-separated whole numbers; a test holds it equal to ``pyproject.toml``'s version."""
