"""Request ids, structured logs and Prometheus metrics.

Every HTTP request gets an id (the client's ``X-Request-ID`` when it sends a sane
one, else a random one), echoed in the response header and attached to one JSON log
line per request: method, path, status, duration. :class:`Metrics` keeps the
counters, gauges and the solve-time histogram that ``GET /api/metrics`` renders in
the Prometheus text format (version 0.0.4).
"""

from __future__ import annotations

import bisect
import contextvars
import json
import logging
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from posekit.api.security import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("posekit.access")
request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
_SANE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
SOLVE_BUCKETS_US = (50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 50000.0)


class JsonFormatter(logging.Formatter):
    """One JSON object per log line, with the current request id."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", request_id.get()),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: int = logging.INFO) -> None:
    """Send posekit's logs to stderr as JSON lines (idempotent)."""
    root = logging.getLogger("posekit")
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False


class Histogram:
    """A cumulative histogram with fixed upper bounds (thread-safe)."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        """Count one observation."""
        with self._lock:
            self.counts[bisect.bisect_left(self.bounds, value)] += 1
            self.total += value

    def lines(self, name: str) -> list[str]:
        """Prometheus exposition lines of this histogram."""
        with self._lock:
            counts, total = list(self.counts), self.total
        lines, running = [], 0
        for bound, count in zip((*self.bounds, float("inf")), counts, strict=True):
            running += count
            label = "+Inf" if bound == float("inf") else repr(bound)
            lines.append(f'{name}_bucket{{le="{label}"}} {running}')
        lines += [f"{name}_sum {total}", f"{name}_count {running}"]
        return lines


class RateMeter:
    """Events per second over the last ``window`` seconds, from a counter sampled once a
    second by its single writer (cheap enough to call on every solve step)."""

    def __init__(self, window: float = 5.0) -> None:
        self.window = window
        self.count = 0
        self._samples: deque[tuple[float, int]] = deque(maxlen=int(window) + 2)
        self._next_sample = 0.0

    def tick(self, now: float | None = None) -> None:
        """Count one event (from one thread only)."""
        self.count += 1
        now = time.monotonic() if now is None else now
        if now >= self._next_sample:
            self._samples.append((now, self.count))
            self._next_sample = now + 1.0

    def rate(self, now: float | None = None) -> float:
        """Mean events per second over about the last ``window`` seconds (0 when idle)."""
        now = time.monotonic() if now is None else now
        samples = [s for s in list(self._samples) if now - s[0] <= self.window + 1.0]
        if not samples:
            return 0.0
        start_time, start_count = samples[0]
        elapsed = max(now - start_time, 1.0)
        return (self.count - start_count) / elapsed


class Metrics:
    """posekit's metrics; gauges that live elsewhere are read through callables."""

    def __init__(self) -> None:
        self.solve_time = Histogram(SOLVE_BUCKETS_US)
        self.step_rate = RateMeter()
        self.rejected: dict[int, int] = {}
        self.ws_refused: dict[str, int] = {}
        self.requests = 0
        self.websocket_clients = 0
        self._lock = threading.Lock()
        self.gauges: dict[str, tuple[str, Callable[[], float]]] = {}

    def observe_step(self, solve_us: float) -> None:
        """Count a solve step and its duration [µs]."""
        self.solve_time.observe(solve_us)
        self.step_rate.tick()

    def count_ws_refusal(self, code: str) -> None:
        """Count a refused websocket client message by error code."""
        with self._lock:
            self.ws_refused[code] = self.ws_refused.get(code, 0) + 1

    def count_request(self, status: int) -> None:
        """Count an HTTP response; 4xx/5xx also by status."""
        with self._lock:
            self.requests += 1
            if status >= 400:
                self.rejected[status] = self.rejected.get(status, 0) + 1

    def websocket_delta(self, delta: int) -> None:
        """A websocket client connected (+1) or left (-1)."""
        with self._lock:
            self.websocket_clients += delta

    def render(self) -> str:
        """Everything in the Prometheus text format."""
        with self._lock:
            steps, requests = self.step_rate.count, self.requests
            rejected, clients = dict(self.rejected), self.websocket_clients
            refused = dict(self.ws_refused)
        lines = [
            "# HELP posekit_steps_total IK solve steps since start.",
            "# TYPE posekit_steps_total counter",
            f"posekit_steps_total {steps}",
            "# HELP posekit_steps_per_second IK solve steps per second, last 5 s.",
            "# TYPE posekit_steps_per_second gauge",
            f"posekit_steps_per_second {self.step_rate.rate()}",
            "# HELP posekit_solve_time_us Duration of a solve step [µs].",
            "# TYPE posekit_solve_time_us histogram",
            *self.solve_time.lines("posekit_solve_time_us"),
            "# HELP posekit_http_requests_total HTTP responses sent.",
            "# TYPE posekit_http_requests_total counter",
            f"posekit_http_requests_total {requests}",
            "# HELP posekit_rejected_requests_total HTTP responses with a 4xx or 5xx status.",
            "# TYPE posekit_rejected_requests_total counter",
            *[
                f'posekit_rejected_requests_total{{status="{s}"}} {n}'
                for s, n in sorted(rejected.items())
            ],
            "# HELP posekit_websocket_clients Open websocket connections.",
            "# TYPE posekit_websocket_clients gauge",
            f"posekit_websocket_clients {clients}",
            "# HELP posekit_websocket_refused_total Websocket client messages refused, by code.",
            "# TYPE posekit_websocket_refused_total counter",
            *[
                f'posekit_websocket_refused_total{{code="{c}"}} {n}'
                for c, n in sorted(refused.items())
            ],
        ]
        for name, (help_text, read) in sorted(self.gauges.items()):
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", f"{name} {read()}"]
        return "\n".join(lines) + "\n"


class RequestContext:
    """ASGI middleware: request ids, one access-log line per request, request metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            self.metrics.websocket_delta(+1)
            try:
                await self.app(scope, receive, send)
            finally:
                self.metrics.websocket_delta(-1)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        given = headers.get(b"x-request-id", b"").decode("latin-1")
        rid = given if _SANE_ID.match(given) else secrets.token_hex(8)
        token = request_id.set(rid)
        started = time.perf_counter()
        status = [500]

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message = dict(message)
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self.metrics.count_request(status[0])
            logger.info(
                "request",
                extra={
                    "request_id": rid,
                    "fields": {
                        "method": scope.get("method"),
                        "path": scope.get("path"),
                        "status": status[0],
                        "ms": round((time.perf_counter() - started) * 1e3, 2),
                    },
                },
            )
            request_id.reset(token)
