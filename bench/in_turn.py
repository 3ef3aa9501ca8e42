"""Each level's share of the level just before it, over ``bench/server_load.py`` tables
of levels run in turn on one server.

On a machine whose speed drifts within minutes, an ascending levels run cannot tell a
fall past saturation from a slower minute. Levels in turn (``--sessions
400,1000,400,1000,…``) put each larger level right after a smaller one, so that each
pair's ratio of states delivered per second in all, :math:`S_{1000} / S_{400}`, is
measured side by side:

    python bench/server_load.py --sessions 400,1000,400,1000,400,1000 --clients lean > a.txt
    python bench/in_turn.py a.txt [b.txt ...] [--larger 1000]

prints each pair's share [%] of the smaller level's total, then their range, median and
how many are within 10 % of it. Only light (arm7) rows are read; a pair is a row of
``--larger`` sessions and the row just before it, in the same file.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from load_fit import light_rows

WITHIN = 0.9
"""A pair whose larger level keeps at least this share of the smaller one's total."""


def shares(path: Path, larger: int) -> list[float]:
    """:math:`S_{larger} / S_{before}` for each row of ``larger`` sessions in ``path``
    that follows a row of fewer sessions."""
    found = []
    before: tuple[int, float] | None = None
    for _, sessions, cells in light_rows([path]):
        states = float(cells[11])
        if sessions == larger and before is not None and before[0] < larger:
            found.append(states / before[1])
        before = (sessions, states)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path, help="server_load.py outputs")
    parser.add_argument("--larger", type=int, default=1000, help="sessions of the larger level")
    args = parser.parse_args()
    found = [share for path in args.tables for share in shares(path, args.larger)]
    if not found:
        raise SystemExit(f"no row of {args.larger} sessions after a smaller level")
    print("shares [%]:", ", ".join(f"{100 * share:.0f}" for share in found))
    within = sum(share >= WITHIN for share in found)
    print(
        f"{len(found)} pairs: {100 * min(found):.0f}-{100 * max(found):.0f} %, median "
        f"{100 * statistics.median(found):.0f} %, {within} within {100 * (1 - WITHIN):.0f} %"
    )


if __name__ == "__main__":
    main()
