package metrics

import "github.com/prometheus/client_golang/prometheus"

// Fleet metrics (serve --workspaces --fleet-lease): no workspace label,
// as for the host's.
var (
	FleetLeasesHeld = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_fleet_leases_held",
		Help: "Workspace leases this host holds (the workspaces it serves).",
	})
	FleetAcquisitions = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_fleet_lease_acquisitions_total",
		Help: "Leases taken, by how the local copy was found (current: kept; stale or missing: restored from the replica).",
	}, []string{"local"})
	FleetLosses = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_fleet_lease_losses_total",
		Help: "Leases lost while serving, by cause (taken: another host holds it; expired: no renewal in time); the workspace was closed at once.",
	}, []string{"cause"})
	FleetRenewFailures = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_fleet_lease_renew_failures_total",
		Help: "Lease renewals that failed (the lease store unreachable or slow); retried until the lease would lapse.",
	})
	FleetRenewHedges = factory.NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_fleet_lease_renew_hedges_total",
		Help: "Extra lease renewal attempts sent alongside a slow one (no answer within TTL/12) that a renewal succeeded after.",
	})
	FleetReleases = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_fleet_lease_releases_total",
		Help: "Leases given up when a workspace closed (hibernation, shutdown), by outcome (ok; kept: the close or its final replication failed, so the lease is kept until the replica caught up, or lapses without a replica; failed: the lease store refused or was unreachable).",
	}, []string{"outcome"})
	FleetUnreplicated = factory.NewGauge(prometheus.GaugeOpts{
		Name: "sqlfs_fleet_unreplicated_workspaces",
		Help: "Closed workspaces whose final replication failed: this host keeps their lease and their store in the replicator's sight, trying again, until the replica has every commit.",
	})
	FleetForwards = factory.NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_fleet_forwards_total",
		Help: "Requests forwarded to the host holding their workspace, by outcome (ok, unreachable).",
	}, []string{"outcome"})
)
