"""Drive a posekit server from Python: make a session over REST, drag its hand over
the websocket stream, reweight a task, read the solved state, clean up.

    make run                                   # or: posekit up (pip install 'posekit[server]')
    python examples/remote_session.py [--url http://127.0.0.1:8000] [--token …]

Only the public API is used: the standard library for REST, ``websockets`` (a
dependency of the server and viewer extras) for the stream.
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.request
from typing import Any

from websockets.sync.client import connect

DRAG = 0.10  # [m] the hand is dragged sideways, in ten targets
SETTLE_S = 10.0  # [s] the longest wait for the session to converge on the last target


def rest(url: str, token: str | None, method: str = "GET", body: Any = None) -> Any:
    """One REST call; its JSON answer (None for 204). Errors raise with the server's
    message, e.g. ``HTTPError 409: site 'tcp' does not exist …``."""
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read()) if response.status != 204 else None


def drag(stream_url: str, token: str | None) -> dict[str, Any]:
    """Send ten targets moving the ``ee`` task sideways; the state that answers the last."""
    headers = {"authorization": f"Bearer {token}"} if token else None
    with connect(stream_url, additional_headers=headers) as ws:
        hello = json.loads(ws.recv())
        x, y, z = next(t for t in hello["tasks"] if t["name"] == "ee")["target"]["position"]
        for ref in range(1, 11):
            position = [x, y + DRAG * ref / 10, z]
            ws.send(json.dumps({"type": "target", "task": "ee", "position": position, "ref": ref}))
        while True:  # states are latest-wins: wait for one that has seen target 10
            message = json.loads(ws.recv(timeout=SETTLE_S))
            if message["type"] == "state" and message["ref"] == 10 and message["converged"]:
                return message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("POSEKIT_TOKEN"))
    args = parser.parse_args()
    api = args.url.rstrip("/") + "/api"

    session = rest(f"{api}/sessions", args.token, "POST", {"robot": "arm7"})
    sid = session["id"]
    try:
        print(f"session {sid} on {session['robot']}, tasks {session['tasks']}")
        stream = api.replace("http", "ws", 1) + f"/sessions/{sid}/stream"
        state = drag(stream, args.token)
        print(f"dragged {DRAG} m: step {state['seq']}, errors {state['errors']}")
        rest(f"{api}/sessions/{sid}/tasks/ee", args.token, "PATCH", {"orientation_cost": 0.1})
        tasks = rest(f"{api}/sessions/{sid}/tasks", args.token)
        print("orientation costs:", {t["name"]: t["params"].get("orientation_cost") for t in tasks})
        q = rest(f"{api}/sessions/{sid}/state", args.token)["q"]
        print("q =", [round(value, 3) for value in q])
    finally:
        rest(f"{api}/sessions/{sid}", args.token, "DELETE")


if __name__ == "__main__":
    main()
