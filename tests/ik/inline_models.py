"""Small MJCF models written inline for the engine tests (importable as ``inline_models``)."""

# A floating base, a ball joint, a slide and hinges, plus a connect and a joint equality.
TINY_XML = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0 0 1"><freejoint name="root"/>
      <geom type="box" size="0.1 0.1 0.05" mass="2"/>
      <body name="shoulder" pos="0.1 0 0"><joint name="ball" type="ball" range="0 1.5"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
        <body name="slider" pos="0.2 0 0"><joint name="slide" type="slide" axis="1 0 0" range="-0.1 0.1"/>
          <geom type="box" size="0.03 0.03 0.03"/>
          <body name="forearm" pos="0.05 0 0"><joint name="elbow" axis="0 1 0" range="-2 2"/>
            <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
            <site name="tip" pos="0.2 0 0" euler="0.3 0.2 0.1"/>
          </body>
        </body>
      </body>
      <body name="other" pos="-0.1 0 0"><joint name="twin" axis="0 1 0" range="-2 2"/>
        <geom type="capsule" fromto="0 0 0 -0.2 0 0" size="0.02"/>
        <body name="hanger" pos="-0.2 0 0"><joint name="hang" type="ball"/>
          <geom type="sphere" size="0.03" pos="0 0 -0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint name="couple" joint1="twin" joint2="elbow" polycoef="0 0.5 0.1 0 0"/>
    <connect name="pin" body1="hanger" body2="base" anchor="0 0 -0.1"/>
  </equality>
</mujoco>
"""


# Weld and tendon equalities (fixed and spatial tendons) between bodies on hinge, ball and
# slide joints.
COUPLED_XML = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="a"><joint name="h1" axis="0 0 1" range="-2 2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="a2" pos="0.3 0 0"><joint name="b1" type="ball"/><geom size="0.03"/></body>
    </body>
    <body name="b" pos="0 0.3 0">
      <joint name="s1" type="slide" axis="1 0 0" range="-0.2 0.2"/>
      <joint name="h2" axis="0 1 0" range="-2 2"/>
      <geom type="box" size="0.05 0.05 0.05"/><site name="s_b" pos="0 0 0.05"/>
    </body>
    <body name="c" pos="0 -0.3 0"><joint name="h3" axis="1 0 0" range="-2 2"/>
      <geom size="0.03"/><site name="s_c" pos="0.1 0 0"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="fixed"><joint joint="h1" coef="1"/><joint joint="h2" coef="-0.5"/></fixed>
    <spatial name="spatial"><site site="s_b"/><site site="s_c"/></spatial>
  </tendon>
  <equality>
    <weld name="weld" body1="a2" body2="b" relpose="0 0 0 1 0 0 0"/>
    <tendon name="fixed_length" tendon1="fixed" polycoef="0.1 0 0 0 0"/>
    <tendon name="coupled_tendons" tendon1="spatial" tendon2="fixed" polycoef="0 0.3 0 0 0"/>
  </equality>
</mujoco>
"""
