"""Layout of a compiled plan: the slots the Python packer writes and the kernels read.

A plan is three flat arrays. ``ints`` (``int64``) starts with the header below, then
holds one record per task, constraint and limit; ``floats`` (``float64``) holds the
records' scalars; ``work`` (``float64``) holds every buffer of the step (``W``,
``E``, ``H``, ``c``, the QP's rows and bounds, scratch Jacobians). Addresses of
MuJoCo's buffers, of the tasks' own target and cost arrays, of ``floats``, ``work``
and daqp's structs are stored in ``ints`` as plain integers: the kernel is one call
with one argument.

A record starts with :data:`R_KIND` (a ``K_*`` or ``L_*`` code) and :data:`R_FLOATS`
(where its scalars start in ``floats``); the rest is the kind's own (see its module).
"""

from __future__ import annotations

# --- ints header --------------------------------------------------------------------
H_MODEL = 0  # mjModel*
H_DATA = 1  # mjData*
H_NV = 2
H_NQ = 3
H_FLOATS = 4  # address of floats
H_NFLOATS = 5
H_WORK = 6  # address of work
H_NWORK = 7
H_QPOS = 8  # address of data.qpos
H_SUBTREE_COM = 9  # address of data.subtree_com
H_XMAT = 10  # address of data.xmat (body rotations)
H_GEOM_XPOS = 11
H_GEOM_XMAT = 12
H_GEOM_AABB = 13  # address of model.geom_aabb
H_NGEOM = 14
H_NTENDON = 15
H_EFC = (
    16  # 8 slots: mjData offsets of nefc, efc_type, efc_id, efc_pos, efc_J, rownnz, rowadr, colind
)
H_SPARSE = 24  # 1 when efc_J is sparse (mj_isSparse)
H_NTASKS = 25
H_TASKS = 26  # index in ints of the task record offsets
H_NCONSTRAINTS = 27
H_CONSTRAINTS = 28
H_NLIMITS = 29
H_LIMITS = 30
H_DAQP = 31  # address of daqp's DAQPProblem, DAQPResult and DAQPSettings (daqp_call)
H_SENSE = 32  # address of daqp's int32 sense array
H_SEGMENTS = 33  # address of an int64 scratch: (first row, rows, columns address, count) per task
H_STATUS = 34  # out: daqp's exit flag (0 before a solve; DAQP_OPTIMAL when guessed)
H_ROWS_G = 36  # out: inequality rows of the last step
H_ROWS_A = 37  # out: equality rows of the last step
H_HAVE_BOUNDS = 35  # out: 1 when the last step had simple bounds
H_EFC_READY = 38  # scratch: 1 once this step's constraint rows are made (mj_makeConstraint)
H_FN = 39  # function table, FUNCTION_COUNT slots (symbols.FN_*)
H_GUESSED = 57  # out: 1 when the last QP was solved on the guessed active set (no daqp)
H_GUESS_SKIP = 58  # steps left before the active set is guessed again
H_GUESS_MISSES = 59  # guesses that failed in a row
H_FREE = 60  # address of an int64 scratch of nv: the free variables of the guess
H_NINTS = 76  # length of ints (header and records)
H_VELOCITY = 77  # address of the plan's velocity buffer (nv), written by run_step_at

# --- floats header ------------------------------------------------------------------
F_DAMPING = 0
F_DT = 1
HEADER_FLOATS = 2

# --- work offsets (in ``work``), stored in ints after the function table ----------------
W_H = 64  # H (nv × nv)
W_C = 65  # c (nv)
W_RES = 66  # W (rows × nv), then E (rows)
W_RES_ROWS = 67  # rows W has room for
W_JAC = 68  # scratch: 2 × (6 × nv) Jacobians, then nv, then 6
W_QP = 69  # QP rows (G then A, × nv), bupper, blower, lower and upper bounds, x, lam
W_QP_ROWS = 70  # rows the QP matrix has room for
W_DIAG = 71  # weighted errors of the diagonal tasks (one block of nv each)
W_DENSE = 72  # scratch: a dense nv × nv objective
W_GRAM = 73  # scratch: one task's rows packed by column (nv × rows)
W_GRAM_ROWS = 74  # rows of the largest residual task
W_GUESS = 75  # the guess: Cholesky factor (nv × nv), held sides (nv), reduced rhs (nv)
HEADER_INTS = 80

# --- record prefix ------------------------------------------------------------------
R_KIND = 0
R_FLOATS = 1
R_COLUMNS = 2  # address of the sorted int32 columns its rows may be non-zero on
R_NCOLUMNS = 3
R_ROWS = 4  # rows it writes at most
R_WEIGHTED = 5  # 1: an objective (rows weighted by the cost); 0: a constraint or a limit
R_FIRST = 6  # first kind-specific slot

# --- kind codes ---------------------------------------------------------------------
K_FRAME = 1
K_LOOK_AT = 2
K_AXIS_ALIGN = 3
K_RELATIVE_FRAME = 4
K_COM = 5
K_POSTURE = 6
K_DAMPING = 7
K_DOF_FREEZING = 8
K_EQUALITY = 9
K_KINETIC_ENERGY = 10
L_CONFIGURATION = 21
L_VELOCITY = 22
L_FREE_JOINT_VELOCITY = 23
L_COLLISION = 24

DAQP_EQUALITY = 5
DAQP_OPTIMAL = 1  # daqp's exit flag for a solution (set too when the guess solved it)
"""daqp's ``sense`` flag of an equality row."""
