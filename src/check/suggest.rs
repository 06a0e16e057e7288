//! Did-you-mean suggestions: shown only when one candidate is clearly close.

/// Optimal-string-alignment edit distance (transpositions count as one),
/// case-insensitive and treating `_` as `-`. Three rolling rows: memory is
/// linear in the candidate's length, whatever the word's.
fn distance(a: &[char], b: &str) -> usize {
    let b = normalise(b);
    let mut before = vec![0usize; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j] + 1)
                .min(row[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut row);
    }
    previous[b.len()]
}

fn normalise(s: &str) -> Vec<char> {
    s.chars()
        .map(|c| {
            if c == '_' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// The closest candidate when it is within a third of the word's length
/// (at least one edit) and strictly closer than any other.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = normalise(word);
    let limit = (word.len() / 3).max(1);
    // Lengths further apart than the limit cannot be within it: a long
    // word costs nothing against short names.
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|c| c.chars().count().abs_diff(word.len()) <= limit)
        .map(|c| (distance(&word, c), c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    match scored.as_slice() {
        [(d, best), rest @ ..] if rest.first().is_none_or(|(d2, _)| d2 > d) => Some(best),
        _ => None,
    }
}

/// The canonical name of the algorithm a misspelt method most likely
/// meant. Aliases count as spellings of their algorithm but are never
/// suggested: following the advice must not earn a `deprecated_alias`.
pub fn algorithm_suggestion(word: &str) -> Option<&'static str> {
    use crate::ir::{Algorithm, ALIASES};
    let normalised = normalise(word);
    let limit = (normalised.len() / 3).max(1);
    let close = |name: &str| {
        (name.chars().count().abs_diff(normalised.len()) <= limit)
            .then(|| distance(&normalised, name))
            .filter(|d| *d <= limit)
    };
    let mut scored: Vec<(usize, Algorithm)> = Algorithm::ALL
        .iter()
        .filter_map(|alg| {
            let aliases = ALIASES.iter().filter(|(_, a)| a == alg).map(|(n, _)| *n);
            std::iter::once(alg.name())
                .chain(aliases)
                .filter_map(close)
                .min()
                .map(|d| (d, *alg))
        })
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    match scored.as_slice() {
        [(d, best), rest @ ..] if rest.first().is_none_or(|(d2, _)| d2 > d) => Some(best.name()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_close_unique_names() {
        let algs = ["power-of-n", "pulsar", "random", "round-robin"];
        assert_eq!(did_you_mean("pulsra", algs), Some("pulsar"));
        assert_eq!(did_you_mean("round_robbin", algs), Some("round-robin"));
        assert_eq!(did_you_mean("fastest", algs), None);
        assert_eq!(did_you_mean("seeed", ["seed", "n"]), Some("seed"));
        assert_eq!(did_you_mean("x", ["n", "y"]), None);
    }

    #[test]
    fn algorithm_suggestions_are_canonical_names() {
        assert_eq!(algorithm_suggestion("power-of-tw"), Some("power-of-n"));
        assert_eq!(
            algorithm_suggestion("pulsar-multiregio"),
            Some("pulsar-wait-and-widen")
        );
        assert_eq!(
            algorithm_suggestion("groq-multiregon"),
            Some("wait-and-widen")
        );
        assert_eq!(algorithm_suggestion("pulsr"), Some("pulsar"));
        assert_eq!(algorithm_suggestion("fastest"), None);
    }

    #[test]
    fn a_long_word_is_cheap_against_short_names() {
        // Skipped by length: no 1,000,000-row table is built (the
        // allocation test in tests/alloc_lint.rs bounds the bytes).
        let word = "x".repeat(1_000_000);
        assert_eq!(did_you_mean(&word, ["seed", "n"]), None);
        assert_eq!(algorithm_suggestion(&word), None);
    }
}
