//! How the fleet and its clients differ from the homogeneous open-loop
//! default (docs/simulator.md, "Fleets"): per-backend engine and Pylon
//! profiles, the client's in-flight cap (a closed loop), and faults that
//! change the fleet during a run. The run loop reads these settings; none of
//! them changes a run that does not use them.

use crate::kernel::time::Micros;
use crate::world::engine::EngineParams;
use crate::world::pylon::PylonConfig;

/// One backend's engine and Pylon, when they differ between backends.
#[derive(Clone, Debug, PartialEq)]
pub struct BackendProfile {
    pub engine: EngineParams,
    pub pylon: PylonConfig,
}

/// When a fault happens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// When the request of this index (in the plan) is sent.
    Request(u32),
    /// At this instant.
    At(Micros),
}

/// What happens to the backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultAction {
    /// Its registration ends: routers stop choosing it (what it already
    /// serves completes).
    Remove,
    /// Its Pylon publishes nothing for this long; routers keep its last
    /// report.
    StatsOutage(Micros),
    /// Its engine serves `factor` times slower than its profile (for
    /// `duration`, or for the rest of the run); the Pylon measures and
    /// reports what the engine does.
    SlowDown {
        factor: f64,
        duration: Option<Micros>,
    },
}

/// A change of one backend during a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub trigger: Trigger,
    /// The member (a backend of a cluster, by index in the topology's
    /// `members`; with one backend per cluster, the cluster's index).
    pub backend: u32,
    pub action: FaultAction,
}

/// One request as a client and its backend saw it (kept on request, for
/// scores that need every request: stargate-bench's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RequestLog {
    /// When the client sent it (its planned arrival, later under a closed
    /// loop).
    pub sent: Micros,
    /// When the client wanted to send it: its planned arrival, or the
    /// instant a conversation's client asked for the turn or retry.
    pub asked: Micros,
    /// When it was resolved (a success at its engine's last token): under
    /// a closed loop its place goes to the next request then.
    pub resolved: Micros,
    pub succeeded: bool,
    /// Client-side first and last token; 0 when it did not get there.
    pub first_token: Micros,
    pub done: Micros,
    /// The backend (cluster) of the final attempt.
    pub backend: u32,
    /// The member of that cluster it went to (by index in the topology's
    /// `members`).
    pub member: u32,
    pub rank_depth: u32,
    pub input: u64,
    pub output: u64,
    pub reused: u64,
    /// The affinity key's index.
    pub key: u32,
    /// 429s received.
    pub rejections: u32,
}

/// What a run keeps beyond its metrics when asked to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunDetail {
    pub requests: Vec<RequestLog>,
    /// Prefix-cache evictions per engine (per member, or per cluster
    /// when its members share one).
    pub evictions: Vec<u64>,
    /// When each member (a backend of a cluster, by index in the
    /// topology's `members`) was removed, if it was.
    pub removed_at: Vec<Option<Micros>>,
}

/// How a member's profile maps a request's draws (engines v1 and v2): the
/// TTFT jitter scaled by the ratio of the jitter ranges, the decode rate
/// at the same place in the member's range as in the fleet's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawMap {
    jitter_scale: f64,
    from: [f64; 2],
    to: [f64; 2],
}

impl DrawMap {
    /// `None` when the member draws as the fleet does.
    pub fn new(fleet: &EngineParams, member: &EngineParams) -> Option<DrawMap> {
        if fleet.ttft_jitter_ms == member.ttft_jitter_ms && fleet.decode_tps == member.decode_tps {
            return None;
        }
        let jitter_scale = if fleet.ttft_jitter_ms > 0.0 {
            member.ttft_jitter_ms / fleet.ttft_jitter_ms
        } else {
            1.0
        };
        Some(DrawMap {
            jitter_scale,
            from: fleet.decode_tps,
            to: member.decode_tps,
        })
    }

    /// (jitter ms, decode tokens/s) for the member.
    pub fn map(&self, jitter_ms: f64, decode_tps: f64) -> (f64, f64) {
        let [a, b] = self.from;
        let [c, d] = self.to;
        let at = if b > a {
            ((decode_tps - a) / (b - a)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (jitter_ms * self.jitter_scale, c + at * (d - c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_keep_their_place_in_the_range() {
        let fleet = EngineParams::profile_a(); // jitter 20 ms, decode 128..200
        let mut fast = fleet.clone();
        fast.ttft_jitter_ms = 10.0;
        fast.decode_tps = [256.0, 400.0];
        let map = DrawMap::new(&fleet, &fast).expect("differs");
        assert_eq!(map.map(20.0, 128.0), (10.0, 256.0));
        assert_eq!(map.map(5.0, 164.0), (2.5, 328.0));
        assert_eq!(map.map(0.0, 200.0), (0.0, 400.0));
        assert_eq!(DrawMap::new(&fleet, &fleet), None);
    }
}
