//! Helpers shared by the syntax tests.

use routex::diag::{Diagnostic, Span};
use routex::syntax::ast::{Expr, Item, RouteFile, Value};

/// The header-form error of `raw`: exactly one, as stargate stops at the
/// first (panics with the AST if it parsed).
pub fn header_error(raw: &str) -> Diagnostic {
    match routex::syntax::parse_header(raw) {
        Ok(e) => panic!("{raw:?} parsed: {e:?}"),
        Err(mut errors) => {
            assert_eq!(errors.len(), 1, "{raw:?}: {errors:?}");
            errors.remove(0)
        }
    }
}

/// The text a span covers.
pub fn slice(text: &str, span: Span) -> &str {
    text.get(span.start..span.end).unwrap_or("<bad span>")
}

/// An expression without spans or form: (method, [(name, value)]).
pub type Shape = (String, Vec<(String, Value)>);

pub fn shape(e: &Expr) -> Shape {
    let args = e
        .args
        .iter()
        .map(|a| (a.name.node.clone(), a.value.node.clone()))
        .collect();
    (e.method.node.clone(), args)
}

/// A route file without spans.
pub fn file_shape(f: &RouteFile) -> Vec<(String, Option<String>, Shape, Vec<Shape>)> {
    f.items
        .iter()
        .map(|i| match i {
            Item::Default { expr, .. } => ("default".into(), None, shape(expr), vec![]),
            Item::Allow(a) => ("allow".into(), None, shape(&a.expr), vec![]),
            Item::Model {
                id, expr, allows, ..
            } => (
                "model".into(),
                Some(id.node.clone()),
                shape(expr),
                allows.iter().map(|a| shape(&a.expr)).collect(),
            ),
        })
        .collect()
}
