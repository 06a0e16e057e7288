//! The table of diagnostic codes: one row per code with its stable name,
//! default level, origin, title, description and help. `Code`, `Code::ALL`,
//! [`CODES`] and every per-code fact come from this one table; SARIF's rule
//! metadata and the generated parts of docs/diagnostics.md (its index, each
//! section's lead paragraph and **Fix:** line, checked and rewritten by
//! the test `diag::generated_docs_match_the_table` in `tests/it/diag.rs`) are read from it. Nothing parses
//! Markdown at run time.
//!
//! Rows are in the order of the enum, which is also SARIF's rule order: add
//! a code at the end of its block, never rename one (`name` is a contract).

use super::Severity;

/// Who defines a code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// stargate returns it (same condition, same precedence, same code in
    /// `x-stargate-error-code`).
    Stargate,
    /// routex's own, for route files, lb-config.json files, project
    /// configuration and surprising settings.
    Routex,
}

impl Origin {
    /// `stargate` or `routex`, as docs/diagnostics.md's index says.
    pub const fn name(self) -> &'static str {
        match self {
            Origin::Stargate => "stargate",
            Origin::Routex => "routex",
        }
    }
}

/// What a finding of a code does to a run (clippy's and ruff's words):
/// `allow` hides it, `warn` reports a warning, `deny` reports an error that
/// fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported as a warning (exit 1 only under `--deny-warnings`).
    Warn,
    /// Reported as an error (exit 1).
    Deny,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 3] = [Level::Allow, Level::Warn, Level::Deny];

    /// `allow`, `warn` or `deny`: the word of the configuration file and of
    /// the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Allow => "allow",
            Level::Warn => "warn",
            Level::Deny => "deny",
        }
    }

    /// Exact lookup of [`Level::name`].
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The severity a reported finding has at this level; `None` for
    /// [`Level::Allow`].
    pub const fn severity(self) -> Option<Severity> {
        match self {
            Level::Allow => None,
            Level::Warn => Some(Severity::Warning),
            Level::Deny => Some(Severity::Error),
        }
    }
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// The code this row describes.
    pub code: Code,
    /// The stable snake_case name printed in every output format.
    pub name: &'static str,
    /// The level a finding has unless the project configuration or the
    /// command line changes it.
    pub level: Level,
    /// stargate's code or routex's.
    pub origin: Origin,
    /// Why the level cannot be changed, for the codes whose finding means
    /// stargate (or routex) cannot use the input; `None` when a project may
    /// choose the level.
    pub fixed: Option<&'static str>,
    /// One line: SARIF's short description, the index's summary.
    pub title: &'static str,
    /// What the code means, Markdown (one paragraph): SARIF's full
    /// description, the lead paragraph of the code's docs section.
    pub description: &'static str,
    /// How to fix it, Markdown (one paragraph): SARIF's help, the docs'
    /// **Fix:** line.
    pub help: &'static str,
}

/// Why an expression code's level is fixed.
const REJECTED: &str = "stargate rejects the request with it";
/// Why lb-config.json's start-up refusals are fixed.
const REFUSED_AT_START: &str = "stargate refuses to start with it";
/// Why a route file's structural errors are fixed.
const NO_MEANING: &str = "the route file has no single meaning with it";
/// Why the errors of an output form are fixed.
const NO_OUTPUT: &str = "routex cannot write the output it was asked for";
/// Why the project configuration's own errors are fixed.
const NO_SETTINGS: &str = "routex cannot tell what the project configured";
/// Why the errors of a simulator's inputs are fixed.
const NO_SIMULATION: &str = "the simulator cannot run the scenario with it";

/// Declares [`Code`], `Code::ALL` and [`CODES`] from one list of rows.
macro_rules! code_table {
    ($(
        $variant:ident {
            name: $name:literal,
            level: $level:ident,
            origin: $origin:ident,
            fixed: $fixed:expr,
            title: $title:literal,
            description: $description:literal,
            help: $help:literal $(,)?
        }
    )*) => {
        /// Every diagnostic code: stargate's codes first (same conditions,
        /// same precedence), then routex's own. Codes are part of the
        /// contract: add, never rename. Each variant's facts are its row
        /// of [`CODES`] ([`Code::info`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $(
                #[doc = $title]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];
        }

        /// The table of codes, one row per code in `Code::ALL` order.
        pub const CODES: &[CodeInfo] = &[$(
            CodeInfo {
                code: Code::$variant,
                name: $name,
                level: Level::$level,
                origin: Origin::$origin,
                fixed: $fixed,
                title: $title,
                description: $description,
                help: $help,
            },
        )*];
    };
}

impl Code {
    /// The code's row of [`CODES`].
    pub const fn info(self) -> &'static CodeInfo {
        &CODES[self as usize]
    }

    /// The stable snake_case name printed in every output format.
    pub const fn as_str(self) -> &'static str {
        self.info().name
    }

    /// The code named `name` ([`Code::as_str`]), exactly.
    pub fn from_name(name: &str) -> Option<Code> {
        CODES
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.code)
    }

    /// Whether the code is one stargate itself returns.
    pub const fn is_stargate(self) -> bool {
        matches!(self.info().origin, Origin::Stargate)
    }

    /// The level a finding has unless configured otherwise.
    pub const fn default_level(self) -> Level {
        self.info().level
    }

    /// The severity a diagnostic of this code has at its default level (a
    /// code allowed by default is a warning when a project raises it).
    pub const fn default_severity(self) -> Severity {
        match self.default_level() {
            Level::Deny => Severity::Error,
            Level::Warn | Level::Allow => Severity::Warning,
        }
    }

    /// One line for SARIF rule descriptions and `docs/diagnostics.md`.
    pub const fn summary(self) -> &'static str {
        self.info().title
    }
}

code_table! {
    MalformedExpression {
        name: "malformed_expression",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the expression does not follow the expression syntax",
        description: "The header-form text breaks one of stargate's ordered syntax rules (stargate.md 5.1): too long, a comma, a `;` inside quotes, too many parameters, a segment without `=`, a bad parameter name, a repeated name, an invalid RFC 8941 item, a method that is not a token, a `?1`/`?0` boolean or a byte sequence. The message starts with the rule tag (`P1`...`P11`) stargate uses; a call-form expression that does not parse gets the same code.",
        help: "Follow the rule the message names; for a boolean, write `true` or `false`.",
    }
    UnknownMethod {
        name: "unknown_method",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the method is not an algorithm name or alias",
        description: "The method is not one of the six algorithm names or a stargate alias (after trimming, lower-casing and reading `_` as `-` in header form). A blank header value is also an unknown method.",
        help: "Use an algorithm name listed in the help line; a near miss gets a did-you-mean.",
    }
    Unavailable {
        name: "unavailable",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the algorithm is not configured for this model",
        description: "The algorithm exists but the configuration does not offer it to this model (resolution of stargate.md 4.4): it is neither the model's configured algorithm, nor in its `request_algorithms`, nor, for a model with an entry, in the top-level `request_algorithms`. Only reported with `--config`; the permissive default offers every algorithm.",
        help: "Add an `allow` line (route file) or a `request_algorithms` entry (lb-config.json) for the algorithm, or ask for one the model has.",
    }
    UnknownParameter {
        name: "unknown_parameter",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the parameter name does not exist",
        description: "The parameter name is not a field any algorithm accepts in an expression (`rendezvous_weight` included: it is configuration-only).",
        help: "Check the spelling against the fields of the algorithm (docs/configuration.md); the help line suggests the closest name when there is one.",
    }
    NotApplicable {
        name: "not_applicable",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the parameter exists but not for this algorithm",
        description: "The parameter exists but the algorithm does not use it, e.g. `band_widen_interval_ms` outside pulsar-wait-and-widen or `seed` on round-robin. The same mistake in an lb-config.json entry whose field stargate parses but its start-up builder refuses (`comparator` on pulsar-wait-and-widen, `band_widen_interval_ms` and `fallback_max_queued` on wait-and-widen) has this code and help too, with stargate's start-up message.",
        help: "Drop the parameter, or switch to an algorithm the help line lists.",
    }
    InvalidValue {
        name: "invalid_value",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the value has the wrong kind or is out of range",
        description: "The value has the wrong kind (a number for `seed`, `1` for a boolean), is out of range (`sample_count` outside 1..=64, a scale outside 0.0..=1.0, more than 1024 virtual nodes), is not finite, names an unknown comparator, or the start-up builder refuses the merged configuration.",
        help: "Use a value in the accepted range the help line gives.",
    }
    InertValue {
        name: "inert_value",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "the value would disable the field",
        description: "The value would disable the field: `n`, `ttft_bucket_size_ms`, `cache_affinity_virtual_nodes` or `cache_affinity_backend_selection_count` set to 0, or `max_input_work_seconds` of 0 or less. stargate refuses these in expressions (a configuration file may still say `n: 0`, see `normalised_value`).",
        help: "Leave the parameter out to keep the configured value, or give a positive value.",
    }
    InertCombination {
        name: "inert_combination",
        level: Deny,
        origin: Stargate,
        fixed: Some(REJECTED),
        title: "only one queue-time bound is configured",
        description: "The expression sets one queue-time bound (`max_queue_time_floor_ms` or `max_queue_time_ceil_ms`) and the merged configuration lacks the other, so the queue SLO could never act.",
        help: "Set both bounds, or only one when the configuration already holds the other.",
    }
    SyntaxError {
        name: "syntax_error",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_MEANING),
        title: "the route file does not follow the route-file syntax",
        description: "The route file does not follow the route-file grammar (docs/language.md): the message says what was expected and what was found.",
        help: "Complete or correct the text at the marked position.",
    }
    DuplicateDefault {
        name: "duplicate_default",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_MEANING),
        title: "a route file sets `default` twice",
        description: "A route file sets `default` more than once.",
        help: "Keep one `default` line.",
    }
    DuplicateModel {
        name: "duplicate_model",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_MEANING),
        title: "a model is listed twice",
        description: "A route file lists the same model id twice.",
        help: "Merge the two entries into one `model` block.",
    }
    DuplicateAllow {
        name: "duplicate_allow",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_MEANING),
        title: "two `allow` entries of one algorithm in one scope",
        description: "One scope (the top level or one model block) has two `allow` entries of the same algorithm; lb-config.json could keep only one of them.",
        help: "Keep one `allow` per algorithm in each scope.",
    }
    DefaultWithArguments {
        name: "default_with_arguments",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_OUTPUT),
        title: "a `default` with arguments has no lb-config.json spelling",
        description: "`routex build` cannot write a `default` with arguments: lb-config.json's `default` is an algorithm name only, with default settings.",
        help: "Write `default = NAME` and give models that need settings their own `model` entry.",
    }
    InvalidJson {
        name: "invalid_json",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "the file is not valid JSON",
        description: "The lb-config.json file is not valid JSON (including an empty file); the span points at the first offending character.",
        help: "Fix the JSON syntax at the marked position.",
    }
    UnknownField {
        name: "unknown_field",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "the lb-config.json field does not exist",
        description: "An lb-config.json object has a key stargate does not know (at the top level, or a field no algorithm has); stargate refuses to start.",
        help: "Remove or correct the key; the message lists the accepted keys.",
    }
    UnsupportedField {
        name: "unsupported_field",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "the field exists but not for this algorithm",
        description: "A detailed algorithm object has a field that exists but not for its algorithm, e.g. `seed` on round-robin; stargate's message is \"<algorithm> config does not support field(s): ...\".",
        help: "Remove the field or change the algorithm to one the help line lists.",
    }
    InvalidType {
        name: "invalid_type",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "the JSON value has the wrong type",
        description: "A JSON value has the wrong type for its field, e.g. `null` for `comparator`, a string for a number, or a map value that is neither a name nor an object.",
        help: "Write a value of the type the message expects.",
    }
    MissingField {
        name: "missing_field",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "a required field is missing",
        description: "A required field is absent: every detailed algorithm object needs `algorithm`.",
        help: "Add the field.",
    }
    RequestAlgorithmMismatch {
        name: "request_algorithm_mismatch",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "a request_algorithms key names another algorithm than its value",
        description: "A `request_algorithms` key names another algorithm than the value it maps to; stargate refuses to start with \"request_algorithms key X does not match configured algorithm Y\".",
        help: "Make the key name the value's algorithm.",
    }
    DuplicateRequestAlgorithm {
        name: "duplicate_request_algorithm",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "two request_algorithms keys name one algorithm; the last wins",
        description: "Two `request_algorithms` keys name the same algorithm (e.g. an alias and the canonical name); stargate keeps the last one silently.",
        help: "Keep one key per algorithm.",
    }
    IgnoredRequestAlgorithms {
        name: "ignored_request_algorithms",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "request_algorithms nested where stargate discards it",
        description: "A `request_algorithms` map nested inside a `request_algorithms` entry: stargate parses it and throws it away. Only a detailed object directly under `models` may carry its own `request_algorithms`.",
        help: "Move it into the model's entry under `models`, or delete it.",
    }
    DeprecatedAlias {
        name: "deprecated_alias",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "an alias instead of the canonical algorithm name",
        description: "An algorithm alias (`powerOf2`, `power-of-two`, `groq-multiregion`, `pulsar-multiregion`, ...) instead of the canonical name. It works, but the canonical name is what docs and tools print.",
        help: "Write the canonical name the help line gives.",
    }
    NoQueueSlo {
        name: "no_queue_slo",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "wait and overflow fields that act only when the primary is ineligible",
        description: "`widening` target only. A pulsar-wait-and-widen policy sets `cache_affinity_wait_ms`, `band_widen_interval_ms` or `fallback_max_queued` but no queue SLO (both queue-time bounds). In the `widening` state of stargate an eligible primary is then selected at once, so those fields only act when the primary is ineligible. The `sessions` state has no such shortcut (docs/stargate.md 0.1), so the warning does not apply there.",
        help: "Set both `max_queue_time_floor_ms` and `max_queue_time_ceil_ms`, or drop the wait fields.",
    }
    FloorAboveCeil {
        name: "floor_above_ceil",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "the queue-time floor is above the ceiling",
        description: "`max_queue_time_floor_ms` is greater than `max_queue_time_ceil_ms`: the queue-time limit then shrinks as the request ages instead of growing.",
        help: "Swap the two values unless a shrinking limit is what you want.",
    }
    IncompleteQueueSlo {
        name: "incomplete_queue_slo",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "only one queue-time bound is set, so the queue SLO is off",
        description: "A configuration sets only one queue-time bound: the queue SLO is on only when both are set, so the bound does nothing. (In an expression the same situation is the error `inert_combination`.)",
        help: "Set both bounds, or remove the one that is set.",
    }
    NormalisedValue {
        name: "normalised_value",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "stargate silently replaces this value",
        description: "A configuration value that stargate silently replaces: `n: 0` means 1, `cache_affinity_virtual_nodes: 0` means 1, and so on.",
        help: "Write the value it means.",
    }
    ShadowedAllow {
        name: "shadowed_allow",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "a model allows its own algorithm: its configuration always wins",
        description: "A model allows (route file) or lists in its `request_algorithms` (lb-config.json) the algorithm it already uses. stargate resolves a request that names the model's own algorithm to the model's configuration first (stargate.md 4.4, step 1), so the entry is never used.",
        help: "Remove the entry; to change what requests naming that algorithm get, change the model's own expression.",
    }
    IgnoredField {
        name: "ignored_field",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "stargate accepts the field but the algorithm ignores it",
        description: "lb-config.json sets a field that stargate accepts for the algorithm but never reads: `cache_affinity_virtual_nodes` on `pulsar-wait-and-widen`, which ranks clusters with Pulsar rather than a hash ring (stargate.md 3.8.1). In an expression the same field is `not_applicable`.",
        help: "Remove the field.",
    }
    NotRepresentableInHeader {
        name: "not_representable_in_header",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_OUTPUT),
        title: "the value cannot be written in header form",
        description: "`routex fmt --header` was asked for a header form the expression cannot have: a string with `;` or `,`, a character outside printable ASCII, more than 1024 bytes or 32 parameters. Only reported when the header form is asked for.",
        help: "Keep the call form for this expression, or change the value.",
    }
    NotRepresentableInRouteFile {
        name: "not_representable_in_route_file",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_OUTPUT),
        title: "an lb-config.json value that a strict route-file expression refuses",
        description: "`routex import` met an lb-config.json value that stargate accepts at start-up but that a route-file expression, which follows the strict expression rules, refuses (e.g. `ttft_bucket_size_ms: 0`, which an expression calls `inert_value`). The route file would not say the same thing, so import stops.",
        help: "Change the value in lb-config.json to one an expression accepts (the help line gives the range), then import again.",
    }
    UnreadableFile {
        name: "unreadable_file",
        level: Deny,
        origin: Routex,
        fixed: None,
        title: "a file could not be read: too large, not UTF-8 or an I/O error",
        description: "`routex lint` could not read a file it was given or found: it is larger than the 4 MiB input limit, is not UTF-8, or the system refused to read it. The other files are still linted; the finding fails the run like any error unless a project lowers its level (for example for a large unrelated `*.json` in a searched directory, better left out with `exclude` in `routex.toml`).",
        help: "Name only the files to lint, exclude the file in the project configuration (`exclude`), or fix its encoding or permissions.",
    }
    InvalidToml {
        name: "invalid_toml",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_SETTINGS),
        title: "the project configuration file is not valid TOML",
        description: "The project configuration file (`routex.toml` or `.routex.toml`, docs/cli.md) is not valid TOML; the span points at the first offending character. Nothing in it is used.",
        help: "Fix the TOML syntax at the marked position.",
    }
    UnknownSetting {
        name: "unknown_setting",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_SETTINGS),
        title: "the project configuration has a key routex does not know",
        description: "A key of the project configuration file is not one of its settings (docs/cli.md lists them), or a code named in `levels`, `overrides` or `suppressions` does not exist.",
        help: "Remove or correct the key; a near miss gets a did-you-mean.",
    }
    InvalidSetting {
        name: "invalid_setting",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_SETTINGS),
        title: "a project setting has the wrong type or value",
        description: "A setting of the project configuration file has the wrong TOML type, a value outside its choices (a level other than `allow`, `warn` or `deny`, an unknown format or stargate target), a glob that does not parse, or asks to lower a code whose level is fixed.",
        help: "Write a value the message accepts.",
    }
    InvalidSuppression {
        name: "invalid_suppression",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "a `# routex:` comment that is not a well-formed suppression",
        description: "A route-file comment starting with `# routex:` does not read `allow(CODE, ...)` with an optional `-- reason`, names a code that does not exist, or names a code whose level is fixed (an error stargate would still reject cannot be suppressed). The comment suppresses nothing it cannot parse.",
        help: "Write `# routex: allow(CODE) -- reason` with codes from docs/diagnostics.md.",
    }
    UnusedSuppression {
        name: "unused_suppression",
        level: Warn,
        origin: Routex,
        fixed: None,
        title: "a suppression that matched no finding",
        description: "A suppression (a `# routex: allow(...)` comment in a route file, or a `[[suppressions]]` entry of the project configuration) matched no finding of its code where it applies: the finding is gone, or the suppression is on the wrong line or entry.",
        help: "Remove the suppression, or move it to the line or entry of the finding.",
    }
    UnlistedModel {
        name: "unlisted_model",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_SIMULATION),
        title: "a simulator scenario's model is not one the base configuration lists",
        description: "A simulator scenario's `router.model` is not a model its `base_config` lists, so every request would silently get the configuration's default policy instead of the model's (a base configuration that lists no model at all gives every name its default, and is not checked). `routex check --model`, `explain --model` and `decide --model` refuse the same typo as a usage error.",
        help: "Name a listed model (the help line gives the closest one, or lists them), or add the model to the base configuration.",
    }
    InvalidTrace {
        name: "invalid_trace",
        level: Deny,
        origin: Routex,
        fixed: Some(NO_SIMULATION),
        title: "a line of a trace file cannot be read in the trace's format",
        description: "A trace file the scenario replays cannot be read in its `trace.format`: a line that is not a request of that format (each one a diagnostic at its own file, line and value), or a file that is plainly another format (one diagnostic at its first line, not one per line). The scenario itself gets one `invalid_trace` at `trace.path`, naming the file and the first bad line.",
        help: "Give the trace's format in `trace.format` (`mooncake`, `session-csv` or `session-jsonl`), or fix the lines named.",
    }
    NotInTarget {
        name: "not_in_target",
        level: Deny,
        origin: Routex,
        fixed: Some(REFUSED_AT_START),
        title: "the field exists in another stargate target than the one chosen",
        description: "A field exists, but not in the stargate target the input is checked for (`--stargate`, docs/stargate.md 0.1): `last_cluster_affinity` in an lb-config.json or a route file checked for `widening`, whatever the algorithm. That stargate refuses the file at start-up; the message is its own (\"... config does not support field(s): ...\"), the help names the targets that accept the field and how to choose one (`--stargate`, or the `stargate` key of routex.toml). A request expression naming the field is `unknown_parameter` in every target: stargate's expression parser does not know it.",
        help: "Check for the target your stargate runs (`--stargate sessions`, or `stargate = \"sessions\"` in routex.toml), or remove the field when it runs the older state.",
    }
}
