"""A real nginx in front of posekit replicas, run as the current user from a folder of
its own: the site is ``deploy/nginx/posekit.conf.template`` rendered the way the nginx
image's entrypoint renders it (only the named ``${...}`` variables are replaced), inside
a main configuration that keeps every file nginx writes (pid, logs, temporary bodies)
in that folder.

Independent of posekit (``bench/cluster_failover.py`` imports it too). nginx comes from
Debian's packages (``tools/ensure_nginx.sh``, run by ``make test``); ``POSEKIT_NGINX``
names another binary.
"""

from __future__ import annotations

import os
import shutil
import socket
import string
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE_TEMPLATE = REPO / "deploy" / "nginx" / "posekit.conf.template"
TEMPLATE_VARIABLES = ("POSEKIT_PROXY_LISTEN", "POSEKIT_REPLICA_1", "POSEKIT_REPLICA_2",
                      "POSEKIT_REPLICA_3")  # fmt: skip
TEMP_FOLDERS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def find_nginx() -> str | None:
    """The nginx binary to run, looked for as ``tools/ensure_nginx.sh`` does:
    ``POSEKIT_NGINX``, else ``nginx`` on ``POSEKIT_NGINX_PATH`` (by default the PATH, then
    ``/usr/sbin`` and ``/usr/local/sbin``, not on a normal user's PATH), else None."""
    chosen = os.environ.get("POSEKIT_NGINX")
    if chosen:
        return shutil.which(chosen)
    default = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    return shutil.which("nginx", path=os.environ.get("POSEKIT_NGINX_PATH", default))


def render_site(values: Mapping[str, str], template: Path = SITE_TEMPLATE) -> str:
    """The site configuration with the template's variables replaced (all must be given;
    nginx's own ``$variables`` are left alone, as envsubst with a variable list does)."""
    missing = [name for name in TEMPLATE_VARIABLES if name not in values]
    if missing:
        raise ValueError(f"no value for {', '.join(missing)}")
    return string.Template(template.read_text()).safe_substitute(
        {name: values[name] for name in TEMPLATE_VARIABLES}
    )


def main_conf(prefix: Path, site: Path) -> str:
    """An nginx.conf for ``nginx -p prefix``: in the foreground, one worker, every file
    under ``prefix``, the site included in ``http``. As root, workers stay root (the
    default user, nobody, could not write under ``prefix``)."""
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "".join(f"    {name}_temp_path {prefix / 'temp' / name};\n" for name in TEMP_FOLDERS)
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\n"
        f"error_log {prefix / 'error.log'} info;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        f"    access_log {prefix / 'access.log'};\n{temp}"
        f"    include {site};\n"
        "}\n"
    )


class Nginx:
    """nginx serving the posekit site on ``127.0.0.1:port`` in front of ``replicas``
    (``host:port`` each, three), from the folder ``prefix``."""

    def __init__(self, prefix: Path, port: int, replicas: Sequence[str]) -> None:
        binary = find_nginx()
        if binary is None:
            raise RuntimeError("no nginx binary (tools/ensure_nginx.sh installs Debian's)")
        self.prefix = prefix
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        for name in TEMP_FOLDERS:
            (prefix / "temp" / name).mkdir(parents=True, exist_ok=True)
        values = {"POSEKIT_PROXY_LISTEN": f"127.0.0.1:{port}"}
        values.update({f"POSEKIT_REPLICA_{i}": address for i, address in enumerate(replicas, 1)})
        site = prefix / "posekit.conf"
        site.write_text(render_site(values))
        conf = prefix / "nginx.conf"
        conf.write_text(main_conf(prefix, site))
        command = [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]
        checked = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx refused the configuration:\n{checked.stderr}")
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self._wait_listening()

    def _wait_listening(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nginx did not start: {self.error_log()}") from None
                time.sleep(0.05)

    def ws_url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    def error_log(self) -> str:
        log = self.prefix / "error.log"
        return log.read_text()[-4000:] if log.exists() else ""

    def stop(self) -> None:
        """Stop at once (SIGTERM: nginx's fast shutdown) and reap the process."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=10)
