"""No side door past the token: with ``POSEKIT_TOKEN`` set, the only listening socket of
the server and its children that a TCP client can reach is the app's port (which
refuses without the token); each viewer's viser server listens on a Unix-domain socket
in a directory only the server's user may enter.

Reads the sockets of the processes from ``/proc`` (Linux)."""

from __future__ import annotations

import os
import stat
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


def _listening_tcp_ports(inodes: set[str]) -> set[int]:
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # state LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _listening_unix_paths(inodes: set[str]) -> set[str]:
    paths = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[6] in inodes and int(fields[3], 16) & 0x10000:
            paths.add(fields[7])  # __SO_ACCEPTCON: listening
    return paths


def test_only_the_app_port_listens_and_viewers_are_private() -> None:
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
            assert _listening_tcp_ports(inodes) == {server.port}
            viewer_sockets = _listening_unix_paths(inodes)
            assert viewer_sockets, "the viewer's viser server listens on a Unix socket"
            for path in viewer_sockets:
                directory = os.stat(os.path.dirname(path))
                assert stat.S_IMODE(directory.st_mode) == 0o700
                assert directory.st_uid == os.getuid()
        assert httpx.get(f"{server.url}/api/sessions").status_code == 401
        assert httpx.get(f"{server.url}/viewer/{sid}").status_code == 401
    finally:
        server.stop()
