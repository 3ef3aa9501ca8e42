"""Request ids, structured logs and Prometheus metrics.

Every HTTP request gets an id (the client's ``X-Request-ID`` when it sends a sane
one, else a random one), echoed in the response header and attached to one log line
per request: method, path, status, duration (at INFO; health checks and metric scrapes
at DEBUG). :func:`configure_logging` writes the logs as readable lines on a terminal,
else as JSON objects. :class:`Metrics` keeps the
counters, gauges and the solve-time histogram that ``GET /api/metrics`` renders in
the Prometheus text format (``prometheus_client``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

from posekit.api.security import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("posekit.access")
request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
_SANE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_HANDLER_NAME = "posekit"
_OWN_LOGGERS = ("posekit", "posekit_viewer", "viser")
# Requests that machines repeat all day long: logged at DEBUG, not INFO.
QUIET_PATHS = frozenset({"/api/health", "/api/metrics"})
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


class TextFormatter(logging.Formatter):
    """A readable line: local time, level, logger, message, then the record's fields and
    its request id as ``key=value`` (the same facts as :class:`JsonFormatter`)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        line = f"{stamp} {record.levelname:<7} {record.name}: {record.getMessage()}"
        fields = dict(getattr(record, "fields", {}))
        rid = getattr(record, "request_id", request_id.get())
        if rid != "-":
            fields["request_id"] = rid
        if fields:
            line += "  " + " ".join(f"{key}={value}" for key, value in fields.items())
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class _StderrHandler(logging.Handler):
    """Writes each record to the ``sys.stderr`` of the moment it is logged (so a
    replaced stderr, as under a test runner, is followed rather than kept)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def log_format_of(log_format: str, stream: Any = None) -> str:
    """``text`` or ``json``: ``auto`` is text on a terminal, JSON otherwise (a pipe, a
    file, a container's log collector)."""
    if log_format != "auto":
        return log_format
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def configure_logging(level: str = "info", log_format: str = "auto") -> None:
    """Send the logs to stderr, as readable lines or JSON (:func:`log_format_of`).

    posekit's loggers (``posekit``, ``posekit_viewer``, ``viser``: viser's console lines
    are at DEBUG) log at ``level``; uvicorn's at ``level`` when it is ``debug``, else at
    ``warning`` at least (its start-up lines repeat what ``posekit up`` prints); any
    other library at ``warning`` at least. One handler on the root logger formats them
    all; calling this again replaces it (idempotent).
    """
    numeric = logging.getLevelNamesMapping()[level.upper()]
    handler = _StderrHandler(numeric)  # a logger set lower elsewhere is not shown either
    handler.set_name(_HANDLER_NAME)
    chosen = log_format_of(log_format)
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(max(numeric, logging.WARNING))
    for name in _OWN_LOGGERS:
        logging.getLogger(name).setLevel(numeric)
    quiet = numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING)
    logging.getLogger("uvicorn").setLevel(quiet)


class Metrics:
    """posekit's metrics in a registry of their own (one per app), exposed by
    ``GET /api/metrics`` in the Prometheus text format through ``prometheus_client``."""

    def __init__(self) -> None:
        disable_created_metrics()  # no ``*_created`` series: the names stay as they were
        self.registry = CollectorRegistry(auto_describe=True)
        GCCollector(registry=self.registry)  # python_gc_*: this process's collections
        self._steps = Counter(
            "posekit_steps", "IK solve steps since start.", registry=self.registry
        )
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

    def observe_steps(self, solve_us: Sequence[float]) -> None:
        """Count solve steps and their durations [µs] (a batch of states at once)."""
        if not solve_us:
            return
        self._steps.inc(len(solve_us))
        for duration in solve_us:
            self._solve_time.observe(duration)

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
            path = scope.get("path")
            logger.log(
                logging.DEBUG if path in QUIET_PATHS else logging.INFO,
                "request",
                extra={
                    "request_id": rid,
                    "fields": {
                        "method": scope.get("method"),
                        "path": path,
                        "status": status[0],
                        "ms": round((time.perf_counter() - started) * 1e3, 2),
                    },
                },
            )
            request_id.reset(token)
