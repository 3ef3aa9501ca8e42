"""Engine objects that report changes of their public attributes to whoever observes them.

Compiled plans (:mod:`posekit.ik.compiled`) copy a task's or limit's scalars (gain,
costs, …) into their own arrays and point at its target buffers. Assigning a public
attribute (``task.gain = 0.5``, or a setter doing so, e.g. ``set_cost``) tells every
plan built from the object to re-read it before its next step. Targets are written in
place by their setters into buffers the plans point at, so they need no notice.
"""

from __future__ import annotations

import weakref
from typing import ClassVar, Protocol


class Observer(Protocol):
    """Something that must hear when an observed object's public attributes change."""

    def changed(self, source: object) -> None:
        """``source`` had a public attribute assigned."""


class Observed:
    """Mixin: assignments to public attributes notify the registered observers.

    ``quiet_attributes`` names public attributes that are derived state, rewritten by
    the class itself and never read by a plan (no notice).
    """

    quiet_attributes: ClassVar[frozenset[str]] = frozenset()

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if name[0] != "_" and name not in self.quiet_attributes:
            observers = self.__dict__.get("_observers")
            if observers:
                for observer in list(observers):
                    observer.changed(self)

    def __getstate__(self) -> dict[str, object]:
        """State for pickling and deep copies: everything but the observers."""
        state = dict(self.__dict__)
        state.pop("_observers", None)
        return state

    def add_observer(self, observer: Observer) -> None:
        """Notify ``observer`` (held weakly) of every later public assignment."""
        observers = self.__dict__.get("_observers")
        if observers is None:
            observers = weakref.WeakSet()
            object.__setattr__(self, "_observers", observers)
        observers.add(observer)
