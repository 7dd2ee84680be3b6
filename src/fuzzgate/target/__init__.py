"""Reaching the server: the stdio process fuzzgate owns, or a streamable HTTP endpoint."""
