"""posekit: interactive, task-based differential IK for MuJoCo robots, in the browser.

'posekit up' serves the API, the viewer and the landing page on one port (it needs the
server extra: pip install 'posekit[server]'); 'posekit demo' solves IK on the built-in
arm in the terminal (the engine alone).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import get_args

from posekit.log_levels import LogLevel

SERVER_EXTRA = "posekit up needs the server's packages: pip install 'posekit[server]'"


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``posekit`` console script."""
    parser = argparse.ArgumentParser(
        prog="posekit", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="solve IK on the built-in arm and print the convergence")
    up = commands.add_parser("up", help="serve the API (and viewer) on one port")
    up.add_argument(
        "--host", default=None, help="interface (default: POSEKIT_HOST, else 127.0.0.1)"
    )
    up.add_argument(
        "--port", type=int, default=None, help="port (default: POSEKIT_PORT, else 8000)"
    )
    up.add_argument(
        "--robot",
        default="arm7",
        help=(
            "robot of the first session, created when the server has none "
            "(default: the robot file, else the built-in arm7); 'none' for no session"
        ),
    )
    up.add_argument(
        "robot_file",
        nargs="?",
        default=None,
        metavar="FILE",
        help="an MJCF (.xml) or URDF (.urdf) file to serve, live-reloaded; the first "
        "session is on it (default: POSEKIT_ROBOT_FILE)",
    )
    up.add_argument(
        "--robots",
        default=None,
        metavar="DIR",
        help="a folder of MJCF/URDF robots to serve, live-reloaded (default: POSEKIT_ROBOTS_DIR)",
    )
    up.add_argument(
        "--log-level",
        choices=get_args(LogLevel),
        default=None,
        help="log level (default: POSEKIT_LOG_LEVEL, else info)",
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        from posekit.demo import main as demo

        demo()
        return
    try:
        from posekit.serve import serve
        from posekit.settings import SettingsError
    except ModuleNotFoundError as missing:
        raise SystemExit(f"{SERVER_EXTRA} ({missing.name} is not installed)") from None
    try:
        serve(
            args.host,
            args.port,
            None if args.robot == "none" else args.robot,
            args.robot_file,
            args.robots,
            args.log_level,
        )
    except SettingsError as error:
        raise SystemExit(f"posekit: {error}") from None


if __name__ == "__main__":
    main()
