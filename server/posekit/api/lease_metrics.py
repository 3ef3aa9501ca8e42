"""The lease metrics of a replica, read from its leases when ``/api/metrics`` is scraped.

- ``posekit_sessions_owned{replica}``: sessions whose lease the replica holds (in a
  single replica: its live sessions);
- ``posekit_lease_takeovers_total{replica}``: leases it took that were expired or free
  (a failover, or a session revived from storage);
- ``posekit_lease_renew_failures_total{replica}``: lease renewals that failed or found
  leases lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from posekit.sessions.cluster.leases import Leases


class LeaseCollector(Collector):
    """A Prometheus collector of one replica's lease metrics (module docstring)."""

    def __init__(self, leases: Leases, owned: Callable[[], int]) -> None:
        self.leases = leases
        self.owned = owned

    def collect(self) -> Iterator[Metric]:
        replica = [self.leases.replica_id]
        owned = GaugeMetricFamily(
            "posekit_sessions_owned", "Sessions whose lease this replica holds.", labels=["replica"]
        )
        owned.add_metric(replica, float(self.owned()))
        takeovers = CounterMetricFamily(
            "posekit_lease_takeovers",
            "Leases this replica took that were expired or free.",
            labels=["replica"],
        )
        takeovers.add_metric(replica, float(self.leases.takeovers))
        failures = CounterMetricFamily(
            "posekit_lease_renew_failures",
            "Lease renewals that failed or found leases lost.",
            labels=["replica"],
        )
        failures.add_metric(replica, float(self.leases.renew_failures))
        yield from (owned, takeovers, failures)
