"""Unpacking a zip archive from a stranger without letting it escape or explode.

Every member is checked before anything is written: its path must stay inside the
destination (relative, no ``..`` component, no backslash, no drive letter, no NUL), it
must be a regular file or a folder (symbolic links, devices and pipes are refused), it
must not be encrypted, and the number of members, each member's size and the total
uncompressed size must be under their caps (a zip bomb declares sizes it then has to
honour: :mod:`zipfile` refuses to read past a member's declared size, and the bytes
actually written are counted again while they are copied).
"""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from posekit.robots.errors import RobotFileInvalid, UploadTooLarge, raise_if_full

_DRIVE = re.compile(r"^[A-Za-z]:")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps on what one upload may unpack to.

    Attributes:
        member_bytes: Each file at most this many bytes, uncompressed.
        total_bytes: All files together at most this many bytes, uncompressed.
        members: At most this many files and folders.
    """

    member_bytes: int = 128 << 20
    total_bytes: int = 256 << 20
    members: int = 2000


def member_path(name: str) -> PurePosixPath:
    """The relative path of an archive member, or :class:`RobotFileInvalid` when the
    name could point outside the destination."""
    shown = name.replace("\x00", "\\0")
    if not name or "\x00" in name or "\\" in name:
        raise RobotFileInvalid(f"archive member {shown!r}: the name is not a plain relative path")
    if name.startswith("/") or _DRIVE.match(name):
        raise RobotFileInvalid(f"archive member {shown!r} has an absolute path")
    path = PurePosixPath(name)
    if any(part == ".." for part in path.parts):
        raise RobotFileInvalid(f"archive member {shown!r} points outside the archive ('..')")
    return path


def _check_kind(info: zipfile.ZipInfo) -> None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if info.create_system == 3 and kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        what = "a symbolic link" if kind == stat.S_IFLNK else "not a regular file"
        raise RobotFileInvalid(f"archive member {info.filename!r} is {what}")
    if info.flag_bits & 0x1:
        raise RobotFileInvalid(f"archive member {info.filename!r} is encrypted")


def check_members(archive: zipfile.ZipFile, limits: ArchiveLimits) -> list[zipfile.ZipInfo]:
    """The archive's members after every check of the module docstring (nothing is
    written yet)."""
    members = archive.infolist()
    if len(members) > limits.members:
        raise UploadTooLarge(
            f"the archive has {len(members)} members; at most {limits.members} are accepted"
        )
    seen: set[PurePosixPath] = set()
    total = 0
    for info in members:
        path = member_path(info.filename)
        _check_kind(info)
        if path in seen:
            raise RobotFileInvalid(f"archive member {info.filename!r} appears twice")
        seen.add(path)
        if info.file_size > limits.member_bytes:
            raise UploadTooLarge(
                f"archive member {info.filename!r} unpacks to {info.file_size} bytes; "
                f"each file may have at most {limits.member_bytes}"
            )
        total += info.file_size
        if total > limits.total_bytes:
            raise UploadTooLarge(
                f"the archive unpacks to more than {limits.total_bytes} bytes (the cap on "
                "an upload's files together)"
            )
    return members


def extract_zip(source: BinaryIO | Path, destination: Path, limits: ArchiveLimits) -> list[Path]:
    """Unpack the zip ``source`` into the (empty) folder ``destination``; returns the
    files written. Raises :class:`RobotFileInvalid` or :class:`UploadTooLarge` before
    anything is written when a member breaks a rule, and while copying when a member
    holds more than it declared."""
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise RobotFileInvalid(f"the upload is not a readable zip archive ({exc})") from None
    with archive:
        members = check_members(archive, limits)
        written: list[Path] = []
        total = 0
        for info in members:
            target = destination.joinpath(*member_path(info.filename).parts)
            try:
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise_if_full(exc)
                raise RobotFileInvalid(
                    f"archive member {info.filename!r} clashes with another member"
                ) from None
            total += _copy_member(archive, info, target, limits, total)
            written.append(target)
        return written


def _copy_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    target: Path,
    limits: ArchiveLimits,
    so_far: int,
) -> int:
    """Copy one member, counting its bytes against both caps; returns its size."""
    size = 0
    try:
        with archive.open(info) as member, open(target, "xb") as out:
            while chunk := member.read(_CHUNK):
                size += len(chunk)
                if size > limits.member_bytes or so_far + size > limits.total_bytes:
                    raise UploadTooLarge(
                        f"archive member {info.filename!r} unpacks to more than it declared "
                        "and more than the caps allow"
                    )
                out.write(chunk)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError) as exc:
        raise RobotFileInvalid(f"archive member {info.filename!r} cannot be read ({exc})") from None
    except OSError as exc:
        raise_if_full(exc)
        raise RobotFileInvalid(
            f"archive member {info.filename!r} clashes with another member"
        ) from None
    return size


def copy_limited(source: BinaryIO, target: Path, max_bytes: int) -> int:
    """Copy a single uploaded file, refusing it beyond ``max_bytes``; returns its size."""
    size = 0
    try:
        with open(target, "xb") as out:
            while chunk := source.read(_CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise UploadTooLarge(
                        f"the file is over {max_bytes} bytes (the cap on one file)"
                    )
                out.write(chunk)
    except OSError as exc:
        raise_if_full(exc)
        raise
    return size


def remove_tree(folder: Path) -> None:
    """Delete a folder and everything in it (no error when it is gone)."""
    shutil.rmtree(folder, ignore_errors=True)
