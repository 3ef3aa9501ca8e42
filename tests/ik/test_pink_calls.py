"""Pink-style Configuration calls: one argument (a body name), KeyError when unknown."""

from __future__ import annotations

import numpy as np
import posekit
import pytest
from support.models import builtin_model

ARM = builtin_model("arm7")


def _configuration() -> posekit.Configuration:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    return configuration


def test_frame_type_defaults_to_body() -> None:
    configuration = _configuration()
    np.testing.assert_array_equal(
        configuration.get_frame_jacobian("link7"), configuration.get_frame_jacobian("link7", "body")
    )
    pose = configuration.get_transform_frame_to_world("hand")
    body = ARM.body("hand").id
    np.testing.assert_allclose(pose.translation(), configuration.data.xpos[body])
    np.testing.assert_allclose(
        pose.as_matrix()[:3, :3], configuration.data.xmat[body].reshape(3, 3)
    )
    # mink-style calls, which always pass the type, are unchanged.
    site = configuration.get_transform_frame_to_world("ee", "site")
    np.testing.assert_allclose(site.translation(), configuration.data.site_xpos[ARM.site("ee").id])


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.get_frame_jacobian("nope"),
        lambda c: c.get_transform_frame_to_world("nope"),
        lambda c: c.get_transform_frame_to_world(99),
        lambda c: c.get_frame_jacobian("nope", "site"),
    ],
)
def test_unknown_frames_are_key_errors(call: object) -> None:
    with pytest.raises(KeyError) as caught:
        call(_configuration())  # type: ignore[operator]
    assert isinstance(caught.value, posekit.InvalidFrame)
    message = str(caught.value)
    assert not message.startswith(("'", '"'))  # the plain message, not a quoted key
    assert "Available" in message and "names" in message
