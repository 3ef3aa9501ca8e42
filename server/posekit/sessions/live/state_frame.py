"""The compact binary ``state`` frame: what ``WS …/stream?format=binary`` sends instead of
the JSON ``state`` message (every other message stays a JSON text frame).

All numbers little-endian; the header is 48 bytes, so ``q`` starts 8-byte aligned:

======  ====  =======  ==========================================================
offset  size  type     field
======  ====  =======  ==========================================================
0       4     bytes    magic ``b"PKS1"`` (posekit state, layout 1)
4       4     u32      flags: bit 0 converged, bit 1 throttled
8       8     u64      seq
16      8     u64      revision
24      8     f64      time [s since the epoch]
32      4     f32      solve_us [µs]
36      4     f32      rate_hz: the rate the session is stepped at [Hz]
40      1     u8       status: 0 running, 1 converged, 2 failed, 3 paused
41      1     u8       (zero)
42      2     u16      nq
44      2     u16      n_errors
46      2     u16      ref_bytes
48      8·nq  f64[nq]  q
…       8·n   f64[n]   errors, in the order of the task names of the latest ``tasks``
                       message (NaN: no error vector, or disabled)
…       …     utf-8    ref, as compact JSON in UTF-8 (``ref_bytes`` bytes; 0: null)
…       …     utf-8    error: why the last step failed (to the end of the frame)
======  ====  =======  ==========================================================

A frame is about a third of the JSON message and costs the server no float formatting.
"""

from __future__ import annotations

import json
import math
import struct
from array import array
from typing import Any

import msgspec

_encode_json = msgspec.json.encode  # compact UTF-8 JSON, in C (json.dumps: ~40× the time)
MAGIC = b"PKS1"
HEADER = struct.Struct("<4sIQQdffBxHHH")
STATUSES = ("running", "converged", "failed", "paused")
STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}
CONVERGED, THROTTLED = 1, 2


def encode(
    *,
    seq: int,
    revision: int,
    time: float,
    solve_us: float,
    rate_hz: float,
    status: str,
    converged: bool,
    throttled: bool,
    q: list[float],
    errors: list[float | None],
    ref: Any,
    error: str | None,
) -> bytes:
    """The binary frame of a state (layout in the module docstring)."""
    ref_bytes = b"" if ref is None else _encode_json(ref)
    flags = (CONVERGED if converged else 0) | (THROTTLED if throttled else 0)
    header = HEADER.pack(
        MAGIC,
        flags,
        seq,
        revision,
        time,
        solve_us,
        rate_hz,
        STATUS_CODES[status],
        len(q),
        len(errors),
        len(ref_bytes),
    )
    norms = array("d", [math.nan if e is None else e for e in errors])
    return b"".join(
        (header, array("d", q).tobytes(), norms.tobytes(), ref_bytes, (error or "").encode())
    )


def decode(frame: bytes, task_names: list[str] | None = None) -> dict[str, Any]:
    """The fields of a frame as the JSON ``state`` message has them (``errors`` keyed by
    ``task_names`` when given, else a list)."""
    magic, flags, seq, revision, time, solve_us, rate_hz, status, nq, n, ref_len = (
        HEADER.unpack_from(frame)
    )
    if magic != MAGIC:
        raise ValueError(f"not a posekit state frame (magic {magic!r})")
    offset = HEADER.size
    q = array("d", frame[offset : offset + 8 * nq]).tolist()
    offset += 8 * nq
    norms = [None if math.isnan(e) else e for e in array("d", frame[offset : offset + 8 * n])]
    offset += 8 * n
    ref = json.loads(frame[offset : offset + ref_len]) if ref_len else None
    error = frame[offset + ref_len :].decode() or None
    errors: dict[str, float | None] | list[float | None] = (
        dict(zip(task_names, norms, strict=True)) if task_names is not None else norms
    )
    return {
        "type": "state",
        "seq": seq,
        "time": time,
        "q": q,
        "errors": errors,
        "converged": bool(flags & CONVERGED),
        "status": STATUSES[status],
        "error": error,
        "solve_us": solve_us,
        "ref": ref,
        "revision": revision,
        "throttled": bool(flags & THROTTLED),
        "rate_hz": rate_hz,
    }
