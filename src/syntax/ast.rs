//! The syntax tree: every node carries the byte span it came from.
//! Built from pest pairs in `syntax::build` only; the header form is parsed
//! by hand (stargate's ordered rules) into the same tree.

use crate::diag::Span;

/// A value with the span of its source text.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub node: T,
    /// Where `node` was written: byte offsets into the parsed text.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs `node` with the span of the text it came from.
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

/// Which spelling an expression was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `method(name=value, ...)`
    Call,
    /// `method;name=value;...` (the `x-routing-method` value)
    Header,
}

/// A parameter value as written. Typing (which kinds a field accepts, quoted
/// plain numbers, `true`/`false` as token or string) belongs to the checker.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer literal, sign included, as written (`-3`, `+42`, `0300`).
    Integer(String),
    /// A decimal literal as written (`0.0625`).
    Decimal(String),
    /// A quoted string, unescaped.
    String(String),
    /// A bare token (`ttft`, `queue-time`, `true`).
    Token(String),
    /// A value kind stargate's header form forbids but that parses
    /// (`?1`/`?0` booleans, `:base64:` byte sequences); kept so the checker
    /// can say what it was. The header parser rejects these before checking.
    Unsupported(String),
}

/// `name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// The parameter name as written (not yet matched against the fields).
    pub name: Spanned<String>,
    /// The value as written, untyped.
    pub value: Spanned<Value>,
    /// Name through value.
    pub span: Span,
}

/// One expression, in either form.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The spelling it was written in (call or header form).
    pub form: Form,
    /// The method as written (normalisation is the checker's job).
    pub method: Spanned<String>,
    /// The parameters in source order, duplicates kept (the checker
    /// reports them).
    pub args: Vec<Arg>,
    /// The whole expression as written.
    pub span: Span,
}

/// One `allow EXPR` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Allow {
    /// The allowed expression: a request algorithm of its set.
    pub expr: Expr,
    /// The whole entry, `allow` keyword included.
    pub span: Span,
}

/// A top-level item of a route file.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `default = EXPR`
    Default {
        /// The default set's configured expression.
        expr: Expr,
        /// The whole item, `default` keyword included.
        span: Span,
    },
    /// `allow EXPR` at top level (top-level request algorithms).
    Allow(Allow),
    /// `model "ID" = EXPR { allow EXPR ... }`
    Model {
        /// The model name, unquoted (matched exactly against the request's
        /// model).
        id: Spanned<String>,
        /// The model's configured expression.
        expr: Expr,
        /// The model-level request algorithms, in source order.
        allows: Vec<Allow>,
        /// The whole item, `model` keyword through the closing brace (or
        /// the expression when there is no block).
        span: Span,
    },
}

/// A whole `*.routes` file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RouteFile {
    /// The top-level items in source order.
    pub items: Vec<Item>,
}
