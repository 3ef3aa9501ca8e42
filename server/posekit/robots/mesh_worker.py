"""The child that converts an upload's meshes (:mod:`posekit.robots.mesh_convert`).

Run as ``python -I mesh_worker.py``: reads ``{"paths": [...], "memory_bytes": n,
"read": [...]}`` on stdin, limits its address space to ``n`` bytes, may read only beneath
the ``read`` folders and write only into the cache (:mod:`posekit.robots.confinement`),
converts each mesh into the cache
(``POSEKIT_MESH_CACHE``, from its environment) and writes ``{path: {"file": converted}
| {"error": why}}`` on stdout.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from posekit.robots.confinement import confine
from posekit.robots.mesh_convert import MeshNotConverted, cache_dir, convert_mesh


def main() -> None:
    request = json.loads(sys.stdin.read())
    memory = int(request["memory_bytes"])
    cache_dir().mkdir(parents=True, exist_ok=True)
    confine([Path(folder) for folder in request["read"]], write=[cache_dir()])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    reply: dict[str, dict[str, str]] = {}
    for path in request["paths"]:
        try:
            reply[path] = {"file": str(convert_mesh(Path(path)))}
        except MeshNotConverted as exc:
            reply[path] = {"error": str(exc)}
        except MemoryError:
            reply[path] = {"error": f"converting it needs more than {memory >> 20} MiB"}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
