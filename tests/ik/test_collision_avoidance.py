"""CollisionAvoidanceLimit: pair filtering, rows against finite differences, broadphase, rollouts."""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest
from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits.collision_avoidance_limit import CollisionAvoidanceLimit
from support.models import menagerie_model, random_configuration

DT = 0.01

FILTER_XML = """
<mujoco><worldbody>
  <geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="base" pos="0 0 0.5">
    <geom name="base_g" type="box" size="0.1 0.1 0.1"/>
    <body name="link1" pos="0 0 0.2"><joint type="hinge"/>
      <geom name="l1a" size="0.05"/><geom name="l1b" pos="0 0 0.1" size="0.05"/>
      <body name="link1_fixed" pos="0 0 0.2"><geom name="l1f" size="0.05"/></body>
      <body name="link2" pos="0 0 0.3"><joint type="hinge"/><geom name="l2" size="0.05"/>
        <body name="link3" pos="0 0 0.3"><joint type="hinge"/>
          <geom name="l3" size="0.05"/><geom name="shadow" pos="0.1 0 0" size="0.02"/>
          <geom name="l3_visual" size="0.06" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
  </body>
  <body name="free" pos="1 0 1"><freejoint/><geom name="ball" size="0.1"/></body>
  <body name="shadow" pos="0 1 1"><joint type="slide"/><geom name="shadow_body_g" size="0.1"/></body>
  <body name="typed" pos="0 -1 1"><joint type="slide"/>
    <geom name="t_2_0" size="0.1" contype="2" conaffinity="0"/></body>
  <body name="typed_b" pos="0 -1.5 1"><joint type="slide"/>
    <geom name="t_0_2" size="0.1" contype="0" conaffinity="2"/>
    <geom name="t_1_0" pos="0.2 0 0" size="0.1" contype="1" conaffinity="0"/></body>
  <body name="empty" pos="0 2 0"><joint type="slide"/><inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>
</worldbody></mujoco>
"""

# Two facing arms (capsule links, sphere hands) whose hands can meet; keyframe "apart"
# swings both arms aside so that the hands start well separated.
TWO_ARMS_XML = """
<mujoco>
  <compiler angle="radian"/>
  <default><joint type="hinge" axis="0 1 0" range="-2 2"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="left_base" pos="-0.3 0 0.3">
      <joint name="l_yaw" axis="0 0 1"/>
      <geom name="l_link1" type="capsule" fromto="0 0 0 0.15 0 0" size="0.03"/>
      <body name="left_link2" pos="0.15 0 0"><joint name="l_elbow"/>
        <geom name="l_link2" type="capsule" fromto="0 0 0 0.12 0 0" size="0.025"/>
        <body name="left_hand" pos="0.12 0 0"><joint name="l_wrist" axis="0 0 1"/>
          <geom name="l_hand" type="sphere" pos="0.02 0 0" size="0.035"/><site name="left_tip"/>
        </body>
      </body>
    </body>
    <body name="right_base" pos="0.3 0 0.3" euler="0 0 3.141592653589793">
      <joint name="r_yaw" axis="0 0 1"/>
      <geom name="r_link1" type="capsule" fromto="0 0 0 0.15 0 0" size="0.03"/>
      <body name="right_link2" pos="0.15 0 0"><joint name="r_elbow"/>
        <geom name="r_link2" type="capsule" fromto="0 0 0 0.12 0 0" size="0.025"/>
        <body name="right_hand" pos="0.12 0 0"><joint name="r_wrist" axis="0 0 1"/>
          <geom name="r_hand" type="sphere" pos="0.02 0 0" size="0.035"/><site name="right_tip"/>
        </body>
      </body>
    </body>
  </worldbody>
  <keyframe><key name="apart" qpos="0.8 0 0 -0.8 0 0"/></keyframe>
</mujoco>
"""
TWO_ARMS = mujoco.MjModel.from_xml_string(TWO_ARMS_XML)
LEFT = ["left_base", "left_link2", "left_hand"]
RIGHT = ["right_base", "right_link2", "right_hand"]

# A sphere on a slide joint facing a fixed sphere: d = 0.1 + q exactly, and ∂d/∂q = 1.
SPHERES_XML = """
<mujoco><worldbody>
  <geom name="fixed" size="0.1"/>
  <body name="mover" pos="0.3 0 0"><joint name="x" type="slide" axis="1 0 0"/>
    <geom name="moving" size="0.1"/></body>
</worldbody></mujoco>
"""
SPHERES = mujoco.MjModel.from_xml_string(SPHERES_XML)

ALOHA_SIDES = ["wrist_link", "gripper_base", "left_finger_link", "right_finger_link"]


def _geom(model: mujoco.MjModel, name: str) -> int:
    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)


def _named_pairs(model: mujoco.MjModel, limit: CollisionAvoidanceLimit) -> list[tuple[str, str]]:
    return [(model.geom(a).name, model.geom(b).name) for a, b in limit.geom_id_pairs]


def _distances(configuration: posekit.Configuration, limit: CollisionAvoidanceLimit) -> np.ndarray:
    model, data = configuration.model, configuration.data
    return np.array(
        [mujoco.mj_geomDistance(model, data, a, b, 10.0, None) for a, b in limit.geom_id_pairs]
    )


# ------------------------------------------------------------------ pair filtering
FILTER = mujoco.MjModel.from_xml_string(FILTER_XML)


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([(["l1a"], ["l1b"])], []),  # same body
        ([(["l1a"], ["l1f"])], []),  # welded bodies
        ([(["l1a"], ["l2"]), (["l1f"], ["l2"]), (["l2"], ["l3"])], []),  # parent/child welds
        ([(["floor"], ["base_g"])], []),  # both welded to the world
        ([(["l1a"], ["l3"])], [("l1a", "l3")]),  # grandparent: kept
        ([(["base_g"], ["l1a"])], [("base_g", "l1a")]),  # parent weld is the world: kept
        ([(["floor"], ["ball"])], [("floor", "ball")]),  # free body on the floor: kept
        ([(["l3_visual"], ["base_g", "ball", "floor"])], []),  # contype = conaffinity = 0
        ([(["t_2_0"], ["t_0_2"])], [("t_2_0", "t_0_2")]),  # contype 2 & conaffinity 2
        ([(["t_2_0"], ["t_1_0"])], []),  # neither type meets the other's affinity
    ],
)
def test_pair_filtering(groups: list, expected: list[tuple[str, str]]) -> None:
    limit = CollisionAvoidanceLimit(FILTER, groups)
    assert _named_pairs(FILTER, limit) == expected
    assert limit.max_num_contacts == len(expected)


def test_body_names_expand_to_their_collidable_geoms() -> None:
    limit = CollisionAvoidanceLimit(FILTER, [(["link1"], ["link3"])])
    assert _named_pairs(FILTER, limit) == [
        ("l1a", "l3"),
        ("l1a", "shadow"),
        ("l1b", "l3"),
        ("l1b", "shadow"),
    ]
    empty = CollisionAvoidanceLimit(FILTER, [(["empty"], ["link3"])])
    assert empty.geom_id_pairs == []


def test_a_string_names_a_geom_before_a_body() -> None:
    # A geom and a body are both called "shadow": the geom wins.
    limit = CollisionAvoidanceLimit(FILTER, [(["shadow"], ["ball"])])
    assert _named_pairs(FILTER, limit) == [("shadow", "ball")]


def test_pairs_are_ordered_and_deduplicated() -> None:
    l1a, l3, ball = _geom(FILTER, "l1a"), _geom(FILTER, "l3"), _geom(FILTER, "ball")
    groups = [
        (["l3"], ["l1a"]),
        (["l1a", "l1a"], [l3, np.int64(l3)]),
        ("ball", ["l3", "link1"]),  # a bare name is a one-element side
    ]
    limit = CollisionAvoidanceLimit(FILTER, groups)
    expected = [(l1a, l3), (l3, ball), (l1a, ball), (_geom(FILTER, "l1b"), ball)]
    assert limit.geom_id_pairs == expected
    assert all(a < b for a, b in limit.geom_id_pairs)
    assert limit.max_num_contacts == 4


@pytest.mark.parametrize(
    ("groups", "fragments"),
    [
        ([(["nope"], ["l1a"])], ["geom 'nope' does not exist", "'floor'", "'link1'"]),
        ([([999], ["l1a"])], ["geom id 999", f"0 <= id < {FILTER.ngeom}"]),
        ([(["l1a"], [1.5])], ["1.5"]),
        ([("l1a", "l3", "ball")], ["pair (A, B)"]),
        ("l1a", ["sequence of pair groups"]),
    ],
)
def test_bad_geom_pairs_name_the_bad_value(groups: object, fragments: list[str]) -> None:
    with pytest.raises(LimitDefinitionError) as info:
        CollisionAvoidanceLimit(FILTER, groups)  # type: ignore[arg-type]
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"gain": 0.0}, "gain"),
        ({"gain": 1.2}, "gain"),
        ({"gain": float("nan")}, "gain"),
        ({"minimum_distance_from_collisions": float("nan")}, "minimum_distance_from_collisions"),
        ({"minimum_distance_from_collisions": "0.1"}, "minimum_distance_from_collisions"),
        ({"collision_detection_distance": float("inf")}, "collision_detection_distance"),
        (
            {"minimum_distance_from_collisions": 0.02, "collision_detection_distance": 0.01},
            "must be >= minimum_distance_from_collisions",
        ),
        ({"bound_relaxation": float("nan")}, "bound_relaxation"),
        ({"broadphase": "yes"}, "broadphase must be True or False"),
    ],
)
def test_bad_parameters_are_rejected(kwargs: dict, fragment: str) -> None:
    with pytest.raises(LimitDefinitionError, match=fragment):
        CollisionAvoidanceLimit(FILTER, [(["l1a"], ["l3"])], **kwargs)


def test_attributes_keep_the_parameters() -> None:
    limit = CollisionAvoidanceLimit(
        FILTER,
        [(["l1a"], ["l3"])],
        gain=0.5,
        minimum_distance_from_collisions=0.01,
        collision_detection_distance=0.2,
        bound_relaxation=-0.001,
    )
    assert limit.model is FILTER
    assert (limit.gain, limit.minimum_distance_from_collisions) == (0.5, 0.01)
    assert (limit.collision_detection_distance, limit.bound_relaxation) == (0.2, -0.001)


# ------------------------------------------------------------------ rows and bounds
@pytest.mark.parametrize(
    ("q", "expected_h"),
    [
        (-0.08, 0.5 * (0.02 - 0.005) + 0.001),  # in range, above d_min
        (-0.097, 0.001),  # in range, closer than d_min
        (-0.1, 0.001),  # touching: nearest points coincide
        (-0.11, 0.001),  # penetrating by 1 cm
    ],
)
def test_sphere_row_and_bound(q: float, expected_h: float) -> None:
    limit = CollisionAvoidanceLimit(
        SPHERES,
        [(["fixed"], ["moving"])],
        gain=0.5,
        collision_detection_distance=0.05,
        bound_relaxation=0.001,
    )
    configuration = posekit.Configuration(SPHERES, np.array([q]))
    G, h = limit.compute_qp_inequalities(configuration, DT)
    # Moving the sphere away (+x) increases d: G Δq = -Δd, so the row is -1 whatever the sign of d.
    np.testing.assert_allclose(G, [[-1.0]], atol=1e-9)
    np.testing.assert_allclose(h, [expected_h], atol=1e-9)


@pytest.mark.parametrize(
    ("q", "expected_h"),
    [
        (-0.105, None),  # penetrating by 5 mm: not deeper than the detection distance
        (-0.115, 0.5 * (-0.015 + 0.03)),  # in range, above d_min
        (-0.14, 0.0),  # deeper than d_min
    ],
)
def test_negative_distances_allow_penetration(q: float, expected_h: float | None) -> None:
    """As upstream: d_min < 0 lets geoms penetrate; detection < 0 waits for penetration."""
    limit = CollisionAvoidanceLimit(
        SPHERES,
        [(["fixed"], ["moving"])],
        gain=0.5,
        minimum_distance_from_collisions=-0.03,
        collision_detection_distance=-0.01,
    )
    G, h = limit.compute_qp_inequalities(posekit.Configuration(SPHERES, np.array([q])), DT)
    if expected_h is None:
        np.testing.assert_array_equal(G, [[0.0]])
        np.testing.assert_array_equal(h, [np.inf])
    else:
        np.testing.assert_allclose(G, [[-1.0]], atol=1e-9)
        np.testing.assert_allclose(h, [expected_h], atol=1e-9)
    # The broadphase agrees with the exact query, also when r1 + r2 + detection < 0.
    for detection in (-0.01, -0.25):
        pair = [(["fixed"], ["moving"])]
        fast, exact = (
            CollisionAvoidanceLimit(
                SPHERES, pair, minimum_distance_from_collisions=-0.3,
                collision_detection_distance=detection, broadphase=broadphase,
            )
            for broadphase in (True, False)
        )  # fmt: skip
        for position in np.linspace(-0.3, 0.1, 41):
            configuration = posekit.Configuration(SPHERES, np.array([position]))
            np.testing.assert_array_equal(
                fast.compute_qp_inequalities(configuration, DT).h,
                exact.compute_qp_inequalities(configuration, DT).h,
            )
    # A rollout pushing the spheres into each other stops at d_min = -3 cm.
    configuration = posekit.Configuration(SPHERES, np.array([0.0]))
    push = posekit.PostureTask(SPHERES, cost=1.0)
    push.set_target(np.array([-0.5]))
    limits = [limit, posekit.VelocityLimit(SPHERES, {"x": 0.5})]
    distances = []
    for _ in range(300):
        velocity = posekit.solve_ik(configuration, [push], DT, "daqp", limits=limits)
        configuration.integrate_inplace(velocity, DT)
        distances.append(0.1 + configuration.q[0])
    assert min(distances) >= -0.03 - 1e-9
    assert distances[-1] == pytest.approx(-0.03, abs=1e-6)


def test_pairs_out_of_range_have_zero_rows_and_infinite_bounds() -> None:
    limit = CollisionAvoidanceLimit(SPHERES, [(["fixed"], ["moving"])])
    configuration = posekit.Configuration(SPHERES, np.array([-0.05]))  # d = 5 cm > 1 cm
    G, h = limit.compute_qp_inequalities(configuration, DT)
    np.testing.assert_array_equal(G, np.zeros((1, 1)))
    np.testing.assert_array_equal(h, [np.inf])
    bounds, rows = limit.compute_qp_bounds_and_rows(configuration, DT)
    assert bounds is None and rows.inactive


def test_no_pairs_is_an_inactive_constraint() -> None:
    limit = CollisionAvoidanceLimit(FILTER, [(["l1a"], ["l1b"])])
    configuration = posekit.Configuration(FILTER)
    assert limit.compute_qp_inequalities(configuration, DT).inactive
    assert limit.compute_qp_bounds_and_rows(configuration, DT)[1].inactive


def test_height_is_fixed_and_compact_rows_match() -> None:
    limit = CollisionAvoidanceLimit(TWO_ARMS, [(LEFT, RIGHT)], collision_detection_distance=0.15)
    assert limit.max_num_contacts == 9
    configuration = posekit.Configuration(TWO_ARMS)
    rng = np.random.default_rng(0)
    seen_active = set()
    for _ in range(30):
        configuration.update(random_configuration(TWO_ARMS, rng))
        G, h = limit.compute_qp_inequalities(configuration, DT)
        assert G.shape == (9, TWO_ARMS.nv) and h.shape == (9,)
        finite = np.isfinite(h)
        assert not G[~finite].any()
        seen_active.add(int(finite.sum()))
        bounds, rows = limit.compute_qp_bounds_and_rows(configuration, DT)
        assert bounds is None
        if finite.any():
            np.testing.assert_array_equal(rows.G, G[finite])
            np.testing.assert_array_equal(rows.h, h[finite])
        else:
            assert rows.inactive
    assert len(seen_active) >= 2  # configurations with different numbers of pairs in range


def test_rows_match_finite_differences_of_the_distance() -> None:
    """G Δq = -(d(q ⊕ Δq) - d(q)) to first order, for separated and penetrating pairs."""
    limit = CollisionAvoidanceLimit(
        TWO_ARMS, [(LEFT, RIGHT), (LEFT + RIGHT, "floor")], collision_detection_distance=10.0
    )
    configuration = posekit.Configuration(TWO_ARMS)
    rng = np.random.default_rng(1)
    signs = set()
    touching = np.array([0.0, 0.05, 0.0, 0.0, 0.05, 0.0])  # arms nearly straight: hands overlap
    samples = [touching] + [random_configuration(TWO_ARMS, rng) for _ in range(40)]
    for q in samples:
        configuration.update(q)
        G, _ = limit.compute_qp_inequalities(configuration, DT)
        distance = _distances(configuration, limit)
        step = rng.normal(size=TWO_ARMS.nv) * 1e-6
        configuration.update(q + step)
        forward = _distances(configuration, limit)
        configuration.update(q - step)
        backward = _distances(configuration, limit)
        change = (forward - backward) / 2.0
        scale = np.abs(G) @ np.abs(step)
        np.testing.assert_allclose(G @ step, -change, atol=1e-12 + 1e-5 * scale.max())
        signs.update(np.sign(distance[np.abs(change) > 1e-9]).tolist())
    assert signs == {-1.0, 1.0}  # both separated and penetrating pairs were checked


@pytest.mark.parametrize("model_name", ["two_arms", "aloha"])
def test_broadphase_changes_nothing(model_name: str) -> None:
    if model_name == "aloha":
        model = menagerie_model("aloha")
        left = [f"left/{b}" for b in ["upper_forearm_link", "lower_forearm_link", *ALOHA_SIDES]]
        right = [f"right/{b}" for b in ["upper_forearm_link", "lower_forearm_link", *ALOHA_SIDES]]
        groups = [(left, right), (left + right, ["table", "floor"])]
    else:
        model, groups = TWO_ARMS, [(LEFT, RIGHT), (LEFT + RIGHT, ["floor"])]
    detection = 0.05 if model_name == "aloha" else 0.15
    fast = CollisionAvoidanceLimit(model, groups, collision_detection_distance=detection)
    fast.broadphase_min_pairs = 0  # two_arms has fewer pairs than the default threshold
    exact = CollisionAvoidanceLimit(
        model, groups, collision_detection_distance=detection, broadphase=False
    )
    assert fast.broadphase and not exact.broadphase
    configuration = posekit.Configuration(model)
    rng = np.random.default_rng(2)
    pruned = active = 0
    for _ in range(40):
        configuration.update(random_configuration(model, rng))
        G_fast, h_fast = fast.compute_qp_inequalities(configuration, DT)
        G_exact, h_exact = exact.compute_qp_inequalities(configuration, DT)
        np.testing.assert_array_equal(G_fast, G_exact)
        np.testing.assert_array_equal(h_fast, h_exact)
        pruned += fast.max_num_contacts - len(fast._candidates(configuration.data))
        active += int(np.isfinite(h_exact).sum())
    assert pruned > 0 and active > 0  # the broadphase skipped work, and pairs were in range


# ------------------------------------------------------------------ rollouts
def _rollout(
    configuration: posekit.Configuration,
    tasks: list,
    limits: list,
    watch: CollisionAvoidanceLimit,
    steps: int,
) -> np.ndarray:
    """Smallest distance of each watched pair over the rollout."""
    smallest = _distances(configuration, watch)
    for _ in range(steps):
        velocity = posekit.solve_ik(configuration, tasks, DT, "daqp", damping=1e-3, limits=limits)
        configuration.integrate_inplace(velocity, DT)
        smallest = np.minimum(smallest, _distances(configuration, watch))
    return smallest


def _hands_meet_tasks(
    configuration: posekit.Configuration, sites: tuple[str, str], middle: np.ndarray | None = None
) -> list:
    """Position tasks sending both sites to ``middle`` (default: the point midway between them)."""
    tasks = []
    first = configuration.get_transform_frame_to_world(sites[0], "site")
    second = configuration.get_transform_frame_to_world(sites[1], "site")
    if middle is None:
        middle = 0.5 * (first.translation() + second.translation())
    for site, own in ((sites[0], first), (sites[1], second)):
        task = posekit.FrameTask(site, "site", position_cost=1.0, orientation_cost=0.0, gain=0.2)
        task.set_target(posekit.SE3.from_rotation_and_translation(own.rotation(), middle))
        tasks.append(task)
    return tasks


def test_rollout_keeps_the_two_arms_apart() -> None:
    d_min = 0.01
    limit = CollisionAvoidanceLimit(
        TWO_ARMS,
        [(LEFT, RIGHT)],
        minimum_distance_from_collisions=d_min,
        collision_detection_distance=0.05,
    )
    configuration = posekit.Configuration(TWO_ARMS)
    configuration.update_from_keyframe("apart")
    # Midway between the bases: out of reach, so both arms stretch until the hands overlap.
    tasks = _hands_meet_tasks(configuration, ("left_tip", "right_tip"), np.array([0, 0, 0.3]))
    unlimited = posekit.Configuration(TWO_ARMS)
    unlimited.update_from_keyframe("apart")
    free = _rollout(unlimited, tasks, [posekit.ConfigurationLimit(TWO_ARMS)], limit, 100)
    assert free.min() < 0.0  # without the limit the hands collide
    limits = [posekit.ConfigurationLimit(TWO_ARMS), limit]
    smallest = _rollout(configuration, tasks, limits, limit, 100)
    assert smallest.min() >= d_min - 1e-3
    assert smallest.min() < d_min + 2e-3  # the hands did come close: the limit was active


def test_rollout_keeps_the_aloha_wrists_apart() -> None:
    model = menagerie_model("aloha")
    d_min = 0.01
    limit = CollisionAvoidanceLimit(
        model,
        [([f"left/{b}" for b in ALOHA_SIDES], [f"right/{b}" for b in ALOHA_SIDES])],
        minimum_distance_from_collisions=d_min,
        collision_detection_distance=0.05,
    )
    assert limit.max_num_contacts > 10
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("neutral_pose")
    tasks = _hands_meet_tasks(configuration, ("left/gripper", "right/gripper"))
    limits = [posekit.ConfigurationLimit(model), limit]
    smallest = _rollout(configuration, tasks, limits, limit, 100)
    assert smallest.min() >= d_min - 1e-3
    assert smallest.min() < d_min + 2e-3
