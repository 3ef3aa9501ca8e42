"""The stream's ``error`` message: a client's message was refused, the session ended,
or the server tells the session's watchers of trouble they did not ask about (their
changes are not being stored, the session was paused for stepping too slowly)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorMessage(BaseModel):
    """``error``: a client message was refused, the session ended, or trouble to know of."""

    type: Literal["error"] = "error"
    code: str = Field(
        description="invalid, not_found, too_large, rate_limited, flooding (the client is "
        "cut off), conflict, session_closed; "
        "unasked: storage_full or storage_unavailable (changes are kept in memory and not "
        "stored until the store can write), too_slow (the session was paused)."
    )
    message: str = Field(description="What was wrong.")
    ref: Any = Field(None, description="The client's ref of the refused message.")
