"""Uploads from strangers: every hostile upload is refused with a 4xx that says why, and
leaves the registry and the data directory as they were."""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.own_server import OwnServer, start_own_server, stop_own_server
from support.robot_files import MJCF_ARM, box_obj, chain, write_urdf_package, zip_folder

ARM = MJCF_ARM.format(name="evil", reach=0.3, radius=0.03)


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    server = start_own_server(tmp_path_factory.mktemp("own"))
    yield server
    stop_own_server(server)


def zipped(*members: tuple[str | zipfile.ZipInfo, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def bomb() -> bytes:
    """8 MiB of zeros (the cap on one file is 1 MiB), about 8 kB zipped."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("robot/robot.xml", ARM)
        with archive.open("robot/meshes/upper.obj", "w") as member:
            for _ in range(8):
                member.write(bytes(1 << 20))
    return buffer.getvalue()


def many_bodies() -> str:
    """A valid chain of 60 bodies (the cap is 40)."""
    chain = "".join(
        f'<body name="b{i}" pos="0 0 0.01"><joint/><geom size="0.01"/>' for i in range(60)
    )
    return f"<mujoco><worldbody>{chain}{'</body>' * 60}</worldbody></mujoco>"


ENTITIES = (
    '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
    '<mujoco model="&c;"><worldbody/></mujoco>'
)
MESHES = {"robot/meshes/upper.obj": box_obj((0.03, 0.03, 0.15))}


def with_meshes(*members: tuple[str | zipfile.ZipInfo, bytes | str]) -> bytes:
    return zipped(*MESHES.items(), *members)


def outside_urdf(tmp_path: Path) -> bytes:
    urdf = write_urdf_package(tmp_path)
    urdf.write_text(urdf.read_text().replace("package://two_link_description/", "file:///etc/"))
    return zip_folder(tmp_path)


HOSTILE: dict[str, tuple[str, object, int, str]] = {
    # name: (file name, content, status, words of the message)
    "traversal": (
        "evil.zip",
        with_meshes(("robot/../../evil.xml", ARM)),
        422,
        "outside the archive",
    ),
    "absolute path": ("evil.zip", zipped(("/tmp/evil.xml", ARM)), 422, "absolute path"),
    "symlink": (
        "evil.zip",
        with_meshes(("robot/robot.xml", ARM), symlink("robot/meshes/link.obj", "/etc/passwd")),
        422,
        "symbolic link",
    ),
    "zip bomb": ("evil.zip", bomb(), 413, "each file may have at most"),
    "oversized model": ("evil.xml", many_bodies(), 413, "61 bodies"),
    "include outside": (
        "evil.zip",
        with_meshes(("robot/robot.xml", '<mujoco><include file="../../../etc/x.xml"/></mujoco>')),
        422,
        "points outside the upload",
    ),
    "mesh by absolute path": (
        "evil.xml",
        ARM.replace('file="upper.obj"', 'file="/etc/passwd"'),
        422,
        "relative to the upload",
    ),
    "meshdir outside": (
        "evil.xml",
        ARM.replace('meshdir="meshes"', 'meshdir="../../.."'),
        422,
        "points outside the upload",
    ),
    "urdf mesh outside": ("evil.zip", outside_urdf, 422, "relative to the upload"),
    "malformed xml": ("evil.xml", "<mujoco><worldbody></mujoco>", 422, "malformed XML"),
    "xml entities": ("evil.xml", ENTITIES, 422, "malformed XML"),
    "no model": ("evil.zip", zipped(("readme.txt", "hello")), 422, "no MJCF"),
    "not a model file": ("evil.exe", b"MZ\x90\x00", 422, "upload an MJCF"),
    "mujoco refuses it": (
        "evil.xml",
        "<mujoco><worldbody><geom type='box'/></worldbody></mujoco>",
        422,
        "MuJoCo could not compile evil.xml",
    ),
    "archive too large": ("evil.zip", b"PK\x03\x04" + bytes(2 << 20), 413, "exceeds the limit"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_uploads_are_refused_and_change_nothing(
    own: OwnServer, case: str, tmp_path: Path
) -> None:
    filename, content, status, words = HOSTILE[case]
    if callable(content):
        content = content(tmp_path)
    payload = content.encode() if isinstance(content, str) else content
    robots_before = own.client.get("/api/robots").json()
    stored_before = (
        sorted(p.name for p in (own.data / "robots").glob("*"))
        if (own.data / "robots").exists()
        else []
    )
    response = own.client.post("/api/robots", files={"file": (filename, payload)})
    assert response.status_code == status, response.text
    body = response.json()
    assert words in body["detail"], body
    assert str(own.data) not in body["detail"] and "/tmp/" not in body["detail"]
    assert own.client.get("/api/robots").json() == robots_before
    stored_after = (
        sorted(p.name for p in (own.data / "robots").glob("*"))
        if (own.data / "robots").exists()
        else []
    )
    assert stored_after == stored_before  # nothing left behind
    assert not Path("/tmp/evil.xml").exists()


def test_an_upload_needs_the_token_like_every_call(tmp_path: Path) -> None:
    import httpx
    from posekit.settings import Settings
    from support.servers import LiveServer

    settings = Settings.from_env({"POSEKIT_TOKEN": "s3cret", "POSEKIT_DATA_DIR": str(tmp_path)})
    live = LiveServer(settings=settings).start()
    try:
        files = {"file": ("arm.xml", ARM.encode())}
        refused = httpx.post(f"{live.base_url}/api/robots", files=files)
        assert refused.status_code == 401
        assert httpx.delete(f"{live.base_url}/api/robots/arm7").status_code == 401
        assert not (tmp_path / "robots").exists()
    finally:
        live.stop()


def test_a_cross_site_form_post_cannot_upload_a_robot(own: OwnServer) -> None:
    """A page of another site can send a multipart form to a tokenless server on loopback
    without asking CORS first; the server refuses it from its Origin."""
    before = own.client.get("/api/robots").json()
    files = {"file": ("arm.xml", ARM.encode())}
    evil = own.client.post("/api/robots", files=files, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and evil.json()["code"] == "forbidden"
    deleted = own.client.delete("/api/robots/my_arm", headers={"Origin": "http://evil.example"})
    assert deleted.status_code == 403
    assert own.client.get("/api/robots").json() == before
    same = f"http://127.0.0.1:{own.live.port}"
    no_meshes = ARM.replace('<asset><mesh name="upper" file="upper.obj"/></asset>', "").replace(
        'type="mesh" mesh="upper"', 'type="box" size="0.03 0.03 0.15"'
    )
    mine = own.client.post(
        "/api/robots", files={"file": ("mine.xml", no_meshes.encode())}, headers={"Origin": same}
    )
    assert mine.status_code == 201, mine.text
    assert own.client.delete("/api/robots/mine", headers={"Origin": same}).status_code == 204


def arm_zip(name: str) -> tuple[str, bytes]:
    arm = MJCF_ARM.format(name=name, reach=0.3, radius=0.03)
    return f"{name}.zip", with_meshes((f"robot/{name}.xml", arm))


def test_uploads_at_once_are_checked_one_at_a_time_the_others_refused_to_retry(
    own: OwnServer,
) -> None:
    """Uploads arriving together are not queued in the server's worker threads (50 of
    them held every thread: health checks took 25 s): one is checked, each other one
    gets 429 ``uploads_busy`` with ``Retry-After`` at once, keeps nothing, and goes
    through when sent again; reads are answered meanwhile."""
    import threading

    import httpx

    names = [f"burst_{i}" for i in range(3)]  # the server keeps 3 uploads at most
    start = threading.Barrier(len(names))
    answers: dict[str, httpx.Response] = {}

    def upload(name: str) -> None:
        start.wait()
        answers[name] = httpx.post(
            f"{own.live.base_url}/api/robots", files={"file": arm_zip(name)}, timeout=120
        )

    threads = [threading.Thread(target=upload, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    health = own.client.get("/api/health")  # while the burst is checked
    for thread in threads:
        thread.join()
    assert health.status_code == 200
    busy = [name for name, answer in answers.items() if answer.status_code == 429]
    assert busy, {name: answer.status_code for name, answer in answers.items()}
    for name in busy:
        assert answers[name].json()["code"] == "uploads_busy"
        assert answers[name].headers["Retry-After"] == "1"
    assert all(answers[n].status_code == 201 for n in names if n not in busy), {
        n: answers[n].text[:200] for n in names if n not in busy
    }
    listed = {robot["name"] for robot in own.client.get("/api/robots").json()}
    assert listed.isdisjoint(busy)  # nothing kept of a refused upload
    for name in busy:  # sent again one by one, each goes through
        again = own.client.post("/api/robots", files={"file": arm_zip(name)})
        assert again.status_code == 201, again.text
    for name in names:
        assert own.client.delete(f"/api/robots/{name}").status_code == 204


def test_as_many_uploads_as_allowed_at_once_are_checked_together(tmp_path: Path) -> None:
    """``POSEKIT_UPLOAD_AT_ONCE`` 3: three uploads sent together are all checked and
    served (with one at a time, as above, some of them are refused busy)."""
    import io
    import threading

    from posekit.robots import RobotRegistry
    from posekit.robots.uploads import RobotUploads, UploadLimits

    uploads = RobotUploads(RobotRegistry(menagerie=False), tmp_path, UploadLimits(at_once=3))
    names = [f"together_{i}" for i in range(3)]
    start = threading.Barrier(len(names))
    served: dict[str, str] = {}

    def upload(name: str) -> None:
        filename, payload = arm_zip(name)
        start.wait()
        served[name] = uploads.add(filename, io.BytesIO(payload), name).name

    threads = [threading.Thread(target=upload, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert served == {name: name for name in names}


def test_an_upload_whose_step_is_too_slow_is_refused_naming_the_setting(tmp_path: Path) -> None:
    """With a 2 ms budget, a 256-DoF chain (the DoF cap) whose step takes about 16 ms is
    refused, its figure and the setting named; the same chain of 16 DoF (about 0.015 ms)
    is served."""
    from fastapi.testclient import TestClient
    from posekit.app import create_app
    from posekit.settings import Settings

    settings = Settings.from_env({"POSEKIT_DATA_DIR": str(tmp_path), "POSEKIT_MAX_STEP_MS": "2"})
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        before = client.get("/api/robots").json()
        slow = client.post("/api/robots", files={"file": ("slow.xml", chain(256).encode())})
        assert slow.status_code == 413, slow.text[:300]
        assert "POSEKIT_MAX_STEP_MS" in slow.json()["detail"]
        assert "ms" in slow.json()["detail"].split("takes")[1]
        assert client.get("/api/robots").json() == before
        quick = client.post("/api/robots", files={"file": ("quick.xml", chain(16).encode())})
        assert quick.status_code == 201, quick.text[:300]
