"""The sessions of a whole cluster, as ``GET /api/sessions`` lists them.

The replica's own sessions are listed with their live summaries (owner: this replica);
every other stored session from its stored spec: status ``remote`` with its owner while
another replica's lease on it is unexpired, else ``unloaded`` (stored only: the next
request that names it revives it on the replica that receives it).
"""

from __future__ import annotations

from dataclasses import replace

from posekit.sessions.cluster.leases import Leases
from posekit.sessions.live.info import SessionInfo

REMOTE = "remote"
UNLOADED = "unloaded"
STORED_ONLY = frozenset({UNLOADED, "unavailable"})


def cluster_listing(local: list[SessionInfo], leases: Leases) -> list[SessionInfo]:
    """``local`` (this replica's) and every other stored session, oldest first."""
    mine = {
        info.id: replace(info, owner=leases.replica_id, live=info.status not in STORED_ONLY)
        for info in local
    }
    listed = list(mine.values())
    for entry in leases.listing():
        if entry.session_id in mine:
            continue
        status = REMOTE if entry.live else UNLOADED
        info = SessionInfo.stored(entry.session_id, entry.spec, status, None)
        owner = entry.owner if entry.live else None
        listed.append(replace(info, created=entry.created, owner=owner, live=entry.live))
    return sorted(listed, key=lambda info: info.created)
