"""The ``posekit`` command line: ``posekit up`` serves everything, ``posekit demo`` solves."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

from fastapi import FastAPI

WS_MAX_BYTES = 1 << 20  # websocket frames above this are refused by the server


def build_app(robot: str | None = "arm7", announce: str | None = None) -> FastAPI:
    """The served app (API + viewer, from the composition root ``posekit.app``); a first
    session on ``robot`` is created at startup (None: none).

    ``announce`` is the base URL printed with the session's links.
    """
    from posekit.app import create_full_app

    async def first_session(app: FastAPI) -> None:
        if robot is None:
            return
        manager = app.state.manager
        session = await asyncio.to_thread(manager.create, {"robot": robot})
        if announce:
            print(
                f"posekit: session {session.id} on {robot}\n"
                f"  viewer  {announce}/viewer/{session.id}\n"
                f"  state   {announce}/api/sessions/{session.id}\n"
                f"  stream  {announce.replace('http', 'ws', 1)}/api/sessions/{session.id}/stream",
                flush=True,
            )

    return create_full_app(on_startup=[first_session])


def serve(host: str, port: int, robot: str | None) -> None:
    """Run the app with uvicorn until interrupted."""
    import uvicorn

    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown_host}:{port}"
    print(f"posekit: serving on {url}  (API docs: {url}/docs)", flush=True)
    uvicorn.run(
        build_app(robot, announce=url),
        host=host,
        port=port,
        ws_max_size=WS_MAX_BYTES,
        # States are a few hundred bytes; compressing each one cost more server CPU
        # than everything else per message on the load bench, so deflate is off.
        ws_per_message_deflate=False,
        log_level="warning",
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``posekit`` console script."""
    parser = argparse.ArgumentParser(prog="posekit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="solve IK on the built-in arm and print the convergence")
    up = commands.add_parser("up", help="serve the API (and viewer) on one port")
    up.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    up.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    up.add_argument(
        "--robot",
        default="arm7",
        help="robot of the first session (default: the built-in arm7); 'none' for no session",
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        from posekit.demo import main as demo

        demo()
        return
    serve(args.host, args.port, None if args.robot == "none" else args.robot)


if __name__ == "__main__":
    main()
