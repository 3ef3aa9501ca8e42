"""Unpacking untrusted zips: members confined, links refused, sizes capped before writing."""

from __future__ import annotations

import io
import stat
import warnings
import zipfile
from pathlib import Path

import pytest
from posekit.robots.errors import RobotFileInvalid, UploadTooLarge
from posekit.robots.safe_archive import ArchiveLimits, extract_zip, member_path

LIMITS = ArchiveLimits(member_bytes=1 << 20, total_bytes=2 << 20, members=50)


def zipped(*members: tuple[str | zipfile.ZipInfo, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    buffer.seek(0)
    return buffer


def symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def test_a_plain_archive_is_unpacked(tmp_path: Path) -> None:
    written = extract_zip(
        zipped(("robot/a.xml", b"<mujoco/>"), ("robot/m/b.obj", b"v 0 0 0")), tmp_path, LIMITS
    )
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == [
        "robot/a.xml",
        "robot/m/b.obj",
    ]
    assert (tmp_path / "robot" / "m" / "b.obj").read_bytes() == b"v 0 0 0"


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([("../evil.xml", b"x")], "outside"),
        ([("robot/../../evil.xml", b"x")], "outside"),
        ([("/etc/evil.xml", b"x")], "absolute"),
        ([("C:/evil.xml", b"x")], "absolute"),
        ([("robot\\..\\evil.xml", b"x")], "plain relative"),
        ([symlink("robot/link.xml", "/etc/passwd")], "symbolic link"),
        ([("a.xml", b"x"), ("a.xml", b"y")], "twice"),
    ],
)
def test_members_that_could_escape_are_refused_before_anything_is_written(
    tmp_path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]], message: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate it writes
        archive = zipped(*members)
    with pytest.raises(RobotFileInvalid, match=message):
        extract_zip(archive, tmp_path, LIMITS)
    assert list(tmp_path.iterdir()) == []
    assert not (tmp_path.parent / "evil.xml").exists()


def test_a_zip_bomb_is_refused_from_its_declared_sizes(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("bomb.bin", "w") as member:
            for _ in range(64):  # 64 MiB of zeros: about 64 kB compressed
                member.write(bytes(1 << 20))
    assert buffer.tell() < 1 << 20
    buffer.seek(0)
    with pytest.raises(UploadTooLarge, match=r"bomb\.bin"):
        extract_zip(buffer, tmp_path, LIMITS)
    assert list(tmp_path.iterdir()) == []


def test_the_total_and_the_member_count_are_capped(tmp_path: Path) -> None:
    many = zipped(*((f"f{i}.txt", b"x") for i in range(51)))
    with pytest.raises(UploadTooLarge, match="51 members"):
        extract_zip(many, tmp_path, LIMITS)
    big = zipped(*((f"f{i}.bin", bytes(900_000)) for i in range(3)))
    with pytest.raises(UploadTooLarge, match="more than"):
        extract_zip(big, tmp_path, LIMITS)
    assert list(tmp_path.iterdir()) == []


def test_a_member_holding_more_than_it_declares_is_cut_off(tmp_path: Path) -> None:
    """A forged header (small declared size, more data) cannot write past the caps:
    zipfile stops at the declared size and its CRC check fails."""
    data = zipped(("a.bin", bytes(200_000)))
    raw = bytearray(data.getvalue())
    for header, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size
        at = raw.find(header)
        raw[at + offset : at + offset + 4] = (1000).to_bytes(4, "little")
    with pytest.raises((RobotFileInvalid, UploadTooLarge)):
        extract_zip(io.BytesIO(bytes(raw)), tmp_path, LIMITS)
    assert not (tmp_path / "a.bin").exists() or (tmp_path / "a.bin").stat().st_size <= 1000


def test_member_path_accepts_plain_relative_names() -> None:
    assert member_path("robot/meshes/a.stl").parts == ("robot", "meshes", "a.stl")
    assert member_path("./robot/a.xml").parts == ("robot", "a.xml")


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RobotFileInvalid, match="not a readable zip"):
        extract_zip(io.BytesIO(b"PK\x03\x04 but not really"), tmp_path, LIMITS)
