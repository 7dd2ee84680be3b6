"""Reporters: they read a `RunReport` and write files or console output; they never speak MCP."""
