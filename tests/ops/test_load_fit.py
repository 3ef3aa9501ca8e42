"""``bench/load_fit.py``: the fit the README's account of the total past the peak rests on
recovers known costs, and gives the README's figures from the runs kept in ``docs/runs``;
``bench/in_turn.py``'s shares of levels run in turn, likewise."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
from support.models import REPO_ROOT

if str(REPO_ROOT / "bench") not in sys.path:
    sys.path.append(str(REPO_ROOT / "bench"))

import in_turn
import load_fit

HEADER = "posekit server load (levels): sessions at 60 Hz, targets at 20 Hz, 5 s per row\n"


def _row(
    sessions: int,
    states: float,
    targets: float,
    changes: float,
    api: float,
    server_cpu: float = 130.0,
    client_cpu: float = 35.0,
) -> str:
    cells = [f"{sessions} light (arm7)", "20.0", "19.9", "100.0", "150.0", "200.0"]
    cells += [str(int(targets * 5)), f"{server_cpu:.0f}%", "70%", f"{client_cpu:.0f}%", "0%"]
    cells += [f"{states:.0f}"]
    cells += ["30", f"{api:.3f}", f"{changes:.2f}"]
    return " | ".join(cells) + "\n"


def _spread(shares: list[float]) -> tuple[int, int, int]:
    """The least, the largest and the median of ``shares``, in whole percent."""
    return (
        round(100 * min(shares)),
        round(100 * max(shares)),
        round(100 * statistics.median(shares)),
    )


def test_the_fit_recovers_the_costs_of_synthetic_rows(tmp_path: Path) -> None:
    """Rows made from 15 µs per state + 26 per target received + 4 per target applied
    (server process) give those three back, and the fit without the targets received
    has a larger error; rows under ``--from`` and heavy rows are left out."""
    generator = np.random.default_rng(1)
    lines = [HEADER, _row(200, 12000, 4000, 0.33, 999.0)]
    for sessions in (400, 600, 800, 1000) * 3:
        states = generator.uniform(15000, 24000)
        targets, changes = 20.0 * sessions, generator.uniform(0.33, 0.95)
        lines.append(
            _row(sessions, states, targets, changes, 15 + 26 * targets / states + 4 * changes)
        )
    lines.append(_row(400, 900, 300, 0.3, 999.0).replace("light (arm7)", "heavy (G1)"))
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    table = np.array(load_fit.rows([path], least=400))
    assert len(table) == 12
    data = np.column_stack([table[:, 1] / table[:, 0], table[:, 2]])
    coef, rms = load_fit.fit(data, [0, 1], table[:, 4])
    assert np.allclose(coef, [15.0, 26.0, 4.0], atol=0.05) and rms < 0.01
    assert load_fit.fit(data, [1], table[:, 4])[1] > 1.0


def test_the_kept_runs_give_the_readme_s_figures() -> None:
    """The server process's 15 µs per state and 26 per target received (rms 2.8), over
    the 68 lean rows of 400 sessions and more kept in ``docs/runs``."""
    path = REPO_ROOT / "docs" / "runs" / "2026-11-29-zen4-lean.txt"
    table = np.array(load_fit.rows([path], least=400))
    assert len(table) == 68
    data = np.column_stack([table[:, 1] / table[:, 0], table[:, 2]])
    coef, rms = load_fit.fit(data, [0, 1], table[:, 4])
    assert (round(coef[0]), round(coef[1]), round(coef[2])) == (15, 26, 4)
    assert round(rms, 1) == 2.8
    assert round(load_fit.fit(data, [1], table[:, 4])[1], 1) == 6.6


def test_the_kept_runs_of_the_held_reads_give_the_readme_s_figures() -> None:
    """A target received costs the server process 7.1 µs with the held reads and 21.3
    without (the Zen 3 machine's interleaved lean runs, 20 rows each of 400 sessions and
    more), and the solver process the same either way."""
    figures = {}
    for name in ("held", "before"):
        path = REPO_ROOT / "docs" / "runs" / f"2026-12-01-zen3-{name}.txt"
        table = np.array(load_fit.rows([path], least=400))
        assert len(table) == 20
        received = (table[:, 1] / table[:, 0])[:, None]
        api, api_rms = load_fit.fit(received, [0], table[:, 4])
        solver, _ = load_fit.fit(received, [0], table[:, 3])
        figures[name] = (round(api[0], 1), round(api[1], 1), round(api_rms, 1), round(solver[0]))
    assert figures["held"] == (79.6, 7.1, 5.9, 81)
    assert figures["before"] == (67.3, 21.3, 9.7, 81)


def test_levels_in_turn_pair_each_larger_level_with_the_one_before(tmp_path: Path) -> None:
    """A row of the larger level counts against the row just before it, and only when
    that one has fewer sessions."""
    path = tmp_path / "run.txt"
    levels = ((400, 2000.0), (1000, 1800.0), (1000, 900.0), (400, 1000.0), (1000, 1100.0))
    path.write_text(HEADER + "".join(_row(n, states, 0.0, 0.5, 40.0) for n, states in levels))
    assert in_turn.shares(path, 1000) == [0.9, 1.1]
    assert in_turn.shares(path, 400) == []


def test_a_share_splits_into_the_server_s_cpu_and_its_states_per_cpu_second(
    tmp_path: Path,
) -> None:
    """1000 sessions with 80 % of the 400's states, on 90 % of its CPU (the clients took
    20 points more): a CPU share of 0.9 and an efficiency share of 0.8 / 0.9."""
    path = tmp_path / "run.txt"
    rows = [_row(400, 2000.0, 0.0, 0.5, 40.0, 140.0, 35.0)]
    rows.append(_row(1000, 1600.0, 0.0, 0.5, 40.0, 126.0, 55.0))
    path.write_text(HEADER + "".join(rows))
    (pair,) = in_turn.pairs(path, 1000)
    assert pair.total == 0.8 and pair.cpu == 0.9 and pair.client_cpu == (35.0, 55.0)
    assert abs(pair.efficiency - 0.8 / 0.9) < 1e-12


def test_the_kept_runs_in_turn_give_the_readme_s_figures() -> None:
    """The late Zen 4 machine's levels in turn: eager 64-108 % (median 83 %, 2 of 9 within
    10 %), watching 83-112 % (median 101 %, 8 of 9), split in the server's CPU share and its
    states per CPU second; a target applied 48.8 µs of the server process (26.8 per state,
    rms 5.5) and 23.2 of the solver process (39.5, rms 5.0)."""
    runs = REPO_ROOT / "docs" / "runs"
    figures = {}
    for kind in ("eager", "watching"):
        found = in_turn.pairs(runs / f"2026-12-02-zen4-late-{kind}.txt", 1000)
        totals = [pair.total for pair in found]
        figures[kind] = (
            len(found),
            _spread(totals),
            sum(share >= in_turn.WITHIN for share in totals),
            _spread([pair.cpu for pair in found]),
            _spread([pair.efficiency for pair in found]),
        )
    assert figures == {
        "eager": (9, (64, 108, 83), 2, (89, 97, 94), (69, 115, 91)),
        "watching": (9, (83, 112, 101), 8, (103, 116, 108), (72, 104, 90)),
    }
    table = np.array(load_fit.rows(sorted(runs.glob("2026-12-02-zen4-late-*.txt")), least=400))
    assert len(table) == 36
    applied = table[:, 2:3]
    api, api_rms = load_fit.fit(applied, [0], table[:, 4])
    solver, solver_rms = load_fit.fit(applied, [0], table[:, 3])
    assert [round(v, 1) for v in (*api, api_rms)] == [26.8, 48.8, 5.5]
    assert [round(v, 1) for v in (*solver, solver_rms)] == [39.5, 23.2, 5.0]


def test_the_firecracker_zen_3_runs_give_the_readme_s_figures() -> None:
    """Eager: 65-110 % (median 77 %, 1 of 8 within 10 %), the server's CPU share 83-115 %
    (7 of 8 pairs at most 90 %: the clients took 22-31 points more), its states per CPU
    second 77-97 % (median 90 %); watching: 90-93 % (median 93 %)."""
    runs = REPO_ROOT / "docs" / "runs"
    eager = in_turn.pairs(runs / "2026-12-02-zen3-fc-eager.txt", 1000)
    totals = [pair.total for pair in eager]
    assert (len(eager), _spread(totals)) == (8, (65, 110, 77))
    assert sum(share >= in_turn.WITHIN for share in totals) == 1
    cpu = sorted(round(100 * pair.cpu) for pair in eager)
    assert cpu == [83, 84, 84, 86, 87, 90, 90, 115]
    growth = [high - low for low, high in (pair.client_cpu for pair in eager)]
    assert (min(growth), max(growth)) == (22.0, 31.0)
    assert _spread([pair.efficiency for pair in eager]) == (77, 97, 90)
    watching = in_turn.shares(runs / "2026-12-02-zen3-fc-watching.txt", 1000)
    assert [round(100 * share) for share in watching] == [90, 93, 93]
