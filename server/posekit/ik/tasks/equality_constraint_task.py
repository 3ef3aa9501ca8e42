r"""Equality constraint task: drive MuJoCo equality constraints to zero residual."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.constants import constraint_width
from posekit.ik.exceptions import InvalidConstraint, TaskDefinitionError
from posekit.ik.tasks.task import Residual, Task
from posekit.ik.tasks.validation import EQUALITY_COST_SHAPE, cost_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_SUPPORTED_TYPES = {
    int(mujoco.mjtEq.mjEQ_CONNECT),
    int(mujoco.mjtEq.mjEQ_WELD),
    int(mujoco.mjtEq.mjEQ_JOINT),
    int(mujoco.mjtEq.mjEQ_TENDON),
}


def _equality_names(model: mujoco.MjModel) -> list[str]:
    return [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_EQUALITY, i) or f"#{i}"
        for i in range(model.neq)
    ]


def resolve_equality_ids(model: mujoco.MjModel, equalities: Sequence[object] | None) -> list[int]:
    """Ids of the named (or numbered) equalities; all of them when ``equalities`` is None.

    Named equalities must be active in the model (``eq_active0``); with ``None`` every
    equality is taken and the inactive ones simply contribute no rows (as upstream).
    Every equality must be of a supported type (connect, weld, joint, tendon).
    """
    if equalities is None:
        ids = list(range(model.neq))
    else:
        if isinstance(equalities, (str, int)):
            equalities = [equalities]
        ids = [_equality_id(model, equality) for equality in equalities]
        if len(set(ids)) != len(ids):
            raise TaskDefinitionError(f"Duplicate equality constraint IDs provided: {ids}.")
    if not ids:
        raise TaskDefinitionError(
            "EqualityConstraintTask no equality constraints found in this model."
            + (" (equalities is empty: name at least one)" if model.neq else "")
        )
    for eq_id in ids:
        if int(model.eq_type[eq_id]) not in _SUPPORTED_TYPES:
            raise InvalidConstraint(
                f"equality constraint {_equality_names(model)[eq_id]!r} has an unsupported "
                f"type {mujoco.mjtEq(model.eq_type[eq_id]).name}; supported: connect, weld, "
                "joint, tendon"
            )
    return ids


def _equality_id(model: mujoco.MjModel, equality: object) -> int:
    """Id of one named or numbered equality that is active in the model."""
    known = f"the model has {', '.join(_equality_names(model))} (ids 0..{model.neq - 1})"
    if isinstance(equality, str):
        eq_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_EQUALITY, equality)
        if eq_id < 0:
            raise InvalidConstraint(f"Equality constraint '{equality}' not found. {known}")
    elif isinstance(equality, (int, np.integer)) and not isinstance(equality, bool):
        eq_id = int(equality)
        if not 0 <= eq_id < model.neq:
            raise InvalidConstraint(
                f"Equality constraint index {eq_id} out of range. Must be in range "
                f"[0, {model.neq}). {known}"
            )
    else:
        raise InvalidConstraint(f"Equality constraint {equality!r} is not a name or an id; {known}")
    if not model.eq_active0[eq_id]:
        raise InvalidConstraint(
            f"Equality constraint {eq_id} is not active at initial configuration. "
            f"({_equality_names(model)[eq_id]!r} is inactive in the model)"
        )
    return eq_id


def equality_rows(configuration: Configuration) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ids, residuals, jacobian)`` of every equality-constraint row MuJoCo instantiated.

    ``ids[i]`` is the equality id of row ``i``; residuals are ``efc_pos`` and the
    Jacobian is ``efc_J`` made dense, shape ``(rows, nv)``.
    """
    configuration.update_constraints()
    model, data = configuration.model, configuration.data
    rows = np.flatnonzero(data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    ids = data.efc_id[rows]
    residuals = data.efc_pos[rows]
    jacobian = np.zeros((rows.size, model.nv))
    if mujoco.mj_isSparse(model):
        for out_row, row in enumerate(rows):
            start = data.efc_J_rowadr[row]
            stop = start + data.efc_J_rownnz[row]
            jacobian[out_row, data.efc_J_colind[start:stop]] = data.efc_J[start:stop]
    else:
        jacobian[:] = data.efc_J.reshape(-1, model.nv)[rows] if rows.size else jacobian
    return ids, residuals, jacobian


class EqualityConstraintTask(Task):
    r"""Regulate the residual :math:`r(q)` of MuJoCo equality constraints toward zero.

    .. math:: e(q) = r(q), \qquad J(q) = \partial r / \partial q,

    read from MuJoCo's constraint rows (``efc_pos``, ``efc_J``): 3 rows per connect,
    6 per weld ([m] then [rad]), 1 per joint or tendon coupling. Only the selected
    equalities that are active in ``data.eq_active`` contribute rows.

    Args:
        model: The MuJoCo model.
        cost: A scalar for every equality, or one cost per selected equality.
        equalities: Equality names or ids; all equalities of the model when None.
        gain: Task gain in [0, 1].
        lm_damping: Levenberg-Marquardt damping >= 0.
    """

    # ``cost`` is rewritten (one value per row) each time the rows are evaluated; plans
    # read the per-equality costs (cost_by_equality), which set_cost writes in place.
    quiet_attributes = frozenset({"cost"})

    def __init__(
        self,
        model: mujoco.MjModel,
        cost: object,
        equalities: Sequence[int | str] | None = None,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        self.model = model
        self.equalities = equalities
        self._eq_ids = resolve_equality_ids(model, equalities)
        super().__init__(cost=np.zeros(len(self._eq_ids)), gain=gain, lm_damping=lm_damping)
        self._cost_by_eq = np.zeros(model.neq)
        self._selected = np.zeros(model.neq, dtype=bool)
        self._selected[self._eq_ids] = True
        self.set_cost(cost)

    def set_cost(self, cost: object) -> None:
        """Set the cost: a scalar, or one value per selected equality (in the given order).

        ``cost`` then holds one value per constraint row (3 per connect, 6 per weld, 1 per
        joint or tendon coupling) in equality-id order, and after each evaluation one per
        row MuJoCo instantiated (as upstream).
        """
        per_equality = cost_vector(
            cost, len(self._eq_ids), f"{type(self).__name__} cost", EQUALITY_COST_SHAPE
        )
        self._cost_by_eq[:] = 0.0
        self._cost_by_eq[self._eq_ids] = per_equality
        ordered = sorted(self._eq_ids)
        widths = [constraint_width(self.model.eq_type[eq_id]) for eq_id in ordered]
        self.cost = np.repeat(self._cost_by_eq[ordered], widths)

    @property
    def cost_by_equality(self) -> np.ndarray:
        """The cost of each equality of the model (0 for those not selected), shape ``(neq,)``.

        The task's own buffer, written in place by :meth:`set_cost`.
        """
        return self._cost_by_eq

    @property
    def equality_ids(self) -> list[int]:
        """Ids of the selected equality constraints, in the order of :attr:`cost`."""
        return list(self._eq_ids)

    def _rows(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ids, residuals, jacobian = equality_rows(configuration)
        keep = self._selected[ids]
        ids = ids[keep]
        self.cost = self._cost_by_eq[ids]
        return ids, residuals[keep], jacobian[keep]

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Constraint residuals of the active selected equalities."""
        return self._rows(configuration)[1]

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        """Constraint Jacobian rows of the active selected equalities, shape ``(rows, nv)``."""
        return self._rows(configuration)[2]

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        """Weighted residual with each row weighted by its equality's cost."""
        _, residuals, jacobian = self._rows(configuration)
        cost = self.cost
        weighted_error = (-self.gain) * cost * residuals
        mu = self.lm_damping * float(weighted_error @ weighted_error)
        return cost[:, None] * jacobian, weighted_error, mu

    def compute_constraint_rows(
        self, configuration: Configuration
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""Hard rows :math:`J \Delta q = -\alpha r(q)` of the active selected equalities."""
        _, residuals, jacobian = self._rows(configuration)
        return jacobian, (-self.gain) * residuals
