//! Rule levels and suppressions over a finished [`Report`]: what a project
//! (its configuration file, the command line) chose for each code, applied
//! after checking so the checker never needs to know about it.
//!
//! A code's level starts at its default (`CodeInfo::level`); a code whose
//! row is `fixed` (stargate, or routex, cannot use the input) keeps it:
//! [`Levels::set`] refuses to change it and [`Levels::apply`] leaves its
//! diagnostics as they are.

use super::{Code, Diagnostic, Level, Report, Span};

/// The level chosen for each code, on top of the defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Levels {
    chosen: Vec<(Code, Level)>,
}

/// Why a level could not be set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedLevel {
    /// The code asked for.
    pub code: Code,
    /// The level asked for.
    pub level: Level,
}

impl std::fmt::Display for FixedLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.code.info();
        write!(
            f,
            "{} is always `{}` ({}): it cannot be set to `{}`",
            info.name,
            info.level.name(),
            info.fixed.unwrap_or("fixed"),
            self.level.name()
        )
    }
}

impl Levels {
    /// Every code at its default level.
    pub fn new() -> Self {
        Levels::default()
    }

    /// Sets `code` to `level`; a later call for the same code wins. Setting
    /// a fixed code to its own level is accepted (it changes nothing); any
    /// other level for it is refused.
    pub fn set(&mut self, code: Code, level: Level) -> Result<(), FixedLevel> {
        if code.info().fixed.is_some() {
            return if level == code.default_level() {
                Ok(())
            } else {
                Err(FixedLevel { code, level })
            };
        }
        self.chosen.retain(|(c, _)| *c != code);
        self.chosen.push((code, level));
        Ok(())
    }

    /// Every level of `other` set on top of these (`other` wins).
    pub fn extend(&mut self, other: &Levels) {
        for (code, level) in &other.chosen {
            // Only non-fixed codes are ever stored.
            let _ = self.set(*code, *level);
        }
    }

    /// The level of `code`.
    pub fn level(&self, code: Code) -> Level {
        self.chosen
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(code.default_level(), |(_, l)| *l)
    }

    /// Whether no level differs from the defaults.
    pub fn is_default(&self) -> bool {
        self.chosen.is_empty()
    }

    /// Applies the levels to `report`: diagnostics of an allowed code are
    /// removed, the others take the severity of their code's level. Fixed
    /// codes are left as the checker reported them.
    pub fn apply(&self, report: &mut Report) {
        if self.chosen.is_empty() {
            return;
        }
        let keep = |d: &mut Diagnostic| {
            if d.code.info().fixed.is_some() {
                return true;
            }
            match self.level(d.code).severity() {
                Some(severity) => {
                    d.severity = severity;
                    true
                }
                None => false,
            }
        };
        report.diagnostics.retain_mut(keep);
        // A suppressed finding shows the severity it would have had.
        report.suppressed.retain_mut(|s| keep(&mut s.diagnostic));
    }
}

/// Where a suppression was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SuppressionKind {
    /// A comment in the source (`# routex: allow(CODE) -- reason`).
    InSource,
    /// An entry of the project configuration file (for files without
    /// comments, such as lb-config.json).
    External,
}

/// Why a finding is not reported: the suppression that matched it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// A comment in the source or an entry of the configuration file.
    pub kind: SuppressionKind,
    /// The reason written with it (after `--`, or `reason = ...`), if any.
    pub justification: Option<String>,
}

/// A finding that a suppression matched: kept for the formats that report
/// what was suppressed (json, github, sarif), out of the counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Suppressed {
    /// The finding as the checker (and the levels) reported it.
    pub diagnostic: Diagnostic,
    /// The suppression that matched it.
    pub suppression: Suppression,
}

/// One suppression rule: which codes, over which part of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuppressionRule {
    /// The codes it suppresses.
    pub codes: Vec<Code>,
    /// The byte range a finding must start in; `None` for the whole source.
    pub scope: Option<Span>,
    /// Where the rule itself is written, for `unused_suppression`
    /// (a span in this source for a comment; `None` for an entry of the
    /// configuration file, which reports its own unused entries).
    pub at: Option<Span>,
    /// A comment or a configuration entry, and its reason.
    pub suppression: Suppression,
}

impl SuppressionRule {
    fn matches(&self, d: &Diagnostic) -> bool {
        self.codes.contains(&d.code)
            && self
                .scope
                .is_none_or(|s| d.span.start >= s.start && d.span.start <= s.end)
    }
}

/// Moves the findings of `report` that a rule matches into
/// `report.suppressed` and returns, per rule, whether it matched anything.
/// Errors of fixed codes are never suppressed (stargate would still
/// refuse the input).
pub fn suppress(report: &mut Report, rules: &[SuppressionRule]) -> Vec<bool> {
    let mut used = vec![false; rules.len()];
    if rules.is_empty() {
        return used;
    }
    let mut kept = Vec::with_capacity(report.diagnostics.len());
    for d in std::mem::take(&mut report.diagnostics) {
        let fixed = d.code.info().fixed.is_some() && d.is_error();
        match rules.iter().position(|r| !fixed && r.matches(&d)) {
            Some(i) => {
                used[i] = true;
                report.suppressed.push(Suppressed {
                    diagnostic: d,
                    suppression: rules[i].suppression.clone(),
                });
            }
            None => kept.push(d),
        }
    }
    report.diagnostics = kept;
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_codes_refuse_other_levels() {
        let mut levels = Levels::new();
        assert_eq!(levels.set(Code::UnknownField, Level::Deny), Ok(()));
        let refused = levels.set(Code::UnknownField, Level::Allow).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "unknown_field is always `deny` (stargate refuses to start with it): it cannot be set to `allow`"
        );
        assert!(levels.is_default());
    }

    #[test]
    fn the_last_level_wins_and_applies() {
        let mut levels = Levels::new();
        levels.set(Code::NoQueueSlo, Level::Deny).unwrap();
        levels.set(Code::NoQueueSlo, Level::Allow).unwrap();
        levels.set(Code::DeprecatedAlias, Level::Deny).unwrap();
        let mut report = Report::new("x", "abc");
        for code in [Code::NoQueueSlo, Code::DeprecatedAlias, Code::UnknownField] {
            report
                .diagnostics
                .push(Diagnostic::new(code, Span::new(0, 1), "m"));
        }
        levels.apply(&mut report);
        let left: Vec<_> = report
            .diagnostics
            .iter()
            .map(|d| (d.code, d.is_error()))
            .collect();
        assert_eq!(
            left,
            [(Code::DeprecatedAlias, true), (Code::UnknownField, true)]
        );
    }
}
