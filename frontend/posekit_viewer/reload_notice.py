"""What the viewer says of the latest live reload of the session's robot files.

A reload that failed (the edited files do not compile: the session keeps the model it
had) and one that dropped tasks or limits must be seen where the user is looking, not
only in the API's ``reload`` message and the server log.
"""

from __future__ import annotations

import time

from posekit.sessions.reload.reload_report import ReloadReport


def reload_text(report: ReloadReport | None) -> str:
    """The markdown of the "Robot files" line: empty without a reload."""
    if report is None:
        return ""
    when = time.strftime("%H:%M:%S", time.localtime(report.time))
    if report.status == "failed":
        return f"⚠ **Robot files** changed at {when} but could not be used: {report.error}"
    lines = [f"**Robot files** reloaded at {when}."]
    for what, items in (
        ("dropped task", report.dropped_tasks),
        ("dropped limit", report.dropped_limits),
        ("target reset", report.reset_targets),
    ):
        lines += [f"⚠ {what} `{item.name}`: {item.reason}" for item in items]
    if report.joints_reset:
        lines.append(f"joints started at their default: {', '.join(report.joints_reset)}")
    return "\n\n".join(lines)
