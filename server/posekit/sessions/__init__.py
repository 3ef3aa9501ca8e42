"""Live IK sessions: specs, the session object, the solve loop and the manager."""

from posekit.sessions.errors import (
    InvalidRequest,
    LimitNotFound,
    NameConflict,
    NotFound,
    SessionLimitReached,
    SessionNotFound,
    TaskNotFound,
)
from posekit.sessions.kinds import (
    LIMIT_TYPES,
    TASK_TYPES,
    LimitPatch,
    LimitSpec,
    Target,
    TaskPatch,
    TaskSpec,
)
from posekit.sessions.loops.scheduler import Scheduler
from posekit.sessions.manager import SessionManager
from posekit.sessions.session import Session
from posekit.sessions.session_spec import CreateSession, SessionSpec
from posekit.sessions.solver_settings import SolverPatch, SolverSettings, available_solvers
from posekit.sessions.state import SessionState
from posekit.sessions.store import MemoryStore, NullStore, SessionStore
from posekit.sessions.subscription import Subscription, Update

__all__ = [
    "LIMIT_TYPES",
    "TASK_TYPES",
    "CreateSession",
    "InvalidRequest",
    "LimitNotFound",
    "LimitPatch",
    "LimitSpec",
    "MemoryStore",
    "NameConflict",
    "NotFound",
    "NullStore",
    "Scheduler",
    "Session",
    "SessionLimitReached",
    "SessionManager",
    "SessionNotFound",
    "SessionSpec",
    "SessionState",
    "SessionStore",
    "SolverPatch",
    "SolverSettings",
    "Subscription",
    "Target",
    "TaskNotFound",
    "TaskPatch",
    "TaskSpec",
    "Update",
    "available_solvers",
]
