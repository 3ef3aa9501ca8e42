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
from posekit.sessions.live.session import Session
from posekit.sessions.live.state import SessionState
from posekit.sessions.live.subscription import Subscription, Update
from posekit.sessions.manager import SessionManager
from posekit.sessions.solving.solver import Solver
from posekit.sessions.specs.session_spec import CreateSession, SessionSpec
from posekit.sessions.specs.solver_settings import SolverPatch, SolverSettings, available_solvers
from posekit.sessions.store.protocol import MemoryStore, NullStore, SessionStore

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
    "Session",
    "SessionLimitReached",
    "SessionManager",
    "SessionNotFound",
    "SessionSpec",
    "SessionState",
    "SessionStore",
    "Solver",
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
