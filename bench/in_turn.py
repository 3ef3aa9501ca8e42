"""Each level's share of the level just before it, over ``bench/server_load.py`` tables
of levels run in turn on one server, and what that share is made of.

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

Each share is then split in two factors, :math:`S_1/S_0 = (C_1/C_0) \\cdot
((S_1/C_1)/(S_0/C_0))`, with :math:`C` the server's CPU (its API and solver processes,
% of a core): the **CPU share**, how much of the machine the server got at the larger
level against the smaller one (the clients run on the same cores: what they take more
the server gets less), and the **efficiency share**, states per CPU second of the
server against the smaller level's. A server whose cost per state did not grow at all
(efficiency share 1) would still keep only the CPU share of its total.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import NamedTuple

from load_fit import light_rows

WITHIN = 0.9
"""A pair whose larger level keeps at least this share of the smaller one's total."""


class Pair(NamedTuple):
    """A larger level against the level just before it."""

    total: float  # S_1 / S_0: states per second in all
    cpu: float  # C_1 / C_0: the server's CPU (API and solver processes)
    client_cpu: tuple[float, float]  # the clients' CPU at both levels [% of a core]

    @property
    def efficiency(self) -> float:
        """:math:`(S_1/C_1)/(S_0/C_0)`: states per CPU second of the server."""
        return self.total / self.cpu


def pairs(path: Path, larger: int) -> list[Pair]:
    """Each row of ``larger`` sessions in ``path`` that follows a row of fewer sessions,
    against that row."""
    found = []
    before: tuple[int, float, float, float] | None = None
    for _, sessions, cells in light_rows([path]):
        states, cpu = float(cells[11]), float(cells[7].rstrip("%"))
        clients = float(cells[9].rstrip("%"))
        if sessions == larger and before is not None and before[0] < larger:
            found.append(Pair(states / before[1], cpu / before[2], (before[3], clients)))
        before = (sessions, states, cpu, clients)
    return found


def shares(path: Path, larger: int) -> list[float]:
    """:math:`S_{larger} / S_{before}` for each row of ``larger`` sessions in ``path``
    that follows a row of fewer sessions."""
    return [pair.total for pair in pairs(path, larger)]


def _spread(name: str, values: list[float]) -> str:
    return (
        f"{name} {100 * min(values):.0f}-{100 * max(values):.0f} % "
        f"(median {100 * statistics.median(values):.0f} %)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path, help="server_load.py outputs")
    parser.add_argument("--larger", type=int, default=1000, help="sessions of the larger level")
    args = parser.parse_args()
    found = [pair for path in args.tables for pair in pairs(path, args.larger)]
    if not found:
        raise SystemExit(f"no row of {args.larger} sessions after a smaller level")
    print("total    CPU  efficiency  clients [% of a core]")
    for pair in found:
        low, high = pair.client_cpu
        print(
            f"{100 * pair.total:3.0f} %  {100 * pair.cpu:3.0f} %  {100 * pair.efficiency:8.0f} %"
            f"  {low:.0f} -> {high:.0f}"
        )
    totals = [pair.total for pair in found]
    within = sum(share >= WITHIN for share in totals)
    print(
        f"{len(found)} pairs: {_spread('total', totals)}, {within} within "
        f"{100 * (1 - WITHIN):.0f} %; {_spread('CPU', [p.cpu for p in found])}; "
        f"{_spread('efficiency', [p.efficiency for p in found])}"
    )


if __name__ == "__main__":
    main()
