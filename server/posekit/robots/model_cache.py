"""Compiled robot models: shared while in use, kept a short while after, then released.

Every model anyone still holds (a session, its MjData, a viewer) is found through a weak
reference, so a robot is never compiled twice while it is in use. Besides, the cache
keeps *strong* references to the models requested recently, so that re-opening a robot
soon after its last session ended is instant; that list is bounded by count, by bytes
(``MjModel.nbuffer``) and by age. A model that is neither in use nor recent is freed,
and the memory MuJoCo returned is handed back to the operating system
(:mod:`posekit.memory`).

MuJoCo's own asset cache (decoded mesh files, up to 500 MB per process by default)
would keep every mesh ever loaded; it is turned off, since this cache keeps what is
worth keeping.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import mujoco

from posekit.memory import note_freed, release_noted

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CacheLimits:
    """How many recently requested models the cache keeps without users.

    Attributes:
        models: At most this many.
        megabytes: At most this many MB of model buffers together.
        idle_s: Each for at most this many seconds after it was last requested.
    """

    models: int = 8
    megabytes: float = 512.0
    idle_s: float = 60.0


@dataclass
class _Recent:
    model: mujoco.MjModel
    requested: float  # [s, monotonic]


class ModelCache:
    """Compiled models by key (module docstring). Thread-safe.

    Args:
        limits: What to keep of the models nobody uses.
        clock: Monotonic time [s] (tests give their own).
    """

    def __init__(
        self, limits: CacheLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or CacheLimits()
        self._clock = clock
        self._live: weakref.WeakValueDictionary[Hashable, mujoco.MjModel] = (
            weakref.WeakValueDictionary()
        )
        self._recent: OrderedDict[Hashable, _Recent] = OrderedDict()
        self._lock = threading.Lock()
        self._compiling: dict[Hashable, threading.Lock] = {}
        self._generations: dict[Hashable, int] = {}  # bumped by invalidate()
        mujoco.mj_setCacheCapacity(mujoco.mj_getCache(), 0)

    def get(self, key: Hashable, compile_model: Callable[[], mujoco.MjModel]) -> mujoco.MjModel:
        """The model of ``key``: the one in use or recent, else ``compile_model()`` (once,
        even under concurrent calls)."""
        model = self._lookup(key)
        if model is not None:
            return model
        with self._lock:
            compiling = self._compiling.setdefault(key, threading.Lock())
        with compiling:
            model = self._lookup(key)
            if model is None:
                with self._lock:
                    generation = self._generations.get(key, 0)
                model = compile_model()
                with self._lock:
                    if self._generations.get(key, 0) == generation:  # not invalidated since
                        self._live[key] = model
                        self._remember(key, model)
                weakref.finalize(model, note_freed)
        return model

    def invalidate(self, which: Callable[[Hashable], bool]) -> list[Hashable]:
        """Forget the models of every key ``which`` accepts (their files changed): the
        next :meth:`get` compiles again, and a compile under way when this is called is
        not kept (its caller still gets its model). Sessions holding an old model keep
        it until they let it go. Returns the keys forgotten."""
        with self._lock:
            known = [*self._live.keys(), *self._recent, *self._compiling]
            keys = list(dict.fromkeys(key for key in known if which(key)))
            for key in keys:
                self._generations[key] = self._generations.get(key, 0) + 1
                self._live.pop(key, None)
                self._recent.pop(key, None)
        return keys

    def is_loaded(self, key: Hashable) -> bool:
        """Whether ``key``'s model is compiled (in use or recent)."""
        with self._lock:
            return key in self._live

    def loaded(self) -> list[Hashable]:
        """Keys of the models in memory (in use or recent)."""
        with self._lock:
            return list(self._live.keys())

    def recent_bytes(self) -> int:
        """Bytes of the model buffers kept for recent use."""
        with self._lock:
            return sum(entry.model.nbuffer for entry in self._recent.values())

    def expire(self) -> None:
        """Release recent models older than ``idle_s``, and give freed memory back to
        the operating system. Call it now and then (the manager's housekeeping does, about
        once a second)."""
        cutoff = self._clock() - self.limits.idle_s
        with self._lock:
            while self._recent and next(iter(self._recent.values())).requested <= cutoff:
                self._recent.popitem(last=False)
        release_noted()

    def _lookup(self, key: Hashable) -> mujoco.MjModel | None:
        with self._lock:
            model = self._live.get(key)
            if model is not None:
                self._remember(key, model)
            return model

    def _remember(self, key: Hashable, model: mujoco.MjModel) -> None:
        """Keep ``model`` as the most recent; drop the oldest beyond the bounds (lock held)."""
        self._recent.pop(key, None)
        self._recent[key] = _Recent(model, self._clock())
        budget = self.limits.megabytes * 1e6
        total = sum(entry.model.nbuffer for entry in self._recent.values())
        while len(self._recent) > self.limits.models or (total > budget and self._recent):
            _, dropped = self._recent.popitem(last=False)
            total -= dropped.model.nbuffer
