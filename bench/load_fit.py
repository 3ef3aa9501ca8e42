"""Where a delivered state's CPU goes past the peak: a least-squares fit over the rows of
``bench/server_load.py``'s tables.

For each process (the solver process, and the server process: ``API``) the CPU per state
delivered is fitted as

.. math:: u = a + b\\,\\frac{T}{S} + c\\,k

with :math:`S` the states delivered per second, :math:`T` the targets the clients sent
per second (each one read by the server process, applied or replaced by a newer one) and
:math:`k` the changes per state (targets applied). Multiplied by :math:`S`, that is
CPU [s/s] = :math:`a S + b T + c k S`: ``a`` [µs] per state, ``b`` per target received,
``c`` per target applied. The fit is also made without each of the two target terms, so
that the rms error [µs per state] shows which one the data need.

    python bench/server_load.py --sessions 100,200,400,600,800,1000 --clients lean > run1.txt
    python bench/load_fit.py run1.txt [run2.txt ...] [--from 400]

Rows with fewer sessions than ``--from`` are left out (below the peak, per-state costs
fall with the sessions as a pass's costs are shared). Only light (arm7) rows are read.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

_SECONDS = re.compile(r"(\d+(?:\.\d+)?) s per row")


def light_rows(paths: list[Path]) -> Iterator[tuple[float, int, list[str]]]:
    """The light (arm7) rows of ``paths`` in order: each its table's seconds per row, its
    sessions and its cells (the first ``N light (arm7)``)."""
    for path in paths:
        seconds = 10.0
        for line in path.read_text().splitlines():
            if match := _SECONDS.search(line):
                seconds = float(match.group(1))
            cells = [cell.strip() for cell in line.split("|")]
            if len(cells) == 15 and "light" in cells[0]:
                yield seconds, int(cells[0].split()[0]), cells


def rows(paths: list[Path], least: int) -> list[tuple[float, float, float, float, float]]:
    """``(states/s, targets/s, changes per state, solver µs, API µs)`` of each light row
    with at least ``least`` sessions."""
    found = []
    for seconds, sessions, cells in light_rows(paths):
        if sessions < least:
            continue
        states, targets = float(cells[11]), float(cells[6]) / seconds
        found.append((states, targets, float(cells[14]), float(cells[12]), float(cells[13])))
    return found


def fit(data: np.ndarray, columns: list[int], cost: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares coefficients of ``cost`` on a constant and ``data``'s ``columns``,
    and the rms error."""
    design = np.column_stack([np.ones(len(data)), *(data[:, i] for i in columns)])
    coef, *_ = np.linalg.lstsq(design, cost, rcond=None)
    return coef, float(np.sqrt(np.mean((design @ coef - cost) ** 2)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path, help="server_load.py outputs")
    parser.add_argument("--from", dest="least", type=int, default=400, help="least sessions")
    args = parser.parse_args()
    found = rows(args.tables, args.least)
    if len(found) < 4:
        raise SystemExit(f"{len(found)} rows: too few to fit three terms")
    table = np.array(found)
    received, applied = table[:, 1] / table[:, 0], table[:, 2]
    data = np.column_stack([received, applied])
    print(
        f"{len(found)} rows; targets received per state {received.min():.2f}-"
        f"{received.max():.2f}, applied per state {applied.min():.2f}-{applied.max():.2f}"
    )
    for name, cost in (("solver", table[:, 3]), ("API", table[:, 4])):
        for names in (["received", "applied"], ["received"], ["applied"]):
            columns = [["received", "applied"].index(n) for n in names]
            coef, rms = fit(data, columns, cost)
            text = ", ".join(f"{n} {v:.1f}" for n, v in zip(names, coef[1:], strict=True))
            print(
                f"{name:>6} µs/state = {coef[0]:.1f} per state + ({text}) per target; rms {rms:.1f}"
            )


if __name__ == "__main__":
    main()
