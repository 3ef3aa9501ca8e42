"""Where sessions are kept, from the settings: nothing, a SQLite file, or PostgreSQL with
the leases of a cluster (``POSEKIT_DB=postgresql://…``)."""

from __future__ import annotations

from posekit.sessions.cluster.leases import Leases, LocalLeases
from posekit.sessions.store.protocol import NullStore, SessionStore
from posekit.sessions.store.sqlite_store import SQLiteStore
from posekit.settings import Settings, SettingsError


def storage_from(settings: Settings) -> tuple[SessionStore, Leases]:
    """The store and the leases ``settings`` describe. The PostgreSQL schema is created
    or migrated when the manager starts (``Leases.start``), not here."""
    if settings.clustered():
        try:
            import psycopg  # noqa: F401
        except ModuleNotFoundError:
            raise SettingsError(
                "POSEKIT_DB names a PostgreSQL database, which needs the cluster extra: "
                "pip install 'posekit[cluster]'"
            ) from None
        from posekit.sessions.cluster.postgres_leases import PostgresLeases
        from posekit.sessions.store.postgres_database import PostgresDatabase
        from posekit.sessions.store.postgres_store import PostgresStore

        database = PostgresDatabase(str(settings.db), settings.db_schema)
        leases = PostgresLeases(database, replica_id_of(settings), settings.lease_ttl_s)
        return PostgresStore(database, leases), leases
    store: SessionStore = SQLiteStore(settings.db) if settings.db else NullStore()
    return store, LocalLeases(settings.replica_id)


def replica_id_of(settings: Settings) -> str:
    """``POSEKIT_REPLICA_ID``, else a name unique to this process."""
    return settings.replica_id or LocalLeases().replica_id
