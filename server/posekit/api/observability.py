"""Request ids, structured logs and Prometheus metrics.

Every HTTP request gets an id (the client's ``X-Request-ID`` when it sends a sane
one, else a random one), echoed in the response header and attached to one JSON log
line per request: method, path, status, duration. :class:`Metrics` keeps the
counters, gauges and the solve-time histogram that ``GET /api/metrics`` renders in
the Prometheus text format (``prometheus_client``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

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
    """posekit's metrics in a registry of their own (one per app), exposed by
    ``GET /api/metrics`` in the Prometheus text format through ``prometheus_client``."""

    def __init__(self) -> None:
        disable_created_metrics()  # no ``*_created`` series: the names stay as they were
        self.registry = CollectorRegistry(auto_describe=True)
        self.step_rate = RateMeter()
        self._steps = Counter("posekit_steps", "IK solve steps since start.", registry=self.registry)
        Gauge(
            "posekit_steps_per_second",
            "IK solve steps per second, last 5 s.",
            registry=self.registry,
        ).set_function(self.step_rate.rate)
        self._solve_time = Histogram(
            "posekit_solve_time_us",
            "Duration of a solve step [µs].",
            buckets=SOLVE_BUCKETS_US,
            registry=self.registry,
        )
        self._requests = Counter(
            "posekit_http_requests", "HTTP responses sent.", registry=self.registry
        )
        self._rejected = Counter(
            "posekit_rejected_requests",
            "HTTP responses with a 4xx or 5xx status.",
            ["status"],
            registry=self.registry,
        )
        self._websocket_clients = Gauge(
            "posekit_websocket_clients", "Open websocket connections.", registry=self.registry
        )
        self._ws_refused = Counter(
            "posekit_websocket_refused",
            "Websocket client messages refused, by code.",
            ["code"],
            registry=self.registry,
        )

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """Expose a value kept elsewhere, read when the metrics are rendered."""
        Gauge(name, help_text, registry=self.registry).set_function(read)

    def observe_step(self, solve_us: float) -> None:
        """Count a solve step and its duration [µs]."""
        self._steps.inc()
        self._solve_time.observe(solve_us)
        self.step_rate.tick()

    def count_ws_refusal(self, code: str) -> None:
        """Count a refused websocket client message by error code."""
        self._ws_refused.labels(code=code).inc()

    def count_request(self, status: int) -> None:
        """Count an HTTP response; 4xx/5xx also by status."""
        self._requests.inc()
        if status >= 400:
            self._rejected.labels(status=str(status)).inc()

    def websocket_delta(self, delta: int) -> None:
        """A websocket client connected (+1) or left (-1)."""
        self._websocket_clients.inc(delta)

    def render(self) -> bytes:
        """Everything in the Prometheus text format."""
        return generate_latest(self.registry)


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
