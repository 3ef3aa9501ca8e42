"""Several replicas: leases on sessions, held in PostgreSQL, and who solves what."""
