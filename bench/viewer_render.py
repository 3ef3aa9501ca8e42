"""Python cost of the viewer's frames, and the bytes each watcher receives.

Two measurements per robot, both at 60 frames per second with every hinge and slide
joint moving every frame:

- **render**: :meth:`SceneRenderer.render` with a changed ``q`` — forward kinematics
  and one ``server.atomic()`` block of the bodies' poses;
- **viewer frame**: :meth:`SessionViewer.tick` on a live (paused) session of that
  robot with its preset tasks — the render, the gizmos and, at most 10 times a
  second, the panels (task values, errors, plot, joints). ``q`` is set through the
  session before each frame (not timed).

Bytes per watcher are counted on a websocket client connected to the viser server on
its Unix-domain socket, as the app's relay is (it sends a camera message, as a browser
does, so it gets everything a browser gets).

    python bench/viewer_render.py [--frames 600] [--robots arm7 humanoid unitree_g1]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import mujoco
import numpy as np
import viser
from viser import _messages
from websockets.sync.client import connect

REPO = Path(__file__).resolve().parents[1]
SHARED_MENAGERIE = REPO.parent / "shared" / "menagerie"
if not os.environ.get("MENAGERIE_ROOT") and SHARED_MENAGERIE.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(SHARED_MENAGERIE)

from posekit.sessions import SessionManager  # noqa: E402
from posekit_viewer.scene_renderer import SceneRenderer  # noqa: E402
from posekit_viewer.session_viewer import SessionViewer  # noqa: E402

FPS = 60.0
CAMERA = _messages.ViewerCameraMessage(
    wxyz=(1.0, 0.0, 0.0, 0.0), position=(1.6, -1.6, 1.3), fov=1.0, near=0.01, far=100.0,
    image_height=720, image_width=1280, look_at=(0.0, 0.0, 0.4), up_direction=(0.0, 0.0, 1.0),
)  # fmt: skip


def load(name: str) -> mujoco.MjModel:
    """The compiled model of a built-in or Menagerie robot."""
    if name in ("arm7", "humanoid"):
        return mujoco.MjModel.from_xml_path(str(REPO / "models" / f"{name}.xml"))
    import mujoco_menagerie as mm

    robot = mm.get(name)
    return robot.model(robot.default_scene)


class Watcher:
    """A websocket client of a viser server counting the bytes it receives."""

    def __init__(self, url: str) -> None:
        self.received = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(url,), daemon=True)
        self._thread.start()
        time.sleep(2.0)  # the scene upload reaches the watcher first

    def _watch(self, url: str) -> None:
        with connect(url, max_size=None, proxy=None,
                          subprotocols=[f"viser-v{viser.__version__}"]) as socket:  # fmt: skip
            socket.send(msgspec.msgpack.encode(CAMERA.as_serializable_dict()))
            while not self._stop.is_set():
                try:
                    self.received += len(socket.recv(timeout=0.2))
                except TimeoutError:
                    continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


def moving_q(model: mujoco.MjModel, base: np.ndarray) -> Callable[[int], np.ndarray]:
    """Frame -> a configuration with every hinge and slide joint swinging."""
    scalar = [model.jnt_qposadr[j] for j in range(model.njnt) if int(model.jnt_type[j]) in (2, 3)]

    def at(frame: int) -> np.ndarray:
        q = base.copy()
        q[scalar] = 0.3 * np.sin(frame / 30.0 + np.arange(len(scalar)))
        return q

    return at


def run_frames(
    frames: int, prepare: Callable[[int], None], draw: Callable[[], object], watcher: Watcher
) -> tuple[np.ndarray, float]:
    """Milliseconds of ``draw`` per frame at 60 Hz, and bytes/s the watcher got meanwhile."""
    times = []
    baseline = watcher.received
    start = time.perf_counter()
    for frame in range(frames):
        prepare(frame)
        begin = time.perf_counter()
        draw()
        times.append(time.perf_counter() - begin)
        time.sleep(max(0.0, start + (frame + 1) / FPS - time.perf_counter()))
    elapsed = time.perf_counter() - start
    time.sleep(0.5)
    return np.array(times) * 1e3, (watcher.received - baseline) / elapsed


def measure_render(name: str, frames: int) -> tuple[np.ndarray, int, float]:
    """Render-only cost: ms per frame, moving bodies, bytes/s per watcher."""
    model = load(name)
    server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
    renderer = SceneRenderer(server, model)
    watcher = Watcher(f"ws://127.0.0.1:{server.get_port()}/")
    q_at = moving_q(model, model.key_qpos[0].copy() if model.nkey else model.qpos0.copy())
    current = [q_at(0)]

    def prepare(frame: int) -> None:
        current[0] = q_at(frame)

    ms, rate = run_frames(frames, prepare, lambda: renderer.render(current[0]), watcher)
    watcher.close()
    server.stop()
    return ms, len(renderer.body_handles), rate


def measure_viewer(name: str, frames: int) -> tuple[np.ndarray, int, float]:
    """Full viewer frame cost: ms per tick, gizmos, bytes/s per watcher."""
    manager = SessionManager()
    manager.start()
    session = manager.create({"robot": name})
    session.set_solver({"paused": True})  # q comes from the bench, frame by frame
    viewer = SessionViewer(session, "http://bench/viewer", start=False)
    watcher = Watcher(viewer.url)
    q_at = moving_q(session.model, np.array(session.q))

    def prepare(frame: int) -> None:
        seq = session.state.seq
        session.set_q(q_at(frame))
        deadline = time.monotonic() + 1.0
        while session.state.seq == seq and time.monotonic() < deadline:
            time.sleep(0.0002)  # the session publishes the new state

    ms, rate = run_frames(frames, prepare, viewer.tick, watcher)
    gizmos = len(viewer.gizmos.names)
    watcher.close()
    viewer.stop()
    manager.shutdown()
    return ms, gizmos, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=600)
    parser.add_argument("--robots", nargs="+", default=["arm7", "humanoid", "unitree_g1"])
    args = parser.parse_args()
    print_table(f"render only (SceneRenderer.render), {FPS:.0f} Hz", "bodies",
                measure_render, args.robots, args.frames)  # fmt: skip
    print()
    print_table(f"viewer frame (SessionViewer.tick: render + gizmos + panels), {FPS:.0f} Hz",
                "gizmos", measure_viewer, args.robots, args.frames)  # fmt: skip


def print_table(
    title: str,
    count_name: str,
    measure: Callable[[str, int], tuple[np.ndarray, int, float]],
    robots: list[str],
    frames: int,
) -> None:
    """One row per robot: median, p90 and mean ms per frame, and kB/s per watcher."""
    print(title)
    print(f"{'robot':12} {count_name:>6} {'median ms':>10} {'p90 ms':>7} {'mean ms':>8}"
          f" {'kB/s per watcher':>17}")  # fmt: skip
    for name in robots:
        ms, count, rate = measure(name, frames)
        print(f"{name:12} {count:6d} {np.median(ms):10.2f} {np.percentile(ms, 90):7.2f}"
              f" {ms.mean():8.2f} {rate / 1e3:17.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
