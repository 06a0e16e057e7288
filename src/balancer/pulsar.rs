//! pulsar (docs/stargate.md 3.7): weighted rendezvous ranking; the
//! first feasible cluster wins, at its ranking position. Load is ignored.

use super::ranking::{feasibility, Feasibility, Ranker};
use super::{primary, Choice, ClusterSnapshot, Decision, Membership, Request, Scratch};
use crate::ir::PulsarSettings;

#[derive(Debug)]
pub struct Pulsar {
    consider_kv: bool,
    ranker: Ranker,
}

impl Pulsar {
    pub fn new(settings: &PulsarSettings) -> Self {
        Pulsar {
            consider_kv: settings.consider_kv_free_tokens,
            ranker: Ranker::new(&settings.seed, settings.rendezvous_weight, false),
        }
    }

    pub(crate) fn ranker(&self) -> &Ranker {
        &self.ranker
    }

    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        scratch: &mut Scratch,
    ) -> Decision {
        self.ranker.rank(request, clusters, ids, scratch);
        let mut kv_skipped = false;
        for (rank, &pos) in scratch.ranking.iter().enumerate() {
            let Some(c) = clusters.get(pos) else { continue };
            match feasibility(c, request, self.consider_kv) {
                Feasibility::Eligible => {
                    return Decision::Selected(Choice {
                        index: pos,
                        rank_depth: rank_depth(rank),
                        selected_after_kv_free_tokens_skip: kv_skipped,
                    })
                }
                Feasibility::KvSkip => kv_skipped = true,
                Feasibility::Excluded | Feasibility::NoInputTokens => {}
            }
        }
        Decision::Unavailable
    }
}

/// 1-based ranking position of a 0-based index.
pub(crate) fn rank_depth(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX).saturating_add(1)
}

/// Pushes the feasible members among ranks `ranks` (0-based range) into
/// `members`.
pub(crate) fn feasible_members(
    ranking: &[usize],
    ranks: std::ops::Range<usize>,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    consider_kv: bool,
    members: &mut Vec<usize>,
) {
    members.clear();
    let end = ranks.end.min(ranking.len());
    let start = ranks.start.min(end);
    for &pos in &ranking[start..end] {
        if clusters
            .get(pos)
            .is_some_and(|c| feasibility(c, request, consider_kv) == Feasibility::Eligible)
        {
            members.push(pos);
        }
    }
}

/// The choice for a selected position: its ranking position, and whether a
/// higher rank was skipped for KV.
pub(crate) fn ranked_choice(
    ranking: &[usize],
    pos: usize,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    consider_kv: bool,
) -> Choice {
    let rank = ranking.iter().position(|&p| p == pos).unwrap_or(0);
    let kv_skipped = ranking[..rank].iter().any(|&p| {
        clusters
            .get(p)
            .is_some_and(|c| feasibility(c, request, consider_kv) == Feasibility::KvSkip)
    });
    Choice {
        index: pos,
        rank_depth: rank_depth(rank),
        selected_after_kv_free_tokens_skip: kv_skipped,
    }
}

/// Steps 1 and 2 of PWW and the legacy walk (3.8.3): the cached ranking
/// into `scratch.ranking`, `Unavailable` when it is empty, then the
/// no-queue-SLO shortcut. `Some` when these already decide.
pub(crate) fn rank_then_shortcut(
    ranker: &Ranker,
    slo_on: bool,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    ids: Option<Membership>,
    scratch: &mut Scratch,
    consider_kv: bool,
) -> Option<Decision> {
    ranker.rank(request, clusters, ids, scratch);
    if scratch.ranking.is_empty() {
        return Some(Decision::Unavailable);
    }
    no_slo_shortcut(&scratch.ranking, slo_on, request, clusters, consider_kv)
}

/// The no-queue-SLO shortcut (3.8.3 step 2): without a queue SLO a feasible
/// rank 1 is selected at once, with no capacity check and no wait.
pub(crate) fn no_slo_shortcut(
    ranking: &[usize],
    slo_on: bool,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    consider_kv: bool,
) -> Option<Decision> {
    let &first = ranking.first()?;
    let feasible = clusters
        .get(first)
        .is_some_and(|c| feasibility(c, request, consider_kv) == Feasibility::Eligible);
    (!slo_on && feasible).then(|| primary(first))
}
