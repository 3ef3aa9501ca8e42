"""Logs: the level is chosen (``POSEKIT_LOG_LEVEL``, ``--log-level``), lines are readable on
a terminal and JSON otherwise or when asked (``POSEKIT_LOG_FORMAT``), and health checks
are logged at DEBUG only."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import httpx
import pytest
from posekit.api.observability import (
    JsonFormatter,
    TextFormatter,
    configure_logging,
    log_format_of,
)
from posekit.settings import Settings, SettingsError
from support.ports import free_port
from support.waiting import wait_for


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _record(**fields: object) -> logging.LogRecord:
    record = logging.LogRecord("posekit.access", logging.INFO, __file__, 1, "request", None, None)
    record.fields = fields
    record.request_id = "abc123"
    return record


def test_auto_is_text_on_a_terminal_and_json_elsewhere() -> None:
    assert log_format_of("auto", _Terminal()) == "text"
    assert log_format_of("auto", io.StringIO()) == "json"
    assert log_format_of("json", _Terminal()) == "json"
    assert log_format_of("text", io.StringIO()) == "text"


def test_both_formats_carry_the_same_facts() -> None:
    record = _record(method="GET", path="/api/sessions", status=200, ms=1.5)
    line = TextFormatter().format(record)
    assert "INFO" in line and "posekit.access: request" in line
    assert "method=GET path=/api/sessions status=200 ms=1.5 request_id=abc123" in line
    entry = json.loads(JsonFormatter().format(record))
    assert entry["path"] == "/api/sessions" and entry["request_id"] == "abc123"
    assert entry["level"] == "info" and entry["message"] == "request"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The test process's logging as it was (configure_logging changes it globally)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    names = ("posekit", "posekit_viewer", "viser", "uvicorn")
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, each in levels.items():
        logging.getLogger(name).setLevel(each)


@pytest.mark.usefixtures("restore_logging")
def test_configure_logging_sets_the_levels_and_replaces_its_handler() -> None:
    configure_logging("warning", "json")
    configure_logging("warning", "text")
    ours = [h for h in logging.getLogger().handlers if h.get_name() == "posekit"]
    assert len(ours) == 1 and isinstance(ours[0].formatter, TextFormatter)
    assert logging.getLogger("posekit").level == logging.WARNING
    assert logging.getLogger("viser").level == logging.WARNING
    configure_logging("info", "json")
    assert logging.getLogger("posekit_viewer").getEffectiveLevel() == logging.INFO
    assert logging.getLogger("uvicorn").level == logging.WARNING  # its start-up chatter
    configure_logging("debug", "json")
    assert logging.getLogger("uvicorn").level == logging.DEBUG
    assert logging.getLogger("viser").isEnabledFor(logging.DEBUG)


@pytest.mark.usefixtures("restore_logging")
def test_only_records_at_the_chosen_level_are_written(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "text")
    logging.getLogger("viser").setLevel(logging.DEBUG)  # as a test's caplog may do
    logging.getLogger("viser").debug("viser's banner")
    logging.getLogger("posekit.sessions").info("a session started")
    logging.getLogger("numba.core").info("library chatter")
    logging.getLogger("numba.core").warning("a library's warning")
    written = capsys.readouterr().err
    assert "viser's banner" not in written and "library chatter" not in written
    assert "INFO    posekit.sessions: a session started" in written
    assert "a library's warning" in written


def test_log_settings_are_read_and_checked() -> None:
    settings = Settings.from_env({"POSEKIT_LOG_LEVEL": "DEBUG", "POSEKIT_LOG_FORMAT": "json"})
    assert (settings.log_level, settings.log_format) == ("debug", "json")
    assert (Settings().log_level, Settings().log_format) == ("info", "auto")
    with pytest.raises(SettingsError, match="POSEKIT_LOG_LEVEL"):
        Settings.from_env({"POSEKIT_LOG_LEVEL": "loud"})
    with pytest.raises(SettingsError, match="POSEKIT_LOG_FORMAT"):
        Settings.from_env({"POSEKIT_LOG_FORMAT": "xml"})


def _serve_and_log(args: list[str], env: dict[str, str], terminal: bool = False) -> str:
    """Run ``posekit up`` with ``args``, make a health check and a request, stop it, and
    return what it wrote to stderr (a pseudo-terminal when ``terminal``)."""
    port = free_port()
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("POSEKIT_LOG_")}
    environment = {**inherited, **env}
    command = [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "none"]
    chunks: list[bytes] = []
    if terminal:
        reader, writer = pty.openpty()
        process = subprocess.Popen(
            [*command, *args], stdout=subprocess.DEVNULL, stderr=writer, env=environment
        )
        os.close(writer)
        drain = threading.Thread(target=_drain_pty, args=(reader, chunks), daemon=True)
    else:
        process = subprocess.Popen(
            [*command, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
        )
        assert process.stderr is not None
        drain = threading.Thread(target=lambda: chunks.append(process.stderr.read()), daemon=True)
    drain.start()
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(url + "/api/health"), timeout=60, what="the server answers")
        httpx.get(url + "/api/sessions", timeout=10).raise_for_status()
        httpx.get(url + "/api/health", timeout=10).raise_for_status()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
        drain.join(10)
    text = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    assert process.returncode == 0 and "Traceback" not in text, text  # Ctrl-C ends it cleanly
    return text


def _drain_pty(reader: int, chunks: list[bytes]) -> None:
    try:
        while data := os.read(reader, 65536):
            chunks.append(data)
    except OSError:  # the terminal's other side closed
        pass
    finally:
        os.close(reader)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _requests(text: str) -> list[str]:
    return [line for line in text.splitlines() if "posekit.access" in line]


def test_by_default_requests_are_json_lines_without_health_checks() -> None:
    logged = _requests(_serve_and_log([], {}))  # stderr is a pipe: JSON
    entries = [json.loads(line) for line in logged]
    assert [(e["method"], e["path"], e["status"]) for e in entries] == [
        ("GET", "/api/sessions", 200)
    ]
    assert entries[0]["level"] == "info" and entries[0]["request_id"]


def test_debug_logs_health_checks_too() -> None:
    logged = _requests(_serve_and_log(["--log-level", "debug"], {"POSEKIT_LOG_FORMAT": "json"}))
    paths = [json.loads(line)["path"] for line in logged]
    assert paths.count("/api/health") >= 2 and "/api/sessions" in paths
    assert {json.loads(line)["level"] for line in logged if "/api/health" in line} == {"debug"}


def test_warning_logs_no_requests() -> None:
    assert _requests(_serve_and_log([], {"POSEKIT_LOG_LEVEL": "warning"})) == []


def test_the_flag_wins_over_the_setting() -> None:
    logged = _requests(_serve_and_log(["--log-level", "warning"], {"POSEKIT_LOG_LEVEL": "info"}))
    assert logged == []


def test_on_a_terminal_lines_are_readable() -> None:
    logged = _requests(_serve_and_log([], {}, terminal=True))
    assert len(logged) == 1, logged
    line = logged[0]
    assert not line.lstrip().startswith("{")
    assert "INFO" in line and "method=GET path=/api/sessions status=200" in line
