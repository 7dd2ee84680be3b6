"""Placeholder until the CLI lands."""

from __future__ import annotations


def main() -> int:
    return 0
