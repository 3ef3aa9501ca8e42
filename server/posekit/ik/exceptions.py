"""Exceptions raised by the IK engine.

Every exception derives from :class:`PosekitError` (aliased ``MinkError`` for code
written against mink) and carries a message naming the bad value and what would have
been valid.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import qpsolvers

from posekit.ik.near_miss import did_you_mean_sentence

_MAX_LISTED = 12


def _listing(names: Sequence[str]) -> str:
    """Quote up to a dozen names; say how many more there are."""
    shown = ", ".join(repr(n) for n in names[:_MAX_LISTED])
    extra = len(names) - _MAX_LISTED
    return f"[{shown}{f', … ({extra} more)' if extra > 0 else ''}]"


def _names_of(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    names = (mujoco.mj_id2name(model, obj, i) for i in range(count))
    return [n for n in names if n]


class PosekitError(Exception):
    """Base class of every error the engine raises."""


MinkError = PosekitError


class UnsupportedFrame(PosekitError):
    """A frame type other than body, geom or site was given."""

    def __init__(self, frame_type: str, supported_types: Sequence[str]) -> None:
        super().__init__(
            f"{frame_type} is not supported. Supported frame types are: {tuple(supported_types)}"
        )


class LookupFailed(KeyError):
    """Base of the errors for a name that does not exist: also a ``KeyError``.

    Upstream (MuJoCo's ``model.joint(name)``, ``model.body(name)``; Pink for frames)
    raises ``KeyError`` for unknown names, so code catching it keeps working. ``str()``
    is the plain message (a bare ``KeyError`` shows the repr of its argument).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidFrame(PosekitError, LookupFailed):
    """A frame name or id does not exist in the model (also a ``KeyError``)."""

    def __init__(self, frame_name: str | int, frame_type: str, model: mujoco.MjModel) -> None:
        obj, count = {
            "body": (mujoco.mjtObj.mjOBJ_BODY, model.nbody),
            "geom": (mujoco.mjtObj.mjOBJ_GEOM, model.ngeom),
            "site": (mujoco.mjtObj.mjOBJ_SITE, model.nsite),
        }[frame_type]
        valid = _listing(_names_of(model, obj, count))
        if isinstance(frame_name, int) and not isinstance(frame_name, bool):
            what = (
                f"{frame_type} id {frame_name} is out of range for this model; "
                f"expected 0 <= id < {count}."
            )
        else:
            names = _names_of(model, obj, count)
            hint = did_you_mean_sentence(str(frame_name), names)
            what = f"{frame_type} '{frame_name}' does not exist in the model.{hint}"
        super().__init__(f"{what} Available {frame_type} names: {valid}")


class InvalidKeyframe(PosekitError):
    """A keyframe name does not exist in the model."""

    def __init__(self, keyframe_name: str, model: mujoco.MjModel) -> None:
        valid = _names_of(model, mujoco.mjtObj.mjOBJ_KEY, model.nkey)
        hint = did_you_mean_sentence(keyframe_name, valid)
        super().__init__(
            f"Keyframe {keyframe_name} does not exist in the model.{hint} "
            f"Available keyframe names: {_listing(valid)}"
        )


class InvalidMocapBody(PosekitError, LookupFailed):
    """A body is not a mocap body (or does not exist), or a mocap index is out of range.

    Also a ``KeyError``: upstream raises one for a body name that does not exist.
    """

    def __init__(self, mocap_name: str | int, model: mujoco.MjModel | None = None) -> None:
        if model is None:
            super().__init__(f"mocap body {mocap_name!r} does not exist")
            return
        valid = [
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or str(b)
            for b in range(model.nbody)
            if model.body_mocapid[b] >= 0
        ]
        super().__init__(
            f"Body '{mocap_name}' is not a mocap body. Available mocap bodies: {_listing(valid)}"
        )


class InvalidJoint(PosekitError, LookupFailed):
    """A joint name does not exist in the model (also a ``KeyError``, as upstream)."""

    def __init__(self, joint_name: str, model: mujoco.MjModel) -> None:
        valid = _names_of(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt)
        hint = did_you_mean_sentence(str(joint_name), valid)
        super().__init__(
            f"joint {joint_name!r} does not exist in the model.{hint} Joints: {_listing(valid)}"
        )


class InvalidTarget(PosekitError):
    """A task target has the wrong shape or non-finite values."""


class InvalidGain(PosekitError):
    """A task gain lies outside [0, 1]."""


class InvalidDamping(PosekitError):
    """A Levenberg-Marquardt damping is negative or not finite."""


class TaskDefinitionError(PosekitError):
    """A task was constructed or updated with invalid parameters."""


class LimitDefinitionError(PosekitError):
    """A limit was constructed with invalid parameters."""


class InvalidConstraint(PosekitError):
    """An equality constraint is unknown or not usable."""


class TargetNotSet(PosekitError):
    """A task was evaluated before its target was set."""

    def __init__(self, cls_name: str) -> None:
        super().__init__(
            f"No target set for {cls_name}; call set_target() or "
            "set_target_from_configuration() first"
        )


class IntegrationTimestepNotSet(PosekitError):
    """A task that needs the timestep was evaluated before set_dt()."""

    def __init__(self, cls_name: str) -> None:
        super().__init__(
            f"No integration timestep set for {cls_name}; call set_dt(dt) with dt > 0 first"
        )


class NotWithinConfigurationLimits(PosekitError):
    """A joint coordinate (or a ball joint's rotation angle) lies outside its range."""

    def __init__(
        self, joint_id: int, value: float, lower: float, upper: float, model: mujoco.MjModel
    ) -> None:
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, joint_id) or ""
        super().__init__(
            f"Joint {joint_id} ({name}) violates configuration limits {lower} <= {value} <= {upper}"
        )
        self.joint_id = joint_id
        self.value = value
        self.lower = lower
        self.upper = upper


class NoSolutionFound(PosekitError):
    """The QP solver found no solution (infeasible constraints or a solver failure)."""

    def __init__(self, solver_name: str, detail: str = "") -> None:
        why = f" ({detail})" if detail else ""
        super().__init__(
            f"QP solver {solver_name} failed to find a solution.{why} The hard constraints "
            "or limits may be infeasible at this configuration"
        )
        self.solver_name = solver_name


class InvalidConfigurationVector(PosekitError, ValueError):
    """A configuration or velocity vector has the wrong shape or non-finite values."""


class InvalidShape(PosekitError, ValueError, AssertionError):
    """An array given to a Lie-group function or constructor has the wrong shape.

    Also a ``ValueError``, and an ``AssertionError`` because upstream checks most of
    these shapes with ``assert``: code catching either keeps working.
    """


class InvalidSolverSettings(PosekitError, ValueError):
    """An unknown QP solver, or a timestep or damping out of range."""


class SolverNotInstalled(InvalidSolverSettings, qpsolvers.SolverNotFound):
    """The QP solver named is not installed (also a ``qpsolvers.SolverNotFound``)."""


class InvalidGeomPair(LimitDefinitionError, InvalidFrame):
    """A collision geom pair names a geom or body that does not exist.

    Also an :class:`InvalidFrame`, the class upstream raises for an unknown geom.
    """

    def __init__(self, message: str) -> None:
        PosekitError.__init__(self, message)
