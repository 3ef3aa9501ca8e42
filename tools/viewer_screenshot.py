"""Take the README's picture of the viewer: ``posekit up`` on a free port, a session on
the built-in arm with a look-at task beside its preset, the viewer in Chromium at
1280×800, saved to docs/images/viewer.png.

    .venv/bin/python tools/viewer_screenshot.py [--robot arm7] [--out docs/images/viewer.png]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
LOOK_AT = {
    "name": "camera",
    "type": "look_at",
    "params": {"frame": "wrist_cam", "axis": [0, 0, -1], "cost": 0.1},
    "target": {"position": [0.7, 0.3, 0.0]},
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="arm7")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "viewer.png")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "none"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(240):
            try:
                httpx.get(f"{base}/api/health", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.5)
        session = httpx.post(f"{base}/api/sessions", json={"robot": args.robot}).json()["id"]
        if args.robot == "arm7":
            httpx.post(f"{base}/api/sessions/{session}/tasks", json=LOOK_AT).raise_for_status()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{base}/viewer/{session}")
            page.wait_for_function("window.__viserMutable !== undefined", timeout=60_000)
            time.sleep(6)  # the meshes, the gizmos and a few seconds of error plot
            for close in page.locator("button.mantine-Notification-closeButton").all():
                close.click()  # viser's notice that this headless browser renders in software
            time.sleep(1)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
        print(f"wrote {args.out}")
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
