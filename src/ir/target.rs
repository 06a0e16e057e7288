//! The stargate states routex can follow (docs/stargate.md 0.1).
//!
//! A target fixes which fields the configuration accepts and which rules
//! the balancer applies. The default is the newest state.

use serde::{Deserialize, Serialize};

/// A named state of stargate.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// pulsar-wait-and-widen waits for its affinity group and widens band
    /// by band, keeping the no-queue-SLO shortcut (docs/stargate.md 3.8).
    Widening,
    /// `widening` without the no-queue-SLO shortcut, plus
    /// `last_cluster_affinity` and session classification
    /// (docs/stargate.md 3.10).
    #[default]
    Sessions,
}

impl Target {
    /// Every target, oldest first.
    pub const ALL: [Target; 2] = [Target::Widening, Target::Sessions];
    /// The default: the newest state.
    pub const NEWEST: Target = Target::Sessions;

    /// The name written on the command line (`--stargate NAME`), in
    /// scenarios and in the IR.
    pub const fn name(self) -> &'static str {
        match self {
            Target::Widening => "widening",
            Target::Sessions => "sessions",
        }
    }

    /// Exact, case-sensitive lookup.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether pulsar-wait-and-widen without both queue bounds selects a
    /// feasible rank 1 at once (docs/stargate.md 3.8.3 step 2): only in
    /// `widening`.
    pub const fn has_no_queue_slo_shortcut(self) -> bool {
        matches!(self, Target::Widening)
    }

    /// The names of every target, "a, b", for messages.
    pub fn list() -> String {
        Target::ALL.map(Target::name).join(", ")
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Target::from_name(s).ok_or_else(|| {
            format!(
                "unknown stargate target `{s}`, expected one of: {}",
                Target::list()
            )
        })
    }
}
