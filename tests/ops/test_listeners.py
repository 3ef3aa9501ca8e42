"""No side door past the token: with ``POSEKIT_TOKEN`` set, the only listening socket of
the server that a client on another machine can reach is the app's port (which refuses
without the token); each viewer's viser server listens on a loopback port, reached from
outside only through the app's relay, behind the token.

Reads the sockets of the processes from ``/proc`` (Linux)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
import viser
from support.servers import ServerProcess
from websockets.sync.client import connect

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")


def _process_tree(root: int) -> set[int]:
    """``root`` and every process descending from it."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    return inodes


LOOPBACK = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1 in /proc/net


def _listening_tcp(inodes: set[str]) -> set[tuple[str, int]]:
    """The (address as /proc/net writes it, port) of every listening socket of ``inodes``."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN
                address, port = fields[1].rsplit(":", 1)
                listening.add((address, int(port, 16)))
    return listening


def test_only_the_app_port_listens_beyond_loopback_and_viewers_need_the_token() -> None:
    server = ServerProcess(POSEKIT_TOKEN="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    try:
        sid = httpx.post(
            f"{server.url}/api/sessions", json={"robot": "arm7"}, headers=auth, timeout=30
        ).json()["id"]
        relay = f"ws://127.0.0.1:{server.port}/viewer/{sid}?token=s3cret"
        with connect(relay, subprotocols=[f"viser-v{viser.__version__}"], open_timeout=30) as ws:
            assert ws.recv(timeout=30)  # the viewer's viser server is up and answers
            inodes = _socket_inodes(_process_tree(server.process.pid))
            listening = _listening_tcp(inodes)
            beyond_loopback = {port for address, port in listening if address not in LOOPBACK}
            assert beyond_loopback <= {server.port}
            viewers = {port for _, port in listening} - {server.port}
            assert viewers, "the viewer's viser server listens on a loopback port"
        assert httpx.get(f"{server.url}/api/sessions").status_code == 401
        assert httpx.get(f"{server.url}/viewer/{sid}").status_code == 401
    finally:
        server.stop()
