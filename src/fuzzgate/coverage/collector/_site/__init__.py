"""The directory fuzzgate puts at the front of an instrumented server's PYTHONPATH: only
`sitecustomize.py` is meant to be found here (this file makes it package data)."""
