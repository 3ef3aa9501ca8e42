"""Instructions per IK step of ``bench/ik_step.py``'s scenarios, deterministic (callgrind).

Runs one scenario's steps (move the targets, ``solve_ik`` with daqp,
``integrate_inplace``: ``ik_step.run_block``'s step, untimed) with one library, the
measured ones inside ``functools.reduce``:

    CG_TOGGLE=1 MENAGERIE_ROOT=… PYTHONPATH=server:bench valgrind --tool=callgrind \\
        --instr-atstart=no --toggle-collect=functools_reduce \\
        --callgrind-out-file=/tmp/step.cg python bench/ik_step_pass.py B2 --steps 200

counts only the measured steps (``CG_TOGGLE`` switches the instrumentation on after
the warm-up); divide the total (``callgrind_annotate /tmp/step.cg | head``) by the
steps. ``--lib posekit_before`` runs another importable build of the engine (e.g. the
previous commit's package copied under that name) for a before/after count. Without
valgrind it just runs.

    python bench/ik_step_pass.py SCENARIO [--steps 200] [--warmup 300] [--lib posekit]
"""

from __future__ import annotations

import argparse
import functools
import importlib

from callgrind import instrument
from ik_step import SCENARIOS, Problem, ik_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--steps", type=int, default=200, help="measured steps")
    parser.add_argument("--warmup", type=int, default=300, help="steps before the measured ones")
    parser.add_argument("--lib", default="posekit", help="the engine's importable name")
    args = parser.parse_args()
    lib = importlib.import_module(args.lib)
    problem: Problem = SCENARIOS[args.scenario][1](lib)

    def step(_: object, k: int) -> None:
        ik_step(lib, problem, k)

    for k in range(args.warmup):
        step(None, k)
    instrument()
    functools.reduce(step, range(args.warmup, args.warmup + args.steps), None)
    print(f"{args.scenario}: {args.steps} steps measured after {args.warmup}")


if __name__ == "__main__":
    main()
