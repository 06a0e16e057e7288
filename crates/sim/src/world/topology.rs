//! Regions, routers, backends and the RTT matrix (docs/simulator-model.md A3).

use serde::{Deserialize, Serialize};

/// One region of the scenario's `topology.regions`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    pub name: String,
    pub routers: u32,
    /// The region's backends (the members of its clusters).
    pub backends: u32,
    pub traffic_weight: f64,
    /// Backends per cluster (stargate-bench's `pylons_per_cluster`): the
    /// region's `backends` form `backends / backends_per_cluster` clusters,
    /// whose stats the routers' candidate view aggregates. Absent: 1, one
    /// backend per cluster.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub backends_per_cluster: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The scenario's `topology` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    pub regions: Vec<RegionSpec>,
    /// Region x region round-trip times, in the order of `regions`.
    pub rtt_ms: Vec<Vec<f64>>,
    pub intra_region_rtt_ms: f64,
    pub stats_relay_ms: f64,
}

impl TopologySpec {
    /// The five-region default of A3.
    pub fn five_regions() -> Self {
        let region = |name: &str, w: f64| RegionSpec {
            name: name.into(),
            routers: 3,
            backends: 4,
            traffic_weight: w,
            backends_per_cluster: 1,
        };
        TopologySpec {
            regions: vec![
                region("usw2", 1.0),
                region("ue1", 0.0),
                region("ew1", 0.0),
                region("an1", 0.0),
                region("as2", 0.0),
            ],
            rtt_ms: vec![
                vec![0.0, 65.0, 125.0, 100.0, 140.0],
                vec![65.0, 0.0, 70.0, 150.0, 200.0],
                vec![125.0, 70.0, 0.0, 210.0, 255.0],
                vec![100.0, 150.0, 210.0, 0.0, 105.0],
                vec![140.0, 200.0, 255.0, 105.0, 0.0],
            ],
            intra_region_rtt_ms: 1.0,
            stats_relay_ms: 0.0,
        }
    }
}

/// A backend as the routers choose it: one routed cluster, with one or
/// more members (the backends of the core's candidate view).
#[derive(Clone, Debug, PartialEq)]
pub struct Backend {
    pub id: String,
    pub region: usize,
    /// Its members' indices in [`Topology::members`].
    pub members: std::ops::Range<usize>,
}

/// One backend of a cluster: its own Pylon (and engine, unless the
/// cluster's members share one), registered in the routers' candidate
/// views under its cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The cluster's id when the cluster has one member, else
    /// `<cluster>-p<j>`.
    pub id: String,
    /// Its cluster's index in [`Topology::backends`].
    pub cluster: usize,
}

/// An active router (non-zero traffic weight).
#[derive(Clone, Debug, PartialEq)]
pub struct Router {
    pub region: usize,
    /// Share of all traffic entering through this router.
    pub weight: f64,
}

/// The resolved topology of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// The clusters, in region order.
    pub backends: Vec<Backend>,
    /// Every cluster's members, cluster after cluster.
    pub members: Vec<Member>,
    pub routers: Vec<Router>,
    rtt_ms: Vec<Vec<f64>>,
    intra_ms: f64,
    pub stats_relay_ms: f64,
}

impl Topology {
    /// Clusters `<region>-b<i>` in region order, each with
    /// `backends_per_cluster` members; only routers with traffic. Assumes
    /// a validated spec (square matrix, whole clusters); missing entries
    /// read as 0.
    pub fn resolve(spec: &TopologySpec) -> Self {
        let mut backends = Vec::new();
        let mut members = Vec::new();
        let mut routers = Vec::new();
        for (r, region) in spec.regions.iter().enumerate() {
            let per = region.backends_per_cluster.max(1);
            for i in 0..region.backends / per {
                let id = format!("{}-b{i}", region.name);
                let first = members.len();
                for j in 0..per {
                    members.push(Member {
                        id: if per == 1 {
                            id.clone()
                        } else {
                            format!("{id}-p{j}")
                        },
                        cluster: backends.len(),
                    });
                }
                backends.push(Backend {
                    id,
                    region: r,
                    members: first..members.len(),
                });
            }
            if region.traffic_weight > 0.0 && region.routers > 0 {
                for _ in 0..region.routers {
                    routers.push(Router {
                        region: r,
                        weight: region.traffic_weight / f64::from(region.routers),
                    });
                }
            }
        }
        Topology {
            backends,
            members,
            routers,
            rtt_ms: spec.rtt_ms.clone(),
            intra_ms: spec.intra_region_rtt_ms,
            stats_relay_ms: spec.stats_relay_ms,
        }
    }

    /// Renames cluster `c` (and its members, whose ids follow it).
    pub fn rename_cluster(&mut self, c: usize, id: &str) {
        let Some(b) = self.backends.get_mut(c) else {
            return;
        };
        b.id = id.to_string();
        let per = b.members.len();
        for (j, m) in self.members[b.members.clone()].iter_mut().enumerate() {
            m.id = if per == 1 {
                id.to_string()
            } else {
                format!("{id}-p{j}")
            };
        }
    }

    /// Every id a scenario may name a backend by: each cluster's, then
    /// its members' where they differ (a cluster of several backends).
    pub fn ids(&self) -> Vec<&str> {
        let mut ids = Vec::with_capacity(self.members.len() + self.backends.len());
        for c in &self.backends {
            ids.push(c.id.as_str());
            for m in c.members.clone() {
                if self.members[m].id != c.id {
                    ids.push(self.members[m].id.as_str());
                }
            }
        }
        ids
    }

    /// Whether some cluster has several members.
    pub fn has_shared_clusters(&self) -> bool {
        self.members.len() > self.backends.len()
    }

    /// Full round trip between two regions; the intra-region RTT on the diagonal.
    pub fn rtt_ms(&self, a: usize, b: usize) -> f64 {
        if a == b {
            return self.intra_ms;
        }
        self.rtt_ms
            .get(a)
            .and_then(|row| row.get(b))
            .copied()
            .unwrap_or(0.0)
    }

    /// The RTT column a router's core sees, in backend order.
    pub fn router_rtts(&self, router: usize) -> Vec<f64> {
        let region = self.routers.get(router).map_or(0, |r| r.region);
        self.backends
            .iter()
            .map(|b| self.rtt_ms(region, b.region))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_topology_has_twenty_backends_and_three_routers() {
        let t = Topology::resolve(&TopologySpec::five_regions());
        assert_eq!(t.backends.len(), 20);
        assert_eq!(t.backends[0].id, "usw2-b0");
        assert_eq!(t.backends[19].id, "as2-b3");
        assert_eq!(t.routers.len(), 3);
        assert!(t.routers.iter().all(|r| r.region == 0));
        assert!((t.routers[0].weight - 1.0 / 3.0).abs() < 1e-12);
        let rtts = t.router_rtts(0);
        assert_eq!(&rtts[..5], &[1.0, 1.0, 1.0, 1.0, 65.0]);
        assert_eq!(rtts[19], 140.0);
        assert_eq!(t.rtt_ms(2, 4), 255.0);
    }
}
