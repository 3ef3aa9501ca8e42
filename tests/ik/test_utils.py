"""Model utilities: free-joint dims, body/subtree id helpers, configuration vectors, mocap."""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest

TREE_XML = """
<mujoco><worldbody>
  <body name="target" mocap="true" pos="0 0 2"/>
  <body name="base" pos="0 0 1"><freejoint name="root"/><geom name="base_g" size="0.1"/>
    <body name="arm" pos="0.2 0 0"><joint name="shoulder" type="ball"/>
      <geom name="arm_g" size="0.05"/><geom name="arm_g2" pos="0.1 0 0" size="0.05"/>
      <body name="hand" pos="0.2 0 0"><joint name="wrist" range="-1 1"/>
        <joint name="slide" type="slide"/><geom name="hand_g" size="0.03"/>
        <site name="palm" pos="0.05 0 0" euler="0 0.5 0"/>
      </body>
    </body>
    <body name="leg" pos="0 0 -0.3"><joint name="hip"/><geom name="leg_g" size="0.05"/></body>
  </body>
  <body name="other" pos="1 0 1"><freejoint name="other_root"/><geom size="0.1"/></body>
</worldbody>
<keyframe><key name="bent" qpos="0 0 1 1 0 0 0  1 0 0 0  0.5 0.1  0.2  1 0 1 1 0 0 0"
  mpos="0 0 2" mquat="1 0 0 0"/></keyframe>
</mujoco>
"""
TREE = mujoco.MjModel.from_xml_string(TREE_XML)


def _body(name: str) -> int:
    return TREE.body(name).id


def test_get_freejoint_dims() -> None:
    q_ids, v_ids = posekit.get_freejoint_dims(TREE)
    root, other = TREE.joint("root"), TREE.joint("other_root")
    q_root, q_other = root.qposadr[0], other.qposadr[0]
    v_root, v_other = root.dofadr[0], other.dofadr[0]
    assert q_ids == [*range(q_root, q_root + 7), *range(q_other, q_other + 7)]
    assert v_ids == [*range(v_root, v_root + 6), *range(v_other, v_other + 6)]


def test_body_and_subtree_id_helpers() -> None:
    base, arm, hand, leg = (_body(n) for n in ("base", "arm", "hand", "leg"))
    assert posekit.get_body_body_ids(TREE, base) == [arm, leg]
    assert posekit.get_body_body_ids(TREE, hand) == []
    assert posekit.get_body_body_ids(TREE, 0) == [_body("target"), base, _body("other")]
    assert posekit.get_subtree_body_ids(TREE, arm) == [arm, hand]
    assert posekit.get_subtree_body_ids(TREE, "base") == [base, arm, hand, leg]
    geom = TREE.geom
    assert posekit.get_body_geom_ids(TREE, arm) == [geom("arm_g").id, geom("arm_g2").id]
    assert posekit.get_body_geom_ids(TREE, _body("target")) == []
    assert posekit.get_subtree_geom_ids(TREE, arm) == [
        geom("arm_g").id, geom("arm_g2").id, geom("hand_g").id,
    ]  # fmt: skip
    joint = TREE.joint
    assert posekit.get_body_joint_ids(TREE, hand) == [joint("wrist").id, joint("slide").id]
    assert posekit.get_subtree_joint_ids(TREE, base) == [
        joint(n).id for n in ("root", "shoulder", "wrist", "slide", "hip")
    ]


@pytest.mark.parametrize("bad", [99, -1, "nope"])
def test_id_helpers_reject_unknown_bodies(bad: object) -> None:
    for helper in (
        posekit.get_body_body_ids, posekit.get_body_geom_ids, posekit.get_body_joint_ids,
        posekit.get_subtree_body_ids, posekit.get_subtree_geom_ids,
        posekit.get_subtree_joint_ids,
    ):  # fmt: skip
        with pytest.raises(posekit.InvalidFrame, match=r"body .*Available body names: \[.*'hand'"):
            helper(TREE, bad)  # type: ignore[arg-type]


def test_custom_configuration_vector() -> None:
    q = posekit.custom_configuration_vector(TREE, wrist=0.3, hip=-0.2)
    expected = TREE.qpos0.copy()
    expected[TREE.joint("wrist").qposadr[0]] = 0.3
    expected[TREE.joint("hip").qposadr[0]] = -0.2
    np.testing.assert_array_equal(q, expected)
    from_key = posekit.custom_configuration_vector(
        TREE, "bent", shoulder=[0.0, 1.0, 0.0, 0.0], root=[1, 2, 3, 1, 0, 0, 0]
    )
    expected = TREE.key("bent").qpos.copy()
    adr = TREE.joint("shoulder").qposadr[0]
    expected[adr : adr + 4] = [0.0, 1.0, 0.0, 0.0]
    expected[:7] = [1, 2, 3, 1, 0, 0, 0]
    np.testing.assert_array_equal(from_key, expected)
    np.testing.assert_array_equal(TREE.key("bent").qpos[7:11], [1, 0, 0, 0])  # not modified


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "fragment"),
    [
        (("nope",), {}, posekit.InvalidKeyframe, r"Keyframe nope does not.*'bent'"),
        ((), {"elbow": 0.1}, KeyError, r"'elbow' does not.*'wrist'"),
        ((), {"wrist": [0.1, 0.2]}, ValueError, r"Joint wrist should have a qpos value of \(1,\)"),
        ((), {"shoulder": 0.1}, posekit.InvalidConfigurationVector, r"value of \(4,\) but got"),
        ((), {"root": "x"}, posekit.InvalidConfigurationVector, r"Joint root .*\(7,\).*'x'"),
        ((), {"wrist": float("nan")}, posekit.InvalidConfigurationVector, "finite"),
    ],
)
def test_custom_configuration_vector_errors(
    args: tuple, kwargs: dict, error: type, fragment: str
) -> None:
    with pytest.raises(error, match=fragment):
        posekit.custom_configuration_vector(TREE, *args, **kwargs)
    assert issubclass(posekit.InvalidConfigurationVector, ValueError)


def test_move_mocap_to_frame() -> None:
    configuration = posekit.Configuration(TREE)
    configuration.update_from_keyframe("bent")
    data = configuration.data
    posekit.move_mocap_to_frame(TREE, data, "target", "palm", "site")
    palm = configuration.get_transform_frame_to_world("palm", "site")
    mocap = posekit.SE3.from_mocap_name(TREE, data, "target")
    np.testing.assert_allclose(mocap.as_matrix(), palm.as_matrix(), atol=1e-12)
    posekit.move_mocap_to_frame(TREE, data, "target", "arm", "body")
    np.testing.assert_allclose(
        posekit.SE3.from_mocap_id(data, 0).as_matrix(),
        configuration.get_transform_frame_to_world("arm", "body").as_matrix(),
        atol=1e-12,
    )
    with pytest.raises(
        posekit.InvalidMocapBody, match=r"Body 'hand' is not a mocap body.*'target'"
    ):
        posekit.move_mocap_to_frame(TREE, data, "hand", "palm", "site")
    with pytest.raises(KeyError, match="'nope'"):  # also an InvalidMocapBody
        posekit.move_mocap_to_frame(TREE, data, "nope", "palm", "site")
    with pytest.raises(posekit.InvalidFrame, match="site 'nope'"):
        posekit.move_mocap_to_frame(TREE, data, "target", "nope", "site")
    with pytest.raises(posekit.UnsupportedFrame, match="joint is not supported"):
        posekit.move_mocap_to_frame(TREE, data, "target", "wrist", "joint")
