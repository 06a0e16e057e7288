//! What a configuration change does: two route tables compared per
//! configuration set (docs/stargate.md 4.4), algorithm by algorithm and field
//! by field, with the provenance `routex explain` gives each field, and the
//! per-request expressions the new table rejects that the old one accepted
//! (`rejected`). Works on the IR only, so either file kind (and a route
//! file against an lb-config.json) compares the same way; `routex diff` is
//! its client (docs/cli.md "routex diff").
//!
//! Cost is linear in the number of models: every lookup is a hash map's,
//! each set compares at most six algorithms, and a definition equal on
//! both sides (fields as configured, so provenance too) is skipped without
//! computing provenance.

mod locate;
mod rejected;

pub use locate::{locate, Locations};
pub use rejected::{RejectedClass, RejectionCause};

pub use crate::check::Place;

use crate::check::expr::Checked;
use crate::check::{Implication, Provenance};
use crate::ir::{Algorithm, Definition, Origin, Resolution, RouteTable, SetKind};
use indexmap::IndexMap;
use serde_json::Value;
use std::sync::Arc;

/// One side of an algorithm's comparison: the definition a method naming
/// it resolves to, where it is written, and each field's provenance.
#[derive(Clone, Debug)]
pub struct Side {
    /// Where the definition is written in its file.
    pub place: Place,
    /// The definition a method naming the algorithm resolves to.
    pub definition: Arc<Definition>,
    /// [`crate::check::provenance`] by IR field name, in IR order.
    pub provenance: IndexMap<String, Provenance>,
    /// What implies each implied field ([`crate::check::implications`]).
    pub implied: IndexMap<String, Implication>,
    /// Every admission and settings field with its value, in IR order.
    pub fields: Vec<(String, Value)>,
}

impl Side {
    fn new(resolution: Resolution<'_>) -> Side {
        let definition = Arc::clone(resolution.definition);
        // A configuration is an expression that sets nothing over its own
        // fields: explain's rule then credits the entry or the default.
        let checked = Checked {
            base: definition.config.clone(),
            config: definition.config.clone(),
            set_by_expression: Vec::new(),
            policy: None,
        };
        let place = Place::of(&resolution);
        Side {
            place,
            provenance: crate::check::provenance(&definition.policy, &checked, place),
            implied: crate::check::implications(&checked, place),
            fields: fields_of(&definition),
            definition,
        }
    }

    /// Where a field's value comes from, as `explain` names it: the place
    /// for a configured value, `default` (following another field when its
    /// default is that field's value), or what implies it.
    pub fn source(&self, field: &str) -> FieldSource {
        match self.provenance.get(field) {
            Some(Provenance::Config(place)) => FieldSource::Place(*place),
            Some(Provenance::Implied) => FieldSource::Implied {
                by: self.implied.get(field).map_or("", |i| i.by),
            },
            Some(Provenance::Default) | None => match crate::check::default_follows(field) {
                Some(of) => FieldSource::Follows { of },
                None => FieldSource::Explain(Provenance::Default),
            },
            Some(other) => FieldSource::Explain(*other),
        }
    }
}

/// The admission and settings fields of a policy, in IR order.
fn fields_of(definition: &Definition) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Ok(Value::Object(mut json)) = serde_json::to_value(&definition.policy) {
        for section in ["admission", "settings"] {
            if let Some(Value::Object(map)) = json.remove(section) {
                out.extend(map);
            }
        }
    }
    out
}

/// A field's provenance as the diff names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSource {
    /// Set in the file, at this place.
    Place(Place),
    /// Forced by the value of another field (explain's `implied`).
    Implied {
        /// The IR name of the field whose value forces this one (such as
        /// `consider_kv_free_tokens` for `require_input_tokens`).
        by: &'static str,
    },
    /// Not set, with a default defined as another field's value
    /// (`band_widen_interval_ms` follows `cache_affinity_wait_ms`): the
    /// value changes with that field's.
    Follows {
        /// The IR name of the field whose value the default is.
        of: &'static str,
    },
    /// Not set: explain's provenance (`default`).
    Explain(Provenance),
}

impl FieldSource {
    /// The JSON spelling, [`Provenance::name`]'s (a followed default is
    /// `default`; the document says what it follows in `follows`).
    pub fn name(self) -> String {
        match self {
            FieldSource::Place(place) => Provenance::Config(place).name().to_string(),
            FieldSource::Implied { .. } => Provenance::Implied.name().to_string(),
            FieldSource::Follows { .. } => Provenance::Default.name().to_string(),
            FieldSource::Explain(p) => p.name().to_string(),
        }
    }

    /// The field a followed default follows, else `None`.
    pub fn follows(self) -> Option<&'static str> {
        match self {
            FieldSource::Follows { of } => Some(of),
            _ => None,
        }
    }

    /// The human spelling, [`Provenance::label`]'s, with what implies the
    /// value or what a default follows (`default, follows
    /// cache_affinity_wait_ms`).
    pub fn label(self) -> String {
        match self {
            FieldSource::Place(place) => place.config_label().to_string(),
            FieldSource::Implied { by } => format!("implied by {by}"),
            FieldSource::Follows { of } => format!("default, follows {of}"),
            FieldSource::Explain(p) => p.label().to_string(),
        }
    }
}

/// One field whose value or provenance differs.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldChange {
    /// The field's IR name (an admission or settings key).
    pub field: String,
    /// The old table's value (IR JSON) and where it comes from.
    pub before: (Value, FieldSource),
    /// The new table's value (IR JSON) and where it comes from.
    pub after: (Value, FieldSource),
}

/// One algorithm of a set that resolves differently.
#[derive(Clone, Debug)]
pub struct AlgorithmDiff {
    /// The algorithm a method names.
    pub algorithm: Algorithm,
    /// The old table's side; `None`: not available (a method naming it is
    /// `unavailable`).
    pub before: Option<Side>,
    /// The new table's side; `None`: not available.
    pub after: Option<Side>,
    /// Fields whose value or provenance differ, when both sides exist.
    pub changes: Vec<FieldChange>,
    /// Per-request expressions accepted before and rejected after.
    pub rejected: Vec<RejectedClass>,
}

impl AlgorithmDiff {
    /// Whether any field resolves to another value (not only another
    /// provenance), or the algorithm appears or vanishes.
    pub fn changes_behaviour(&self) -> bool {
        self.before.is_none()
            || self.after.is_none()
            || self.changes.iter().any(|c| c.before.0 != c.after.0)
    }
}

/// How a model's listing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Listed in both.
    Changed,
    /// Listed only in the new table: before, it used the default set.
    Added,
    /// Listed only in the old table: after, it uses the default set.
    Removed,
}

impl Presence {
    /// The JSON spelling (`changed`, `added`, `removed`).
    pub const fn name(self) -> &'static str {
        match self {
            Presence::Changed => "changed",
            Presence::Added => "added",
            Presence::Removed => "removed",
        }
    }
}

/// One configuration set that resolves differently.
#[derive(Clone, Debug)]
pub struct SetDiff {
    /// The model id; `None` is every model without an entry.
    pub model: Option<String>,
    /// Whether the model is listed in both tables or only in one.
    pub presence: Presence,
    /// The configured algorithm (no `x-routing-method`), before and after.
    pub configured: (Algorithm, Algorithm),
    /// The algorithms that resolve differently, the configured ones
    /// first, then in [`Algorithm::ALL`] order; those inherited through
    /// the top-level `request_algorithms` on both sides are in
    /// [`TableDiff::request_algorithms`] instead.
    pub algorithms: Vec<AlgorithmDiff>,
}

/// A change of the top-level `request_algorithms`, and who inherits it.
#[derive(Clone, Debug)]
pub struct TopLevelDiff {
    /// How the top-level entry for the algorithm changed.
    pub diff: AlgorithmDiff,
    /// Whether models without an entry resolve it there (their `default`
    /// is another algorithm) on both sides.
    pub unlisted: bool,
    /// Listed models that resolve it there on both sides (they have no
    /// entry of their own for it).
    pub models: usize,
}

/// Everything that resolves differently between two tables.
#[derive(Clone, Debug)]
pub struct TableDiff {
    /// Changes of the top-level `request_algorithms`, in
    /// [`Algorithm::ALL`] order.
    pub request_algorithms: Vec<TopLevelDiff>,
    /// Models without an entry first, then the old table's models in its
    /// order, then the models only the new table lists.
    pub sets: Vec<SetDiff>,
    /// Sets compared (models without an entry, and every model either
    /// table lists) that resolve every algorithm as before, inherited
    /// top-level changes aside.
    pub unchanged: usize,
}

impl TableDiff {
    /// Whether nothing resolves differently (no top-level change and no
    /// set change).
    pub fn is_empty(&self) -> bool {
        self.request_algorithms.is_empty() && self.sets.is_empty()
    }

    /// Every rejection, top-level and per set.
    pub fn rejections(&self) -> usize {
        let top: usize = self
            .request_algorithms
            .iter()
            .map(|t| t.diff.rejected.len())
            .sum();
        let sets: usize = self
            .sets
            .iter()
            .flat_map(|s| &s.algorithms)
            .map(|a| a.rejected.len())
            .sum();
        top + sets
    }

    /// How many sets of each presence differ: (changed, added, removed);
    /// models without an entry count as changed.
    pub fn counts(&self) -> (usize, usize, usize) {
        self.sets
            .iter()
            .fold((0, 0, 0), |(c, a, r), s| match s.presence {
                Presence::Changed => (c + 1, a, r),
                Presence::Added => (c, a + 1, r),
                Presence::Removed => (c, a, r + 1),
            })
    }
}

/// A configuration set of one table: a listed model (or one the table
/// does not list, which gets the default set) or every unlisted model.
#[derive(Clone, Copy)]
enum Set<'a> {
    Model(&'a str),
    Unlisted,
}

fn resolve<'t>(
    table: &'t RouteTable,
    set: Set<'_>,
    algorithm: Algorithm,
) -> Option<Resolution<'t>> {
    match set {
        Set::Model(id) => table.resolve(id, algorithm),
        Set::Unlisted => table.resolve_unlisted(algorithm),
    }
}

fn configured(table: &RouteTable, set: Set<'_>) -> Algorithm {
    match set {
        Set::Model(id) => table.configured(id).config.algorithm,
        Set::Unlisted => table.default.config.algorithm,
    }
}

/// Compares two tables (docs/cli.md "routex diff" describes the result).
pub fn diff_tables(old: &RouteTable, new: &RouteTable) -> TableDiff {
    let mut request_algorithms: Vec<TopLevelDiff> = Algorithm::ALL
        .into_iter()
        .filter_map(|a| {
            let before = old.request_algorithms.get(&a);
            let after = new.request_algorithms.get(&a);
            compare(a, before.map(top_level), after.map(top_level)).map(|diff| TopLevelDiff {
                diff,
                unlisted: false,
                models: 0,
            })
        })
        .collect();
    let mut sets = Vec::new();
    let mut compared = 0usize;
    let mut visit = |set: Set<'_>, presence: Presence| {
        compared += 1;
        let mut algorithms = Vec::new();
        for a in Algorithm::ALL {
            let before = resolve(old, set, a);
            let after = resolve(new, set, a);
            let inherited = [&before, &after].iter().all(|r| {
                r.as_ref()
                    .is_none_or(|r| Place::of(r) == Place::RequestAlgorithms)
            });
            if inherited {
                if let Some(top) = request_algorithms
                    .iter_mut()
                    .find(|t| t.diff.algorithm == a)
                {
                    match set {
                        Set::Unlisted => top.unlisted = true,
                        Set::Model(_) => top.models += 1,
                    }
                }
                continue;
            }
            algorithms.extend(compare(a, before, after));
        }
        // The configured algorithms (no `x-routing-method`) first.
        let (old_alg, new_alg) = (configured(old, set), configured(new, set));
        algorithms.sort_by_key(|d| d.algorithm != new_alg && d.algorithm != old_alg);
        if !algorithms.is_empty() || presence != Presence::Changed {
            sets.push(SetDiff {
                model: match set {
                    Set::Model(id) => Some(id.to_string()),
                    Set::Unlisted => None,
                },
                presence,
                configured: (old_alg, new_alg),
                algorithms,
            });
        }
    };
    visit(Set::Unlisted, Presence::Changed);
    for id in old.models.keys() {
        let presence = if new.models.contains_key(id) {
            Presence::Changed
        } else {
            Presence::Removed
        };
        visit(Set::Model(id), presence);
    }
    for id in new.models.keys().filter(|id| !old.models.contains_key(*id)) {
        visit(Set::Model(id), Presence::Added);
    }
    let unchanged = compared - sets.len();
    TableDiff {
        request_algorithms,
        sets,
        unchanged,
    }
}

/// A top-level `request_algorithms` entry as a resolution.
fn top_level(definition: &Arc<Definition>) -> Resolution<'_> {
    Resolution {
        definition,
        set: SetKind::Default,
        origin: Origin::SetRequestAlgorithms,
    }
}

/// One algorithm's two resolutions, or `None` when they are the same
/// definition from the same place.
fn compare(
    algorithm: Algorithm,
    before: Option<Resolution<'_>>,
    after: Option<Resolution<'_>>,
) -> Option<AlgorithmDiff> {
    let same = match (&before, &after) {
        (None, None) => true,
        (Some(b), Some(a)) => {
            Place::of(b) == Place::of(a)
                && (Arc::ptr_eq(b.definition, a.definition) || b.definition == a.definition)
        }
        _ => false,
    };
    if same {
        return None;
    }
    let before = before.map(Side::new);
    let after = after.map(Side::new);
    let changes = match (&before, &after) {
        (Some(b), Some(a)) => field_changes(b, a),
        _ => Vec::new(),
    };
    let rejected = rejected::rejected(algorithm, before.as_ref(), after.as_ref());
    Some(AlgorithmDiff {
        algorithm,
        before,
        after,
        changes,
        rejected,
    })
}

/// The fields of one algorithm (the same set on both sides) whose value or
/// provenance differs.
fn field_changes(before: &Side, after: &Side) -> Vec<FieldChange> {
    // One algorithm's IR: the same fields in the same order on both sides.
    before
        .fields
        .iter()
        .zip(&after.fields)
        .filter(|((a, _), (b, _))| a == b)
        .filter_map(|((field, old), (_, new))| {
            let (from_old, from_new) = (before.source(field), after.source(field));
            (old != new || from_old != from_new).then(|| FieldChange {
                field: field.clone(),
                before: (old.clone(), from_old),
                after: (new.clone(), from_new),
            })
        })
        .collect()
}
