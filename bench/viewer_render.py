"""Python cost of the viewer's render step, and the bytes each watcher receives.

A rendered frame is :meth:`SceneRenderer.render` with a changed ``q``: forward
kinematics and one ``server.atomic()`` block of body poses. Bytes per watcher are
counted on a real websocket client connected to the viser server while frames are
rendered at 60 Hz.

    python bench/viewer_render.py [--frames 600]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

import mujoco
import numpy as np
import viser
from websockets.sync.client import connect

REPO = Path(__file__).resolve().parents[1]
SHARED_MENAGERIE = REPO.parent / "shared" / "menagerie"
if not os.environ.get("MENAGERIE_ROOT") and SHARED_MENAGERIE.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(SHARED_MENAGERIE)

from posekit_viewer.scene_renderer import SceneRenderer  # noqa: E402


def load(name: str) -> mujoco.MjModel:
    if name in ("arm7", "humanoid"):
        return mujoco.MjModel.from_xml_path(str(REPO / "models" / f"{name}.xml"))
    import mujoco_menagerie as mm

    robot = mm.get(name)
    return robot.model(robot.default_scene)


def measure(name: str, frames: int) -> tuple[float, float, int, float]:
    """Median and p90 ms per frame, moving bodies, bytes per second per watcher at 60 Hz."""
    model = load(name)
    server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
    renderer = SceneRenderer(server, model)
    received = [0]
    stop = threading.Event()

    def watch() -> None:
        with connect(f"ws://127.0.0.1:{server.get_port()}", subprotocols=[f"viser-v{viser.__version__}"],
                     max_size=None) as socket:  # fmt: skip
            while not stop.is_set():
                try:
                    message = socket.recv(timeout=0.2)
                except TimeoutError:
                    continue
                received[0] += len(message)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(2.0)  # the scene upload reaches the watcher first
    q = model.key_qpos[0].copy() if model.nkey else model.qpos0.copy()
    scalar = [model.jnt_qposadr[j] for j in range(model.njnt) if int(model.jnt_type[j]) in (2, 3)]
    times = []
    baseline = received[0]
    start = time.perf_counter()
    for frame in range(frames):
        q[scalar] = 0.3 * np.sin(frame / 30.0 + np.arange(len(scalar)))
        begin = time.perf_counter()
        renderer.render(q)
        times.append(time.perf_counter() - begin)
        time.sleep(max(0.0, start + (frame + 1) / 60.0 - time.perf_counter()))
    elapsed = time.perf_counter() - start
    time.sleep(0.5)
    rate = (received[0] - baseline) / elapsed
    stop.set()
    watcher.join(timeout=2.0)
    server.stop()
    ms = np.array(times) * 1e3
    return float(np.median(ms)), float(np.percentile(ms, 90)), len(renderer.body_handles), rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=600)
    args = parser.parse_args()
    print(f"{'robot':12} {'bodies':>6} {'median ms':>10} {'p90 ms':>8} {'kB/s per watcher':>17}")
    for name in ("arm7", "humanoid", "unitree_g1"):
        median, p90, bodies, rate = measure(name, args.frames)
        print(f"{name:12} {bodies:6d} {median:10.2f} {p90:8.2f} {rate / 1e3:17.1f}")


if __name__ == "__main__":
    main()
