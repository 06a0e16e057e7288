//! The field table: every configurable field of every algorithm, declared
//! once. [`FieldSet`], [`Field`] and its accessors, [`get`], [`set`] and
//! [`is_set`] are generated from the rows below; the checker's schema,
//! `routex schema`, docs/configuration.md's field table (section 1, between
//! its `fields:begin`/`fields:end` markers) and the editor server's hover
//! and completion read the rows through [`Field::spec`].
//!
//! A row says, for one field: its kind (from its Rust type), its default,
//! where a request expression, an lb-config.json detailed object and a
//! route file accept it (docs/stargate.md 4.3 and 5.4 differ on purpose),
//! the stargate targets that accept it, and its one-line doc.

use super::{Algorithm, Comparator, RendezvousWeight, Target};
use serde::Serialize;

use Algorithm::{PowerOfN, Pulsar, PulsarWaitAndWiden, WaitAndWiden};

/// The value kind a field takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false` (in an expression, a token or string whose text
    /// is exactly one of them).
    Boolean,
    /// Free text: a JSON string, or an expression token or quoted string
    /// (a number such as `seed=1` is invalid).
    Text,
    /// An integer from 0 to 2^64-1 (an expression also accepts a quoted
    /// plain number without fraction or sign, `"100"`).
    Unsigned,
    /// A finite number, integer or decimal.
    Decimal,
    /// One of the [`Comparator`] names.
    Comparator,
    /// One of the [`RendezvousWeight`] names.
    Weight,
}

impl Kind {
    /// How a kind is named in messages ("expected ...").
    pub const fn describe(self) -> &'static str {
        match self {
            Kind::Boolean => "true or false",
            Kind::Text => "a token or a quoted string",
            Kind::Unsigned => "an integer from 0 to 2^64-1",
            Kind::Decimal => "a finite number",
            Kind::Comparator => {
                "one of ttft, queue-time, input-work-seconds, utilization, num-requests-queued"
            }
            Kind::Weight => "one of max-input-tps, last-mean-input-tps",
        }
    }

    /// The kind's name in docs/configuration.md's table.
    pub const fn doc_name(self) -> &'static str {
        match self {
            Kind::Boolean => "boolean",
            Kind::Text => "text",
            Kind::Unsigned => "unsigned",
            Kind::Decimal => "decimal",
            Kind::Comparator => "comparator",
            Kind::Weight => "weight",
        }
    }
}

/// A typed field value, before range checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Typed {
    /// A [`Kind::Boolean`] value.
    Bool(bool),
    /// A [`Kind::Text`] value.
    Text(String),
    /// A [`Kind::Unsigned`] value.
    Unsigned(u64),
    /// A [`Kind::Decimal`] value.
    Decimal(f64),
    /// A [`Kind::Comparator`] value.
    Comparator(Comparator),
    /// A [`Kind::Weight`] value.
    Weight(RendezvousWeight),
}

impl Typed {
    /// The kind of this value.
    pub const fn kind(&self) -> Kind {
        match self {
            Typed::Bool(_) => Kind::Boolean,
            Typed::Text(_) => Kind::Text,
            Typed::Unsigned(_) => Kind::Unsigned,
            Typed::Decimal(_) => Kind::Decimal,
            Typed::Comparator(_) => Kind::Comparator,
            Typed::Weight(_) => Kind::Weight,
        }
    }
}

/// A Rust type a field holds, and its [`Kind`].
trait FieldValue: Sized {
    const KIND: Kind;
    fn typed(&self) -> Typed;
    fn from_typed(value: Typed) -> Result<Self, Typed>;
}

macro_rules! field_value {
    ($ty:ty, $kind:ident, $variant:ident, $copy:expr) => {
        impl FieldValue for $ty {
            const KIND: Kind = Kind::$kind;
            fn typed(&self) -> Typed {
                Typed::$variant($copy(self))
            }
            fn from_typed(value: Typed) -> Result<Self, Typed> {
                match value {
                    Typed::$variant(v) => Ok(v),
                    other => Err(other),
                }
            }
        }
    };
}

field_value!(bool, Boolean, Bool, |v: &bool| *v);
field_value!(String, Text, Text, |v: &String| v.clone());
field_value!(u64, Unsigned, Unsigned, |v: &u64| *v);
field_value!(f64, Decimal, Decimal, |v: &f64| *v);
field_value!(Comparator, Comparator, Comparator, |v: &Comparator| *v);
field_value!(RendezvousWeight, Weight, Weight, |v: &RendezvousWeight| *v);

/// An lb-config.json range the builder enforces (and the JSON Schema
/// states), inclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JsonRange {
    /// No range beyond the kind.
    Any,
    /// An unsigned field's inclusive bounds `(min, max)`, such as
    /// `sample_count`'s 1..=64.
    Unsigned(u64, u64),
    /// A decimal field's inclusive bounds `(min, max)`, such as
    /// `cache_affinity_input_tokens_scale`'s 0.0..=1.0.
    Decimal(f64, f64),
}

/// One row of the field table.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
    /// The field this row describes; `FIELDS[f as usize].field == f`.
    pub field: Field,
    /// The lb-config.json key and expression parameter name.
    pub name: &'static str,
    /// The kind of value the field takes (from the Rust type it holds in a
    /// [`FieldSet`]).
    pub kind: Kind,
    /// The default as `explain`, hover and completion write it ("unset"
    /// when the field has no value by default).
    pub default: &'static str,
    /// The default as docs/configuration.md's table writes it.
    pub default_doc: &'static str,
    /// The algorithms a request expression may set it for (5.4); empty:
    /// the parameter does not exist in expressions (`unknown_parameter`).
    pub expression: &'static [Algorithm],
    /// The algorithms whose detailed object accepts the key at parse time
    /// (4.3). Acceptance is not success: see `builder_refuses`.
    pub json: &'static [Algorithm],
    /// The algorithms a route-file expression may set it for: the
    /// expression table plus the fields lb-config.json carries that
    /// stargate's expressions cannot say.
    pub route_file: &'static [Algorithm],
    /// Algorithms whose JSON parses the key but whose builder refuses it,
    /// even at its default.
    pub builder_refuses: &'static [Algorithm],
    /// Whether lb-config.json accepts `null` (serde's "unset").
    pub nullable: bool,
    /// The accepted range in a request expression, for help lines.
    pub expression_range: Option<&'static str>,
    /// The range the builder enforces in lb-config.json.
    pub json_range: JsonRange,
    /// The stargate targets that accept the field.
    pub targets: &'static [Target],
    /// docs/configuration.md: what expressions accept beyond the list.
    pub expression_note: &'static str,
    /// docs/configuration.md: what lb-config.json accepts beyond the list.
    pub json_note: &'static str,
    /// One line: what the field does.
    pub doc: &'static str,
}

const ALL_ALGS: &[Algorithm] = &Algorithm::ALL;
const WW_PWW: &[Algorithm] = &[WaitAndWiden, PulsarWaitAndWiden];
const PULSAR_FAMILY: &[Algorithm] = &[Pulsar, PulsarWaitAndWiden];
const SEEDED: &[Algorithm] = &[WaitAndWiden, Pulsar, PulsarWaitAndWiden];
const NONE: &[Algorithm] = &[];
const EVERY_TARGET: &[Target] = &Target::ALL;
const SESSIONS_ON: &[Target] = &[Target::Sessions];

macro_rules! field_table {
    ($(
        $variant:ident $name:ident: $ty:ty {
            default: $default:literal / $default_doc:literal,
            expression: $expression:expr,
            json: $json:expr,
            route_file: $route_file:expr,
            builder_refuses: $refuses:expr,
            nullable: $nullable:literal,
            expression_range: $range:expr,
            json_range: $json_range:expr,
            targets: $targets:expr,
            notes: $expression_note:literal / $json_note:literal,
            doc: $doc:literal,
        }
    )*) => {
        /// The configured fields of one algorithm, before defaults. `None`
        /// = not configured. Field names are the lb-config.json keys.
        #[derive(Clone, Debug, Default, PartialEq, Serialize)]
        pub struct FieldSet {
            $(
                #[doc = $doc]
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $name: Option<$ty>,
            )*
        }

        /// Every field of [`FieldSet`], in its declaration order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Field {
            $(
                #[doc = $doc]
                $variant,
            )*
        }

        /// The rows, in [`Field`] order.
        pub const FIELDS: &[FieldSpec] = &[
            $(
                FieldSpec {
                    field: Field::$variant,
                    name: stringify!($name),
                    kind: <$ty as FieldValue>::KIND,
                    default: $default,
                    default_doc: $default_doc,
                    expression: $expression,
                    json: $json,
                    route_file: $route_file,
                    builder_refuses: $refuses,
                    nullable: $nullable,
                    expression_range: $range,
                    json_range: $json_range,
                    targets: $targets,
                    expression_note: $expression_note,
                    json_note: $json_note,
                    doc: $doc,
                },
            )*
        ];

        impl Field {
            /// Every field, in declaration order.
            pub const ALL: [Field; FIELDS.len()] = [$(Field::$variant,)*];
        }

        /// Reads one field of a field set back as a typed value.
        pub fn get(fields: &FieldSet, field: Field) -> Option<Typed> {
            match field {
                $(Field::$variant => fields.$name.as_ref().map(FieldValue::typed),)*
            }
        }

        /// Stores a typed value in its field; a value of another kind is
        /// refused and handed back, never dropped.
        pub fn set(fields: &mut FieldSet, field: Field, value: Typed) -> Result<(), KindMismatch> {
            match field {
                $(Field::$variant => {
                    fields.$name = Some(<$ty>::from_typed(value).map_err(|got| KindMismatch {
                        field,
                        got,
                    })?);
                })*
            }
            Ok(())
        }

        /// Whether `field` is configured; unlike [`get`] it never copies
        /// the value.
        pub fn is_set(fields: &FieldSet, field: Field) -> bool {
            match field {
                $(Field::$variant => fields.$name.is_some(),)*
            }
        }
    };
}

/// [`set`] was given a value of another kind than the field's.
#[derive(Clone, Debug, PartialEq)]
pub struct KindMismatch {
    /// The field [`set`] was asked to change (left unchanged).
    pub field: Field,
    /// The refused value.
    pub got: Typed,
}

impl std::fmt::Display for KindMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} takes {}, not a {} value",
            self.field.name(),
            self.field.kind().describe(),
            self.got.kind().doc_name()
        )
    }
}

impl std::error::Error for KindMismatch {}

field_table! {
    RequireCacheAffinityKey require_cache_affinity_key: bool {
        default: "false" / "false",
        expression: ALL_ALGS, json: ALL_ALGS, route_file: ALL_ALGS, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Reject (400) a request without a non-blank `x-cache-affinity-key`.",
    }
    RequireInputTokens require_input_tokens: bool {
        default: "false" / "false (true when `consider_kv_free_tokens`)",
        expression: ALL_ALGS, json: ALL_ALGS, route_file: ALL_ALGS, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Declare that the algorithm needs `x-input-tokens` (the front end requires it anyway).",
    }
    MaxInputWorkSeconds max_input_work_seconds: f64 {
        default: "unset" / "unset",
        expression: ALL_ALGS, json: ALL_ALGS, route_file: ALL_ALGS, builder_refuses: NONE,
        nullable: true,
        expression_range: Some("accepted: a finite number greater than 0"),
        json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "finite, > 0 (≤ 0 is `inert_value`)"
            / "unchecked (≤ 0 rejects every request with work)",
        doc: "Input-work admission: reject (503) when queued plus request tokens over the fleet's rate exceed this many seconds.",
    }
    SampleCount sample_count: u64 {
        default: "2" / "2",
        expression: &[PowerOfN], json: &[PowerOfN], route_file: &[PowerOfN], builder_refuses: NONE,
        nullable: false, expression_range: Some("accepted: 1..=64"),
        json_range: JsonRange::Unsigned(1, 64),
        targets: EVERY_TARGET,
        notes: "1..=64" / "1..=64",
        doc: "How many candidates power-of-n samples before comparing them.",
    }
    Comparator comparator: Comparator {
        default: "ttft" / "`ttft`",
        expression: &[PowerOfN, WaitAndWiden],
        json: &[PowerOfN, WaitAndWiden, PulsarWaitAndWiden],
        route_file: &[PowerOfN, WaitAndWiden],
        builder_refuses: &[PulsarWaitAndWiden],
        nullable: false,
        expression_range: Some(
            "accepted: ttft, queue-time, input-work-seconds, utilization, num-requests-queued",
        ),
        json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "`null` refused",
        doc: "How sampled candidates are compared (lower is better).",
    }
    Seed seed: String {
        default: "\"\"" / "`\"\"`",
        expression: SEEDED, json: SEEDED, route_file: SEEDED, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Text mixed into every ring and ranking hash: another seed, another placement.",
    }
    ConsiderKvFreeTokens consider_kv_free_tokens: bool {
        default: "false" / "false",
        expression: PULSAR_FAMILY, json: PULSAR_FAMILY, route_file: PULSAR_FAMILY,
        builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Skip ranked clusters whose free KV-cache tokens cannot hold the request.",
    }
    RendezvousWeight rendezvous_weight: RendezvousWeight {
        default: "max-input-tps" / "`max-input-tps`",
        expression: NONE, json: PULSAR_FAMILY, route_file: PULSAR_FAMILY, builder_refuses: NONE,
        nullable: false,
        expression_range: Some("accepted: max-input-tps, last-mean-input-tps"),
        json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "(route files: pulsar, PWW)" / "",
        doc: "Which statistic weights the Pulsar ranking.",
    }
    N n: u64 {
        default: "2" / "2",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false,
        expression_range: Some("accepted: an integer of at least 1 (0 would disable the field)"),
        json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "≥ 1" / "0 means 1 (warning)",
        doc: "How many unlocked candidates are sampled before comparing them.",
    }
    MaxQueued max_queued: u64 {
        default: "0" / "0",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Requests a cluster may queue beyond its engine concurrency and still be selected.",
    }
    MaxQueueTimeFloorMs max_queue_time_floor_ms: u64 {
        default: "unset" / "unset",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: true, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "needs the ceiling" / "alone: warning",
        doc: "Queue-time limit at arrival; the queue SLO is on only with the ceiling too.",
    }
    MaxQueueTimeCeilMs max_queue_time_ceil_ms: u64 {
        default: "unset" / "unset",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: true, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "needs the floor" / "alone: warning",
        doc: "Queue-time limit at the request SLO (or always, without one).",
    }
    TtftBucketSizeMs ttft_bucket_size_ms: u64 {
        default: "20" / "20",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false,
        expression_range: Some("accepted: an integer of at least 1 (0 would disable the field)"),
        json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "≥ 1" / "0 allowed",
        doc: "Width of a TTFT bucket: candidates this close to the fastest are unlocked together.",
    }
    NextBucketUnlockFactor next_bucket_unlock_factor: f64 {
        default: "0.25" / "0.25",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "any finite" / "unchecked",
        doc: "A slower bucket unlocks after its TTFT gap times this factor.",
    }
    IgnoreQueueTime ignore_queue_time: bool {
        default: "false" / "false",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Leave the queue estimate out of bucketing (never out of the comparator).",
    }
    IgnoreInputProcessingTime ignore_input_processing_time: bool {
        default: "false" / "false",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "Leave the prefill estimate out of bucketing (never out of the comparator).",
    }
    CacheAffinityVirtualNodes cache_affinity_virtual_nodes: u64 {
        default: "150" / "150",
        expression: &[WaitAndWiden], json: WW_PWW, route_file: &[WaitAndWiden],
        builder_refuses: NONE,
        nullable: false, expression_range: Some("accepted: 1..=1024"), json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "1..=1024" / "ignored by PWW; 0 means 1 (warning); no upper bound",
        doc: "Points per cluster on wait-and-widen's affinity ring.",
    }
    CacheAffinityBackendSelectionCount cache_affinity_backend_selection_count: u64 {
        default: "unset" / "unset (WW: affinity off), 1 (PWW)",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: true,
        expression_range: Some("accepted: an integer of at least 1 (0 would disable the field)"),
        json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "≥ 1" / "0 = off (WW) / 1 (PWW) (warning)",
        doc: "k: the size of the affinity group a keyed request prefers.",
    }
    CacheAffinityInputTokensScale cache_affinity_input_tokens_scale: f64 {
        default: "1.0" / "1.0",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: Some("accepted: 0.0..=1.0"),
        json_range: JsonRange::Decimal(0.0, 1.0),
        targets: EVERY_TARGET,
        notes: "0.0..=1.0" / "0.0..=1.0",
        doc: "The prefill discount inside the affinity group (cached prefix).",
    }
    CacheAffinityWaitMs cache_affinity_wait_ms: u64 {
        default: "0" / "0",
        expression: WW_PWW, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "X: how long a keyed request waits for its affinity group before widening.",
    }
    BandWidenIntervalMs band_widen_interval_ms: u64 {
        default: "cache_affinity_wait_ms" / "= `cache_affinity_wait_ms`",
        expression: &[PulsarWaitAndWiden], json: WW_PWW, route_file: &[PulsarWaitAndWiden],
        builder_refuses: &[WaitAndWiden],
        nullable: true, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "0 allowed" / "",
        doc: "S: after X, one more band of ranks opens every S ms (0: all at once).",
    }
    FallbackMaxQueued fallback_max_queued: u64 {
        default: "0" / "0",
        expression: &[PulsarWaitAndWiden], json: WW_PWW, route_file: &[PulsarWaitAndWiden],
        builder_refuses: &[WaitAndWiden],
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: EVERY_TARGET,
        notes: "" / "",
        doc: "f: the queue limit of clusters outside the affinity group (0: free slots only).",
    }
    LastClusterAffinity last_cluster_affinity: bool {
        default: "false" / "false",
        expression: NONE, json: WW_PWW, route_file: WW_PWW, builder_refuses: NONE,
        nullable: false, expression_range: None, json_range: JsonRange::Any,
        targets: SESSIONS_ON,
        notes: "(route files: WW, PWW)" / "",
        doc: "Sessions: put the cluster named by `x-stargate-last-cluster-id` first, and give new sessions no affinity wait.",
    }
}

impl Field {
    /// The field's row.
    pub const fn spec(self) -> &'static FieldSpec {
        &FIELDS[self as usize]
    }

    /// The lb-config.json key and expression parameter name.
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// Exact lookup by name.
    pub fn from_name(name: &str) -> Option<Field> {
        FIELDS.iter().find(|s| s.name == name).map(|s| s.field)
    }

    /// The kind of value the field takes (its row's [`FieldSpec::kind`]).
    pub const fn kind(self) -> Kind {
        self.spec().kind
    }

    /// The algorithms a request expression may set the field for (5.4).
    /// Empty: the parameter does not exist in expressions.
    pub const fn expression_algorithms(self) -> &'static [Algorithm] {
        self.spec().expression
    }

    /// The algorithms whose lb-config.json detailed object accepts the key
    /// at parse time (4.3). Acceptance is not success: the builder still
    /// refuses `comparator` on PWW and the two band fields on WW.
    pub const fn json_algorithms(self) -> &'static [Algorithm] {
        self.spec().json
    }

    /// The algorithms a route-file expression may set the field for.
    pub const fn route_file_algorithms(self) -> &'static [Algorithm] {
        self.spec().route_file
    }

    /// The default as written in docs and `explain`.
    pub const fn default_text(self) -> &'static str {
        self.spec().default
    }

    /// The accepted range in a request expression, for help lines.
    pub const fn expression_range(self) -> Option<&'static str> {
        self.spec().expression_range
    }

    /// The stargate targets that accept the field.
    pub const fn targets(self) -> &'static [Target] {
        self.spec().targets
    }

    /// Whether `target` accepts the field.
    pub fn accepted_by(self, target: Target) -> bool {
        self.targets().contains(&target)
    }

    /// Whether an lb-config.json detailed object of `algorithm` takes the
    /// field without an error: parsed, and not refused by the builder.
    pub fn json_takes(self, algorithm: Algorithm) -> bool {
        let spec = self.spec();
        spec.json.contains(&algorithm) && !spec.builder_refuses.contains(&algorithm)
    }
}

/// The fields a field set configures, in declaration order.
pub fn configured(fields: &FieldSet) -> Vec<Field> {
    configured_iter(fields).collect()
}

/// The configured fields in table order, without collecting them (the
/// builder runs on every expression-cache miss).
pub fn configured_iter(fields: &FieldSet) -> impl Iterator<Item = Field> + '_ {
    Field::ALL.into_iter().filter(|f| is_set(fields, *f))
}

/// Names a list of algorithms for help lines: "a, b".
pub fn algorithm_list(algorithms: &[Algorithm]) -> String {
    algorithms
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// docs/configuration.md's field table (section 1), generated from the
/// rows; a test compares it with the committed page.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| Field | Kind | Default | Expr: algorithms, range | JSON: algorithms, range | Targets | What it does |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for spec in FIELDS {
        let expression = if spec.expression.is_empty() {
            format!("unknown parameter {}", spec.expression_note)
                .trim_end()
                .to_string()
        } else {
            cell(
                &short_list(spec.expression, spec.expression.len() == 1),
                spec.expression_note,
            )
        };
        let mut json = short_list(spec.json, false);
        for refused in spec.builder_refuses {
            json.push_str(&format!(
                "; on {} the builder refuses it, even at its default",
                short_name(*refused)
            ));
        }
        let targets = if spec.targets == EVERY_TARGET {
            "all".to_string()
        } else {
            spec.targets
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            spec.name,
            spec.kind.doc_name(),
            spec.default_doc,
            expression,
            cell(&json, spec.json_note),
            targets,
            spec.doc,
        ));
    }
    out
}

fn cell(list: &str, note: &str) -> String {
    if note.is_empty() {
        list.to_string()
    } else {
        format!("{list}; {note}")
    }
}

/// WW and PWW abbreviated as the docs' table does; "all" for every
/// algorithm; "only" after a single wait-and-widen variant.
fn short_list(algorithms: &[Algorithm], only: bool) -> String {
    if algorithms == Algorithm::ALL {
        return "all".into();
    }
    let names: Vec<&str> = algorithms.iter().map(|a| short_name(*a)).collect();
    let text = names.join(", ");
    if only && matches!(algorithms, [WaitAndWiden] | [PulsarWaitAndWiden]) {
        format!("{text} only")
    } else {
        text
    }
}

fn short_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        WaitAndWiden => "WW",
        PulsarWaitAndWiden => "PWW",
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_enum_and_names_round_trip() {
        for (i, spec) in FIELDS.iter().enumerate() {
            assert_eq!(spec.field as usize, i);
            assert_eq!(Field::from_name(spec.name), Some(spec.field));
        }
    }

    #[test]
    fn set_refuses_a_value_of_another_kind_and_keeps_the_old_one() {
        let mut fields = FieldSet::default();
        assert_eq!(set(&mut fields, Field::N, Typed::Unsigned(7)), Ok(()));
        let refused = set(&mut fields, Field::N, Typed::Bool(true)).unwrap_err();
        assert_eq!(refused.got, Typed::Bool(true));
        assert_eq!(
            refused.to_string(),
            "n takes an integer from 0 to 2^64-1, not a boolean value"
        );
        assert_eq!(get(&fields, Field::N), Some(Typed::Unsigned(7)));
        assert_eq!(configured(&fields), vec![Field::N]);
    }

    #[test]
    fn every_kind_round_trips_through_set_and_get() {
        let values = [
            Typed::Bool(true),
            Typed::Text("x".into()),
            Typed::Unsigned(3),
            Typed::Decimal(0.5),
            Typed::Comparator(Comparator::QueueTime),
            Typed::Weight(RendezvousWeight::LastMeanInputTps),
        ];
        for field in Field::ALL {
            for value in &values {
                let mut fields = FieldSet::default();
                let ok = set(&mut fields, field, value.clone()).is_ok();
                assert_eq!(ok, value.kind() == field.kind(), "{field:?} {value:?}");
                assert_eq!(is_set(&fields, field), ok);
                if ok {
                    assert_eq!(get(&fields, field).as_ref(), Some(value));
                }
            }
        }
    }

    #[test]
    fn json_accepts_every_expression_and_route_file_field() {
        for f in Field::ALL {
            for a in f
                .expression_algorithms()
                .iter()
                .chain(f.route_file_algorithms())
            {
                assert!(f.json_algorithms().contains(a), "{f:?} on {a}");
            }
            for a in f.expression_algorithms() {
                assert!(f.route_file_algorithms().contains(a), "{f:?} on {a}");
            }
        }
        assert!(!Field::Seed
            .json_algorithms()
            .contains(&Algorithm::RoundRobin));
    }

    #[test]
    fn only_sessions_accepts_last_cluster_affinity() {
        assert!(Field::LastClusterAffinity.accepted_by(Target::Sessions));
        assert!(!Field::LastClusterAffinity.accepted_by(Target::Widening));
        let others = Field::ALL
            .iter()
            .filter(|f| **f != Field::LastClusterAffinity);
        for f in others {
            assert_eq!(f.targets(), Target::ALL, "{f:?}");
        }
    }
}
