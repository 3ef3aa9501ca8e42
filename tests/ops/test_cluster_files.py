"""The cluster's deployment files say what the README promises: the compose file of the
cluster, the nginx template both it and the cluster tests use, and the Kubernetes
example (none of them run here: no Docker engine, no cluster). When a compose CLI is on
the machine, it validates both compose files too."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "deploy" / "nginx" / "posekit.conf.template"
K8S = REPO / "deploy" / "k8s"


def _compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.cluster.yml").read_text())


def _replicas(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in compose["services"].items() if n.startswith("posekit-")}


def test_compose_runs_three_replicas_on_postgres_behind_nginx() -> None:
    compose = _compose()
    services = compose["services"]
    replicas = _replicas(compose)
    assert len(replicas) == 3
    ids = {s["environment"]["POSEKIT_REPLICA_ID"] for s in replicas.values()}
    assert ids == set(replicas)  # distinct, and each its service's (resolvable) name
    for replica in replicas.values():
        assert replica["build"] == "." and replica["image"] == "posekit:latest"
        assert replica["environment"]["POSEKIT_DB"].startswith("postgresql://")
        assert "@postgres:5432/" in replica["environment"]["POSEKIT_DB"]
        assert replica["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert "ports" not in replica  # reached through nginx only
    data = {tuple(r["volumes"]) for r in replicas.values()}
    assert data == {("posekit-cluster-data:/data",)}  # one shared model cache
    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert any(v.endswith(":/var/lib/postgresql/data") for v in postgres["volumes"])
    assert {"posekit-cluster-data", "posekit-postgres"} <= set(compose["volumes"])


def test_compose_nginx_renders_the_template_for_the_replicas() -> None:
    compose = _compose()
    nginx = compose["services"]["nginx"]
    assert nginx["image"].startswith("nginx:")
    assert [port.split(":")[-1] for port in nginx["ports"]] == ["8000"]
    mount = "./deploy/nginx/posekit.conf.template:/etc/nginx/templates/posekit.conf.template:ro"
    assert mount in nginx["volumes"]
    environment = nginx["environment"]
    named = set(re.findall(r"\$\{(\w+)\}", TEMPLATE.read_text()))
    assert named <= set(environment)  # every template variable has a value
    assert all(re.match(environment["NGINX_ENVSUBST_FILTER"], name) for name in named)
    upstreams = {environment[f"POSEKIT_REPLICA_{i}"] for i in (1, 2, 3)}
    assert upstreams == {f"{name}:8000" for name in _replicas(compose)}
    assert set(nginx["depends_on"]) == set(_replicas(compose))


def test_the_template_hashes_the_session_and_retries_round_the_ring() -> None:
    text = TEMPLATE.read_text()
    assert "hash $posekit_session consistent;" in text
    assert "map $uri $posekit_session" in text
    assert "~^/api/sessions/(?<posekit_sid>[^/]+)" in text
    assert "~^/viewer/(?<posekit_sid>[^/]+)" in text
    directive = re.search(r"proxy_next_upstream ([^;]+);", text)
    assert directive is not None
    assert set(directive.group(1).split()) == {
        "error", "timeout", "http_502", "http_503", "non_idempotent"
    }  # fmt: skip
    assert "proxy_next_upstream_tries 3;" in text
    servers = re.findall(r"^\s*server (\S+) ([^;]*);", text, flags=re.MULTILINE)
    assert [options for _, options in servers] == ["max_fails=0"] * 3  # 503s mark none down
    assert "proxy_set_header Upgrade $http_upgrade;" in text


def test_the_default_compose_file_is_unchanged_by_the_cluster() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert list(compose["services"]) == ["posekit"]
    assert "profiles" not in compose["services"]["posekit"]


@pytest.mark.parametrize("compose_file", ["docker-compose.yml", "docker-compose.cluster.yml"])
def test_a_compose_cli_validates_the_file(compose_file: str) -> None:
    command = _compose_cli()
    if command is None:
        reason = "no compose CLI here (docker compose or docker-compose) to validate with"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; `make test` installs Debian's docker-compose where apt exists")
        pytest.skip(reason)
    checked = subprocess.run(
        [*command, "-f", compose_file, "config", "--quiet"],
        cwd=REPO, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr


def _compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def _k8s(kind: str) -> dict[str, Any]:
    documents = [
        document
        for path in sorted(K8S.glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if document
    ]
    assert all({"apiVersion", "kind", "metadata"} <= set(d) for d in documents)
    return next(d for d in documents if d["kind"] == kind)


@pytest.mark.parametrize("path", sorted(K8S.glob("*.yaml")), ids=lambda path: path.name)
def test_k8s_files_are_valid_kubernetes_resources(path: Path) -> None:
    """Each document, checked against the Kubernetes API's schemas (strict: no unknown
    field), offline, as `kubectl apply --dry-run=server` would against a cluster."""
    import kubernetes_validate

    version = kubernetes_validate.latest_version()
    for document in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(document, version, strict=True)


def test_k8s_deployment_names_replicas_after_their_pods() -> None:
    deployment = _k8s("Deployment")
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"] == deployment["spec"]["selector"]["matchLabels"]
    (container,) = pod["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["POSEKIT_REPLICA_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert container["readinessProbe"]["httpGet"]["path"] == "/api/health"
    secret = _k8s("Secret")
    assert {"secretRef": {"name": secret["metadata"]["name"]}} in container["envFrom"]
    assert {"POSEKIT_TOKEN", "POSEKIT_DB"} <= set(secret["stringData"])
    assert secret["stringData"]["POSEKIT_DB"].startswith("postgresql://")
    service = _k8s("Service")
    assert service["spec"]["selector"] == pod["metadata"]["labels"]


def test_k8s_ingress_hashes_the_session_id() -> None:
    ingress = _k8s("Ingress")
    annotations = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert annotations[prefix + "upstream-hash-by"] == "$posekit_session"
    assert "http_503" in annotations[prefix + "proxy-next-upstream"]
    assert "non_idempotent" in annotations[prefix + "proxy-next-upstream"]
    assert int(annotations[prefix + "proxy-read-timeout"]) >= 3600  # websockets stay open
    snippet = _k8s("ConfigMap")["data"]["http-snippet"]
    assert "map $uri $posekit_session" in snippet
    assert snippet.split("{", 1)[1] in TEMPLATE.read_text()  # the same map as compose's
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == _k8s("Service")["metadata"]["name"]
