"""Fixtures of the store tests: a real redis-server (tests/redis_server.py)."""

from __future__ import annotations

from tests.redis_server import redis_server

__all__ = ["redis_server"]
