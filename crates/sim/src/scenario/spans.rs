//! Where a scenario key is in the text: the span-keeping JSON tree of
//! `config::json`, walked by a dotted path (`pylon.heartbeat_ms`,
//! `topology.regions.2.traffic_weight`), so a diagnostic points at the
//! value it is about rather than at the first occurrence of the key's name.

#[cfg(test)]
use routex::config::json;
use routex::config::json::{Json, Node};
use routex::diag::Span;

/// The parsed tree of a scenario text (`None` if it is not JSON; serde's
/// error is reported then).
pub(super) struct Spans {
    root: Option<Node>,
}

impl Spans {
    #[cfg(test)]
    pub(super) fn new(text: &str) -> Self {
        Spans {
            root: json::parse(text).ok(),
        }
    }

    /// The tree the loader has parsed already.
    pub(super) fn from_root(root: Node) -> Self {
        Spans { root: Some(root) }
    }

    /// The node at `path` (object keys, array indices); a duplicated key
    /// resolves to its last occurrence, the one serde keeps.
    pub(super) fn node(&self, path: &str) -> Option<&Node> {
        let mut node = self.root.as_ref()?;
        for part in path.split('.').filter(|p| !p.is_empty()) {
            node = child(node, part)?;
        }
        Some(node)
    }

    /// The span of the value at `path`, or of its nearest existing parent,
    /// or an empty span at 0.
    pub(super) fn value(&self, path: &str) -> Span {
        let Some(mut node) = self.root.as_ref() else {
            return Span::new(0, 0);
        };
        for part in path.split('.').filter(|p| !p.is_empty()) {
            match child(node, part) {
                Some(next) => node = next,
                None => break,
            }
        }
        node.span
    }

    /// Where a diagnostic about `path` points: a scalar value itself, or the
    /// key of an object or array (whose value may span many lines).
    pub(super) fn at(&self, path: &str) -> Span {
        match self.node(path).map(|n| &n.value) {
            Some(Json::Object(_) | Json::Array(_)) | None => self.key(path),
            Some(_) => self.value(path),
        }
    }

    /// The span of a member's key (quotes included); falls back to
    /// [`Spans::value`].
    pub(super) fn key(&self, path: &str) -> Span {
        let (parent, last) = match path.rsplit_once('.') {
            Some((p, l)) => (p, l),
            None => ("", path),
        };
        match self.node(parent).map(|n| &n.value) {
            Some(Json::Object(members)) => members
                .iter()
                .rev()
                .find(|m| m.key == last)
                .map_or_else(|| self.value(path), |m| m.key_span),
            _ => self.value(path),
        }
    }
}

fn child<'n>(node: &'n Node, part: &str) -> Option<&'n Node> {
    match &node.value {
        Json::Object(members) => members
            .iter()
            .rev()
            .find(|m| m.key == part)
            .map(|m| &m.value),
        Json::Array(items) => items.get(part.parse::<usize>().ok()?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_find_values_keys_and_parents() {
        let text = r#"{"name": "heartbeat_ms", "pylon": {"heartbeat_ms": 0}, "r": [1, 22]}"#;
        let s = Spans::new(text);
        let at = |sp: Span| &text[sp.start..sp.end];
        assert_eq!(at(s.value("pylon.heartbeat_ms")), "0");
        assert_eq!(at(s.key("pylon.heartbeat_ms")), "\"heartbeat_ms\"");
        assert_eq!(at(s.value("r.1")), "22");
        assert_eq!(at(s.value("pylon.missing")), r#"{"heartbeat_ms": 0}"#);
        assert_eq!(s.value("r.9"), s.value("r"));
        assert_eq!(at(s.at("pylon")), "\"pylon\"");
        assert_eq!(at(s.at("r.0")), "1");
        assert_eq!(Spans::new("{").value("a"), Span::new(0, 0));
    }
}
