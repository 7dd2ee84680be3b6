"""fuzzgate's collector bootstrap, imported by the server's interpreter at start-up because fuzzgate
put this directory first on its PYTHONPATH (see `fuzzgate.coverage.collector`).

Only with the collector's variable set: it is popped at once, with this directory taken out of
PYTHONPATH and sys.path, so the server's own child processes start as they would without fuzzgate.
Whatever fails here is swallowed (the agent reports it on the side channel when it can): the server
must start as it would have. Then the `sitecustomize` this one hides is run, with its errors
reported by `site` as usual.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
_ENV = "FUZZGATE_COLLECTOR"


def _start() -> None:
    raw = os.environ.pop(_ENV, None)
    if raw is None:
        return
    settings: dict[str, Any] = {}
    try:
        import importlib
        import importlib.util
        import json

        settings = json.loads(raw)
        pythonpath = settings.get("pythonpath")
        if pythonpath:
            os.environ["PYTHONPATH"] = pythonpath
        else:
            os.environ.pop("PYTHONPATH", None)
        package = settings["package"]
        spec = importlib.util.spec_from_file_location(
            "_fuzzgate_collector", os.path.join(package, "__init__.py"), submodule_search_locations=[package]
        )
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        importlib.import_module(spec.name + ".agent").start(settings)
    except BaseException as exc:
        # The agent never raises: the collector could not even be loaded. Say so and hang up.
        try:
            message = '{"error": "the collector could not be loaded: ' + type(exc).__name__ + '"}\n'
            os.write(int(settings["reply_fd"]), message.encode("ascii"))
            for key in ("request_fd", "reply_fd"):
                os.close(int(settings[key]))
        except BaseException:
            pass


def _chain() -> None:
    """Run the `sitecustomize` that comes after this one on sys.path, as the interpreter would have."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None or os.path.dirname(os.path.abspath(spec.origin or "")) == _HERE:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
_start()
_chain()
