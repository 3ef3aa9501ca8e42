"""Several ``posekit up`` replicas on loopback sharing one PostgreSQL database, behind a
real nginx (:mod:`support.nginx`): the cluster of issue 11, for ``tests/cluster`` and
``bench/cluster_failover.py``.

Each replica is a process group of its own (``posekit up``),
so it can be killed (SIGKILL), paused (SIGSTOP) and resumed (SIGCONT) whole. Replicas
are named ``replica-1``, ``replica-2`` … (``POSEKIT_REPLICA_ID``) and log to files in
the cluster's folder. Independent of posekit's modules: it drives the ``posekit`` CLI.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

import httpx

from support.nginx import Nginx
from support.ports import free_port

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 90.0  # three replicas start together on two cores


class Replica:
    """``posekit up`` named ``replica_id`` on ``127.0.0.1:<free port>``, in its own
    process group, with ``environment`` added to this process's."""

    def __init__(self, replica_id: str, folder: Path, environment: Mapping[str, str]) -> None:
        self.replica_id = replica_id
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.address}"
        self.log_path = folder / f"{replica_id}.log"
        self._environment = dict(os.environ, POSEKIT_REPLICA_ID=replica_id, **environment)
        self._environment.setdefault("POSEKIT_MENAGERIE_DOWNLOAD", "false")
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def launch(self) -> None:
        """Start the process (not waiting for it: :meth:`wait_healthy`); again after a
        kill, under the same id and port."""
        if self._log is not None:
            self._log.close()
        self._log = self.log_path.open("ab")
        command = [sys.executable, "-m", "posekit.cli", "up", "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--robot", "none"],
            env=self._environment,
            cwd=REPO,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own: the replica's processes
        )

    def wait_healthy(self, deadline: float) -> None:
        """Wait until ``/api/health`` answers 200 (fails past ``deadline``, monotonic)."""
        assert self.process is not None
        while True:
            try:
                if httpx.get(self.url + "/api/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.replica_id} did not start:\n{self.log_tail()}")
            time.sleep(0.2)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal_group(self, signum: signal.Signals) -> None:
        """Send ``signum`` to every process of the replica (its process group)."""
        assert self.process is not None
        os.killpg(self.process.pid, signum)

    def kill(self) -> None:
        """kill -9 the replica's process group."""
        self.signal_group(signal.SIGKILL)
        assert self.process is not None
        self.process.wait(timeout=10)

    def pause(self) -> None:
        self.signal_group(signal.SIGSTOP)

    def resume(self) -> None:
        self.signal_group(signal.SIGCONT)

    def stop(self) -> None:
        """Stop cleanly (SIGINT, resumed first if paused); kill after 30 s."""
        if not self.alive:
            return
        assert self.process is not None
        self.resume()
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        try:  # processes left behind by a failed shutdown
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self._log is not None:
            self._log.close()

    def log_tail(self, size: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-size:] if self.log_path.exists() else ""


class Cluster:
    """``count`` replicas on ``database`` behind nginx on ``127.0.0.1:<free port>``.

    Leases last ``lease_ttl_s`` seconds (``POSEKIT_LEASE_TTL_S``); with a ``token``,
    every replica requires it and :attr:`headers` carry it. ``environment`` is given to
    every replica too. Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    def __init__(
        self, folder: Path, database: str, lease_ttl_s: float = 2.0, token: str | None = None,
        environment: Mapping[str, str] | None = None, count: int = 3,
    ) -> None:  # fmt: skip
        self.folder = folder
        self.lease_ttl_s = lease_ttl_s
        self.token = token
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        shared = {"POSEKIT_DB": database, "POSEKIT_LEASE_TTL_S": str(lease_ttl_s)}
        if token:
            shared["POSEKIT_TOKEN"] = token
        shared.update(environment or {})
        self.replicas = [
            Replica(f"replica-{index}", folder, shared) for index in range(1, count + 1)
        ]
        self.nginx: Nginx | None = None

    def client(self, timeout: float = 30.0) -> httpx.Client:
        """An HTTP client of the proxy, carrying the token."""
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=timeout)

    @property
    def url(self) -> str:
        assert self.nginx is not None
        return self.nginx.url

    def ws_url(self, path: str) -> str:
        assert self.nginx is not None
        return self.nginx.ws_url(path)

    def start(self) -> Cluster:
        for replica in self.replicas:
            replica.launch()
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            for replica in self.replicas:
                replica.wait_healthy(deadline)
            self.nginx = Nginx(
                self.folder / "nginx", free_port(), [r.address for r in self.replicas]
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.nginx is not None:
            self.nginx.stop()
        for replica in self.replicas:
            replica.stop()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def replica(self, replica_id: str) -> Replica:
        return next(r for r in self.replicas if r.replica_id == replica_id)

    def by_address(self, address: str) -> Replica:
        return next(r for r in self.replicas if r.address == address)

    def owner(self, session_id: str) -> Replica | None:
        """The replica serving ``session_id`` now, asked of each live replica directly:
        the one answering 200 (the others answer 503 ``not_owner`` naming it). None when
        none does. Asking a replica while the lease is free makes it take the lease."""
        for replica in self.replicas:
            if not replica.alive:
                continue
            try:
                answer = httpx.get(
                    f"{replica.url}/api/sessions/{session_id}", headers=self.headers, timeout=2.0
                )
            except httpx.HTTPError:
                continue
            if answer.status_code == 200:
                return replica
        return None


def viewer_frame(cluster: Cluster, session_id: str) -> bytes:
    """The first frame of the session's viewer socket opened through nginx (viser's
    subprotocol, the token in the header), as a browser's viewer page opens it."""
    import viser
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    protocol = Subprotocol(f"viser-v{viser.__version__}")
    with connect(
        cluster.ws_url(f"/viewer/{session_id}"),
        subprotocols=[protocol],
        additional_headers=cluster.headers,
        open_timeout=30,
        max_size=None,
    ) as socket:
        assert socket.subprotocol == protocol
        first = socket.recv(timeout=30)
    assert isinstance(first, bytes)
    return first


def served_by(response: httpx.Response) -> str:
    """The replica address that answered a request through nginx (the last one tried:
    ``X-Posekit-Upstream`` lists every address nginx tried, in order)."""
    return response.headers["x-posekit-upstream"].split(",")[-1].strip()


def metric(text: str, name: str) -> float:
    """The value of a metric in a Prometheus text exposition: its first sample, labelled
    (``name{replica="…"} 3.0``) or not."""
    for line in text.splitlines():
        if line.startswith((name + " ", name + "{")):
            return float(line.rsplit(None, 1)[1])
    raise KeyError(f"no metric {name}")
