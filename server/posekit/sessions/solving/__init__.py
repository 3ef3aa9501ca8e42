"""Stepping live sessions: one solver thread (:mod:`.solver`) and its fair share."""
