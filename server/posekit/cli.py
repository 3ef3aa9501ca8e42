"""The ``posekit`` command line."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    """``posekit demo``: solve IK on the built-in arm and print its convergence."""
    parser = argparse.ArgumentParser(prog="posekit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="solve IK on the built-in arm and print the convergence")
    up = commands.add_parser("up", help="serve posekit (until the backend lands: the demo)")
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument("--port", type=int, default=8000)
    parser.parse_args(argv)
    from posekit.demo import main as demo

    demo()
