"""The children that read an upload cannot read anything else, however a path resolves:
the compile child, given models whose references leave the upload (which the server's
path checks would refuse first; here they are handed to it directly), fails to read the
planted file outside, and its content appears in no answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trimesh
from posekit.robots.compile_check import ModelCaps, check_compiles
from posekit.robots.errors import RobotFileInvalid
from posekit.robots.loading import ModelSource

SECRET = "planted_outside_the_upload"
INCLUDED = f'<mujoco><worldbody><body name="{SECRET}"><geom size=".1"/></body></worldbody></mujoco>'


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    upload, outside = tmp_path / "upload", tmp_path / "outside"
    (upload / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.xml").write_text(INCLUDED)
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(outside / "secret.stl")
    return upload, outside


def _compile(upload: Path, xml: str) -> dict:
    main = upload / "robot.xml"
    main.write_text(xml)
    source = ModelSource("mjcf", main, None, upload, frozenset({main}))
    return check_compiles(source, ModelCaps(), timeout_s=60)


@pytest.mark.parametrize(
    "reference",
    [
        "absolute include",
        "relative include",
        "nested include",
        "meshdir",
        "absolute mesh",
        "symlinked mesh",
    ],
)
def test_the_compile_child_reads_nothing_outside_the_upload(tmp_path: Path, reference: str) -> None:
    upload, outside = _layout(tmp_path)
    mesh_body = '<worldbody><body><geom type="mesh" mesh="m"/></body></worldbody>'
    xml = {
        "absolute include": f'<mujoco><include file="{outside}/secret.xml"/></mujoco>',
        "relative include": '<mujoco><include file="../outside/secret.xml"/></mujoco>',
        "nested include": '<mujoco><include file="sub/a.xml"/></mujoco>',
        "meshdir": f'<mujoco><compiler meshdir="{outside}"/><asset><mesh name="m" '
        f'file="secret.stl"/></asset>{mesh_body}</mujoco>',
        "absolute mesh": f'<mujoco><asset><mesh name="m" file="{outside}/secret.stl"/></asset>'
        f"{mesh_body}</mujoco>",
        "symlinked mesh": '<mujoco><asset><mesh name="m" file="sub/link.stl"/></asset>'
        f"{mesh_body}</mujoco>",
    }[reference]
    (upload / "sub" / "a.xml").write_text('<mujoco><include file="b.xml"/></mujoco>')
    (upload / "sub" / "b.xml").write_text(
        f'<mujoco><include file="{outside}/secret.xml"/></mujoco>'
    )
    (upload / "sub" / "link.stl").symlink_to(outside / "secret.stl")
    with pytest.raises(RobotFileInvalid) as refused:
        _compile(upload, xml)
    assert SECRET not in str(refused.value)


def test_the_compile_child_reads_the_upload_itself(tmp_path: Path) -> None:
    upload, _ = _layout(tmp_path)
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(upload / "sub" / "own.stl")
    (upload / "sub" / "part.xml").write_text(
        '<mujoco><worldbody><body name="own"><geom type="mesh" mesh="m"/></body></worldbody>'
        "</mujoco>"
    )
    stats = _compile(
        upload,
        '<mujoco><asset><mesh name="m" file="sub/own.stl"/></asset>'
        '<include file="sub/part.xml"/></mujoco>',
    )
    assert "own" in stats["body_names"]


def test_a_confined_process_cannot_open_files_elsewhere(tmp_path: Path) -> None:
    """Also when a folder it is given does not exist yet (a fresh machine's mesh cache:
    confinement was silently off there)."""
    allowed, elsewhere = tmp_path / "allowed", tmp_path / "elsewhere"
    allowed.mkdir()
    elsewhere.mkdir()
    (allowed / "a.txt").write_text("ok")
    (elsewhere / "b.txt").write_text(SECRET)
    script = f"""
from pathlib import Path
from posekit.robots.confinement import confine
assert confine([Path({str(allowed)!r}), Path({str(tmp_path / "not-made-yet")!r})])
print(Path({str(allowed)!r}, "a.txt").read_text())
try:
    print(Path({str(elsewhere)!r}, "b.txt").read_text())
except PermissionError:
    print("refused")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "refused"]
