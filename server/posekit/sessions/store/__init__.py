"""Where sessions are kept: the :class:`SessionStore` protocol, SQLite (the default on one
machine), PostgreSQL (a cluster's) and the ordered saves of :mod:`.persistence`."""

from posekit.sessions.store.protocol import MemoryStore, NullStore, SessionStore, StoredSession

__all__ = ["MemoryStore", "NullStore", "SessionStore", "StoredSession"]
