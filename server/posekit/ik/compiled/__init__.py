"""The compiled IK step: one native call per ``solve_ik(..., solver="daqp")``.

:mod:`~posekit.ik.compiled.engine` picks the path and caches plans;
:mod:`~posekit.ik.compiled.plan` packs a problem (:mod:`~posekit.ik.compiled.kinds`)
into flat arrays laid out by :mod:`~posekit.ik.compiled.header`;
:mod:`~posekit.ik.compiled.step_kernel` runs a step (objective, feasible set, daqp).
MuJoCo and daqp are called through their C APIs
(:mod:`~posekit.ik.compiled.native`, :mod:`~posekit.ik.compiled.symbols`). The Python
path (:func:`posekit.ik.solve.assemble_qp`) stays the reference implementation.
"""
