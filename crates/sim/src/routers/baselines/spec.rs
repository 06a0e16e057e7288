//! Baseline policy strings: `name(param=value, ...)`, parsed on the syntax
//! tree (so every diagnostic points at its argument) into the parameters
//! of one peer router (docs/simulator.md "Baselines").

use super::dynamo::DynamoParams;
use super::gie::GieWeights;
use super::sglang::SglangParams;
use routex::diag::{Code, Diagnostic};
use routex::syntax::ast::{Arg, Value};

pub const DYNAMO: &str = "dynamo-kv";
pub const GIE: &str = "gie-default";
pub const SGLANG: &str = "sglang-cache-aware";
pub const CHWBL: &str = "consistent-hash-bounded";

/// The baseline names, for help texts.
pub const NAMES: &[&str] = &[DYNAMO, GIE, SGLANG, CHWBL];

/// Router-side index sizes are capped here (blocks per backend).
pub const MAX_INDEX_BLOCKS: u64 = 10_000_000;

/// A baseline and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Baseline {
    Dynamo(DynamoParams),
    Gie {
        weights: GieWeights,
        /// Blocks per backend in the prefix index; `None` = the engine's
        /// KV capacity in blocks.
        lru_capacity_blocks: Option<u64>,
    },
    Sglang {
        params: SglangParams,
        max_tree_blocks: u64,
    },
    Chwbl {
        hash_balance_factor: u64,
    },
}

/// SGLang's tree cap: `--max-tree-size` 2^26 characters is far beyond any
/// run here; this keeps the index bounded at 2^20 blocks per backend.
pub const SGLANG_TREE_BLOCKS: u64 = 1 << 20;

/// Whether `text` names a baseline (its method, before any `(`).
pub fn is_baseline(text: &str) -> bool {
    let method = text.trim_start();
    let method = method.split('(').next().unwrap_or("").trim();
    NAMES.contains(&method)
}

fn number(arg: &Arg) -> Result<f64, Diagnostic> {
    let text = match &arg.value.node {
        Value::Integer(t) | Value::Decimal(t) => t,
        Value::String(t) | Value::Token(t) | Value::Unsupported(t) => t,
    };
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| {
            Diagnostic::new(
                Code::InvalidValue,
                arg.value.span,
                format!(
                    "`{}` must be a finite number >= 0, got `{text}`",
                    arg.name.node
                ),
            )
        })
}

fn whole(arg: &Arg, min: u64, max: u64) -> Result<u64, Diagnostic> {
    let v = number(arg)?;
    if v.fract() == 0.0 && v >= min as f64 && v <= max as f64 {
        Ok(v as u64)
    } else {
        Err(Diagnostic::new(
            Code::InvalidValue,
            arg.value.span,
            format!(
                "`{}` must be a whole number in [{min}, {max}]",
                arg.name.node
            ),
        ))
    }
}

fn unknown(arg: &Arg, method: &str, known: &[&str]) -> Diagnostic {
    Diagnostic::new(
        Code::UnknownParameter,
        arg.name.span,
        format!(
            "`{}` is not a parameter of the `{method}` baseline",
            arg.name.node
        ),
    )
    .with_help(format!("parameters: {}", known.join(", ")))
}

/// Parses a baseline policy string; diagnostics have spans into `text`.
pub fn parse(text: &str) -> Result<Baseline, Vec<Diagnostic>> {
    let expr = routex::syntax::parse_call(text)?;
    let method = expr.method.node.as_str();
    let mut errors = Vec::new();
    let mut keep = |r: Result<(), Diagnostic>| {
        if let Err(d) = r {
            errors.push(d);
        }
    };
    let baseline = match method {
        DYNAMO => {
            let mut p = DynamoParams::default();
            for arg in &expr.args {
                keep(match arg.name.node.as_str() {
                    "overlap_score_weight" => number(arg).map(|v| p.overlap_score_weight = v),
                    "temperature" => number(arg).map(|v| p.temperature = v),
                    _ => Err(unknown(
                        arg,
                        method,
                        &["overlap_score_weight", "temperature"],
                    )),
                });
            }
            Baseline::Dynamo(p)
        }
        GIE => {
            let mut weights = GieWeights::default();
            let mut lru_capacity_blocks = None;
            for arg in &expr.args {
                keep(match arg.name.node.as_str() {
                    "queue_weight" => number(arg).map(|v| weights.queue = v),
                    "kv_cache_weight" => number(arg).map(|v| weights.kv_cache = v),
                    "prefix_weight" => number(arg).map(|v| weights.prefix = v),
                    "lru_capacity_blocks" => {
                        whole(arg, 1, MAX_INDEX_BLOCKS).map(|v| lru_capacity_blocks = Some(v))
                    }
                    _ => Err(unknown(
                        arg,
                        method,
                        &[
                            "queue_weight",
                            "kv_cache_weight",
                            "prefix_weight",
                            "lru_capacity_blocks",
                        ],
                    )),
                });
            }
            Baseline::Gie {
                weights,
                lru_capacity_blocks,
            }
        }
        SGLANG => {
            // `defaults` picks the base; explicit thresholds override it,
            // wherever they are written.
            let mut params = SglangParams::CLI;
            if let Some(arg) = expr.args.iter().find(|a| a.name.node == "defaults") {
                match &arg.value.node {
                    Value::Token(t) | Value::String(t) if t == "cli" => {}
                    Value::Token(t) | Value::String(t) if t == "library" => {
                        params = SglangParams::LIBRARY
                    }
                    _ => keep(Err(Diagnostic::new(
                        Code::InvalidValue,
                        arg.value.span,
                        "`defaults` is `cli` (the launcher's) or `library` (CacheAwareConfig's)",
                    ))),
                }
            }
            let mut max_tree_blocks = SGLANG_TREE_BLOCKS;
            for arg in &expr.args {
                keep(match arg.name.node.as_str() {
                    "defaults" => Ok(()),
                    "balance_abs_threshold" => {
                        whole(arg, 0, u64::from(u32::MAX)).map(|v| params.balance_abs_threshold = v)
                    }
                    "balance_rel_threshold" => {
                        number(arg).map(|v| params.balance_rel_threshold = v)
                    }
                    "cache_threshold" => number(arg).and_then(|v| {
                        if v <= 1.0 {
                            params.cache_threshold = v;
                            Ok(())
                        } else {
                            Err(Diagnostic::new(
                                Code::InvalidValue,
                                arg.value.span,
                                "`cache_threshold` is a match rate in [0, 1]",
                            ))
                        }
                    }),
                    "max_tree_blocks" => {
                        whole(arg, 1, MAX_INDEX_BLOCKS).map(|v| max_tree_blocks = v)
                    }
                    _ => Err(unknown(
                        arg,
                        method,
                        &[
                            "defaults",
                            "balance_abs_threshold",
                            "balance_rel_threshold",
                            "cache_threshold",
                            "max_tree_blocks",
                        ],
                    )),
                });
            }
            Baseline::Sglang {
                params,
                max_tree_blocks,
            }
        }
        CHWBL => {
            let mut hash_balance_factor = 150;
            for arg in &expr.args {
                keep(match arg.name.node.as_str() {
                    // Envoy requires at least 100 (a bound below the mean
                    // load cannot be met).
                    "hash_balance_factor" => {
                        whole(arg, 100, 100_000).map(|v| hash_balance_factor = v)
                    }
                    _ => Err(unknown(arg, method, &["hash_balance_factor"])),
                });
            }
            Baseline::Chwbl {
                hash_balance_factor,
            }
        }
        _ => {
            return Err(vec![Diagnostic::new(
                Code::UnknownMethod,
                expr.method.span,
                format!("`{method}` is not a baseline"),
            )
            .with_help(format!("baselines: {}", NAMES.join(", ")))])
        }
    };
    if errors.is_empty() {
        Ok(baseline)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(
            parse("dynamo-kv").unwrap(),
            Baseline::Dynamo(DynamoParams::default())
        );
        assert_eq!(
            parse("dynamo-kv(overlap_score_weight=2, temperature=0.5)").unwrap(),
            Baseline::Dynamo(DynamoParams {
                overlap_score_weight: 2.0,
                temperature: 0.5
            })
        );
        assert_eq!(
            parse("gie-default(prefix_weight=0, lru_capacity_blocks=100)").unwrap(),
            Baseline::Gie {
                weights: GieWeights {
                    prefix: 0.0,
                    ..GieWeights::default()
                },
                lru_capacity_blocks: Some(100)
            }
        );
        assert_eq!(
            parse("sglang-cache-aware(cache_threshold=0.2, defaults=library)").unwrap(),
            Baseline::Sglang {
                params: SglangParams {
                    cache_threshold: 0.2,
                    ..SglangParams::LIBRARY
                },
                max_tree_blocks: SGLANG_TREE_BLOCKS
            }
        );
        assert_eq!(
            parse("consistent-hash-bounded").unwrap(),
            Baseline::Chwbl {
                hash_balance_factor: 150
            }
        );
        assert!(is_baseline(" dynamo-kv(temperature=1)"));
        assert!(!is_baseline("pulsar"));
    }

    #[test]
    fn bad_arguments_point_at_themselves() {
        let text = "dynamo-kv(temperature=-1, weight=2)";
        let e = parse(text).unwrap_err();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].code, Code::InvalidValue);
        assert_eq!(&text[e[0].span.start..e[0].span.end], "-1");
        assert_eq!(e[1].code, Code::UnknownParameter);
        assert_eq!(&text[e[1].span.start..e[1].span.end], "weight");
        let e = parse("consistent-hash-bounded(hash_balance_factor=99)").unwrap_err();
        assert!(e[0].message.contains("[100, 100000]"));
        let e = parse("sglang-cache-aware(defaults=fast, cache_threshold=2)").unwrap_err();
        assert_eq!(e.len(), 2);
        let e = parse("gie-default(lru_capacity_blocks=0)").unwrap_err();
        assert_eq!(e[0].code, Code::InvalidValue);
        assert_eq!(parse("nope()").unwrap_err()[0].code, Code::UnknownMethod);
        assert!(
            parse("dynamo-kv(").is_err(),
            "syntax errors come from the parser"
        );
    }
}
