"""``websearch serve``: the capability over HTTP, in three shapes (see ``app.py``).

Needs the ``server`` extra (Starlette and uvicorn)::

    from websearch_core.server import create_app   # an ASGI app for any ASGI server
"""

from __future__ import annotations

import importlib.util

from websearch_core.errors import ConfigurationError, install_hint

if importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None:
    raise ConfigurationError(
        f"websearch serve needs Starlette and uvicorn: {install_hint('server')}"
    )

from websearch_core.server.app import ServiceLimits, create_app
from websearch_core.server.run import serve

__all__ = ["ServiceLimits", "create_app", "serve"]
