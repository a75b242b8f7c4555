"""Pinework Memory for Python: the HTTP client and the ``pinework`` CLI.

Not deployed; agents and people install it. ``from pinework import Client`` (or
``AsyncClient`` for asyncio code).
"""

from pinework.async_client import AsyncClient
from pinework.client import Client
from pinework.errors import PineworkAPIError
from pinework.models import (
    AuditPage,
    AuditRecord,
    KvForgetResult,
    KvKeys,
    KvRememberResult,
    KvValue,
    Memory,
    MemoryPage,
    RecallResult,
    ScoredMemory,
)

__all__ = [
    "AsyncClient",
    "AuditPage",
    "AuditRecord",
    "Client",
    "KvForgetResult",
    "KvKeys",
    "KvRememberResult",
    "KvValue",
    "Memory",
    "MemoryPage",
    "PineworkAPIError",
    "RecallResult",
    "ScoredMemory",
]
