"""The HTTP server: REST for debates, their events live over SSE and WebSocket (`moot serve`)."""

from moot.server.app import create_app
from moot.server.manager import DebateManager

__all__ = ["DebateManager", "create_app"]
