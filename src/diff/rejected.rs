//! Which per-request expressions the new table rejects that the old one
//! accepted, for one algorithm of one configuration set.
//!
//! Derived from what checking an expression reads of the table
//! (docs/stargate.md 5.3-5.5): syntax, the method name, each parameter's
//! applicability and value are the same for every table, and the builder
//! cannot refuse a valid base with valid parameters. Only two checks read
//! the table:
//! - `unavailable`: whether the set resolves the algorithm (4.4); when it
//!   no longer does, every expression naming it is rejected;
//! - `inert_combination`: an expression that sets one queue-time bound is
//!   completed by the other bound in its base; when the old base held that
//!   bound and the new one does not, such expressions are rejected.

use super::Side;
use crate::check::schema::{is_set, Field};
use crate::diag::Code;
use crate::ir::Algorithm;

/// What makes an expression newly rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectionCause {
    /// Every expression naming the algorithm, method-only or not.
    Unavailable,
    /// Expressions that set `sets` but not `missing`: the old base held
    /// `missing`, the new base does not.
    LoneBound {
        /// The queue-time bound such an expression sets.
        sets: Field,
        /// The other bound, which the new base no longer supplies.
        missing: Field,
    },
}

/// One class of newly rejected expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RejectedClass {
    /// The algorithm the expressions name.
    pub algorithm: Algorithm,
    /// Why they are now rejected.
    pub rejected: RejectionCause,
}

impl RejectedClass {
    /// The code such an expression now gets.
    pub const fn code(&self) -> Code {
        match self.rejected {
            RejectionCause::Unavailable => Code::Unavailable,
            RejectionCause::LoneBound { .. } => Code::InertCombination,
        }
    }

    /// The expressions, in header form: `pulsar;...` stands for any
    /// parameters.
    pub fn expressions(&self) -> String {
        let alg = self.algorithm;
        match self.rejected {
            RejectionCause::Unavailable => format!("{alg}, {alg};..."),
            RejectionCause::LoneBound { sets, missing } => {
                format!("{alg};{}=... without {}", sets.name(), missing.name())
            }
        }
    }

    /// Why, in one sentence.
    pub fn reason(&self) -> String {
        match self.rejected {
            RejectionCause::Unavailable => format!("{} is no longer configured", self.algorithm),
            RejectionCause::LoneBound { missing, .. } => {
                format!("the base no longer sets {}", missing.name())
            }
        }
    }

    /// Whether an expression naming `algorithm` and setting `fields` (any
    /// values) is in this class: the test of the derivation.
    pub fn covers(&self, algorithm: Algorithm, fields: &[Field]) -> bool {
        algorithm == self.algorithm
            && match self.rejected {
                RejectionCause::Unavailable => true,
                RejectionCause::LoneBound { sets, missing } => {
                    fields.contains(&sets) && !fields.contains(&missing)
                }
            }
    }
}

/// The newly rejected classes of one algorithm's two resolutions.
pub fn rejected(
    algorithm: Algorithm,
    before: Option<&Side>,
    after: Option<&Side>,
) -> Vec<RejectedClass> {
    let of = |rejected| RejectedClass {
        algorithm,
        rejected,
    };
    let Some(before) = before else {
        return Vec::new();
    };
    let Some(after) = after else {
        return vec![of(RejectionCause::Unavailable)];
    };
    let (floor, ceil) = (Field::MaxQueueTimeFloorMs, Field::MaxQueueTimeCeilMs);
    if !floor.expression_algorithms().contains(&algorithm) {
        return Vec::new();
    }
    let old = &before.definition.config.fields;
    let new = &after.definition.config.fields;
    [(ceil, floor), (floor, ceil)]
        .into_iter()
        .filter(|(_, missing)| is_set(old, *missing) && !is_set(new, *missing))
        .map(|(sets, missing)| of(RejectionCause::LoneBound { sets, missing }))
        .collect()
}
