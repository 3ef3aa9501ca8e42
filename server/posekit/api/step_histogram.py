"""A histogram of solve-step durations that costs one ``bisect`` a step.

``prometheus_client``'s :class:`~prometheus_client.Histogram` takes a lock and makes
several Python calls per observation (about 4 µs a step here): with thousands of states
a second from the solver processes, more than the server spends forwarding the state.
This one counts each duration into its bucket with :func:`bisect.bisect_left` and one
list update, and builds the Prometheus histogram (cumulative ``_bucket`` series with
``le`` labels, ``+Inf``, ``_count``, ``_sum``) only when the metrics are read.

One thread observes (the solve loop's: the event loop reading the solver processes, or
the in-process scheduler's thread), so no count is lost; a read meanwhile may see one
batch half counted, as a scrape between two observations would.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString


class StepHistogram(Collector):
    """Durations counted into ``buckets`` (upper bounds, inclusive, ascending; ``+Inf``
    is added), exposed as the histogram ``name`` in ``registry``."""

    def __init__(
        self, name: str, documentation: str, buckets: Sequence[float], registry: CollectorRegistry
    ) -> None:
        self._name = name
        self._documentation = documentation
        self._bounds = [float(b) for b in buckets if not math.isinf(b)]
        self._counts = [0] * (len(self._bounds) + 1)  # the last: above every bound
        self._sum = 0.0
        registry.register(self)

    def observe_all(self, values: Sequence[float]) -> None:
        """Count each of ``values`` (a value equal to a bound counts in that bound's
        bucket, as Prometheus' ``le`` says)."""
        counts, bounds = self._counts, self._bounds
        for value in values:
            counts[bisect_left(bounds, value)] += 1
        self._sum += sum(values)

    def collect(self) -> Iterator[HistogramMetricFamily]:
        cumulative, buckets = 0, []
        for bound, count in zip([*self._bounds, math.inf], list(self._counts), strict=True):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))
        family = HistogramMetricFamily(self._name, self._documentation)
        family.add_metric([], buckets, self._sum)
        yield family

    def describe(self) -> Iterator[HistogramMetricFamily]:
        yield HistogramMetricFamily(self._name, self._documentation)
