//! Did-you-mean suggestions: shown only when one candidate is clearly close.

/// Optimal-string-alignment edit distance (transpositions count as one),
/// case-insensitive and treating `_` as `-`.
fn distance(a: &str, b: &str) -> usize {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .map(|c| {
                if c == '_' {
                    '-'
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    };
    let (a, b) = (norm(a), norm(b));
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The closest candidate when it is within a third of the word's length
/// (at least one edit) and strictly closer than any other.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    match scored.as_slice() {
        [(d, best), rest @ ..] if rest.first().is_none_or(|(d2, _)| d2 > d) => Some(best),
        _ => None,
    }
}

/// The algorithm name or alias a misspelt method most likely meant.
pub fn algorithm_suggestion(word: &str) -> Option<&'static str> {
    let names = crate::ir::Algorithm::ALL
        .iter()
        .map(|a| a.name())
        .chain(crate::ir::ALIASES.iter().map(|(n, _)| *n));
    did_you_mean(word, names)
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
}
