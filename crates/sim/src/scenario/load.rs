//! Loading a scenario: the JSON tree's shape, serde's typed read, every
//! section's checks, the trace and `base_config` the file names, the
//! policies compiled by the core, and the run settings that follow.

use super::*;

/// Parses and validates a scenario; `Err` holds every error (and warning)
/// of the scenario itself. Relative paths (`trace.path`, a `base_config`
/// path) start at the current directory: [`load_with`] gives them theirs.
pub fn load(source_name: &str, text: &str) -> Result<Prepared, Report> {
    load_with(source_name, text, LoadOptions::default()).map_err(|f| f.scenario)
}

/// [`load`] with the scenario's directory and overrides, for traces; the
/// failure carries the reports of the files the scenario names.
pub fn load_with(
    source_name: &str,
    text: &str,
    options: LoadOptions<'_>,
) -> Result<Prepared, LoadFailure> {
    let mut failure = LoadFailure {
        scenario: Report::new(source_name, text),
        files: Vec::new(),
    };
    let mut errors = Vec::new();
    let Some((mut file, spans)) = parse(source_name, text, &mut errors) else {
        failure.scenario.diagnostics = errors;
        return Err(failure);
    };
    file.stargate = file.stargate.or(options.stargate);
    let mut invalid = |path: &str, message: String| {
        errors.push(Diagnostic::new(Code::InvalidValue, spans.at(path), message));
    };
    validate::numbers(&file, &mut invalid);
    profiles::check(&file, &spans, &mut errors);
    faults::check(&file, &spans, &mut errors);
    admission::check(&file, &spans, &mut errors);
    let mut workload: Option<Arc<dyn WorkloadSource>> = file
        .workload
        .clone()
        .map(|w| Arc::new(w) as Arc<dyn WorkloadSource>)
        .or_else(|| {
            file.conversations
                .clone()
                .map(|c| Arc::new(c) as Arc<dyn WorkloadSource>)
        });
    let mut summary = None;
    let mut replayed = None;
    if let Some(spec) = file.trace.clone() {
        match read_trace(&spec, options, &spans, &mut errors) {
            Ok(trace) => {
                let mut invalid = |path: &str, message: String| {
                    errors.push(Diagnostic::new(Code::InvalidValue, spans.at(path), message));
                };
                validate::trace_window(&mut file, &trace, &mut invalid);
                window::check_trace_rates(&file, &trace, &mut invalid);
                summary = Some(TraceSummary {
                    requests: trace.len(),
                    span_s: trace.span_s(),
                    native_rps: trace.native_rps(),
                    distinct_keys: trace.distinct_keys(),
                    distinct_blocks: trace.block_ids(),
                });
                let trace = Arc::new(trace);
                replayed = Some(Arc::clone(&trace));
                workload = Some(trace);
            }
            Err(Some(report)) => failure.files.push(report),
            Err(None) => {}
        }
    }
    let mut base = base::resolve(text, &spans, options.dir, file.target(), &mut errors);
    let mut file_warnings = Vec::new();
    if let Some(report) = base.file_report.take() {
        if report.has_errors() {
            failure.files.push(report);
        } else if !report.diagnostics.is_empty() {
            file_warnings.push(report);
        }
    }
    let mut policies = Vec::new();
    if let Some(table) = &base.table {
        // Policies compile for the model: against an unlisted name their
        // errors would only echo the typo.
        if base::check_model(&file.router.model, table, &base, &spans, &mut errors) {
            policies = compile_policies(&file, text, &spans, table, &mut errors);
        }
    }
    failure.scenario.diagnostics = errors;
    let (Some(workload), Some(table)) = (workload, base.table) else {
        return Err(failure);
    };
    if failure.scenario.has_errors() || !failure.files.is_empty() {
        return Err(failure);
    }
    let mut settings = settings(&file, workload);
    settings.profiles = profiles::member_profiles(&file, &settings.topology, &settings.pylon);
    settings.faults = faults::resolve(&file, &settings.topology);
    // KV statistics are published when a policy reads them, so that the
    // outputs of every other scenario stay as they were.
    settings.publish_kv = policies.iter().any(|p| p.kind.reads_kv());
    Ok(Prepared {
        file,
        settings,
        policies,
        warnings: failure.scenario,
        file_warnings,
        trace: summary,
        replayed,
        asked_window: None,
        base_table: table,
    })
}

/// The scenario's structure: JSON syntax, then every key and type at once
/// ([`schema`]), then serde's typed read (which the shape check makes
/// succeed). `None` when any of them failed; the errors are in `errors`.
fn parse(
    source_name: &str,
    text: &str,
    errors: &mut Vec<Diagnostic>,
) -> Option<(ScenarioFile, Spans)> {
    let root = match routex::config::json::parse(text) {
        Ok(root) => root,
        Err(e) => {
            let at = e.at.min(text.len());
            errors.push(Diagnostic::new(
                Code::InvalidJson,
                Span::new(at, (at + 1).min(text.len())),
                format!("invalid JSON: {}", e.message),
            ));
            return None;
        }
    };
    if let Some(d) = lb_config_instead(source_name, &root) {
        errors.push(d);
        return None;
    }
    let default: Option<serde_json::Value> = serde_json::from_str(DEFAULT_SCENARIO).ok();
    schema::check(&root, schema::SCENARIO, "", default.as_ref(), errors);
    if errors.iter().any(Diagnostic::is_error) {
        return None;
    }
    let typed = serde_json::from_str::<ScenarioFile>(&schema::strip_comments(text, &root));
    match typed {
        Ok(file) => Some((file, Spans::from_root(root))),
        Err(e) => {
            // Only a gap between the shape table and the structs gets here.
            errors.push(Diagnostic::new(
                Code::InvalidValue,
                Span::new(root.span.start, root.span.start + 1),
                routex::json_words::user_message(&e.to_string()),
            ));
            None
        }
    }
}

/// An lb-config.json given where a scenario belongs: one diagnostic
/// saying what the file is and which commands read it, instead of an
/// `unknown_field` for `default`.
fn lb_config_instead(name: &str, root: &routex::config::json::Node) -> Option<Diagnostic> {
    use routex::config::json::Json;
    let Json::Object(members) = &root.value else {
        return None;
    };
    let has = |keys: &[&str]| members.iter().find(|m| keys.contains(&m.key.as_str()));
    let lb = has(&["default", "request_algorithms", "models"])?;
    if has(&["policies", "topology", "engine", "pylon"]).is_some() {
        return None;
    }
    Some(
        Diagnostic::new(
            Code::UnknownField,
            lb.key_span,
            "this is an lb-config.json, not a simulator scenario",
        )
        .with_help(format!(
            "`routex lint {name}` checks it; `routex sim init --config {name} --model ID` \
             writes a scenario that simulates it"
        )),
    )
}

/// Streams the trace file. A trace that cannot be read is one diagnostic
/// at `trace.path`, naming the file, and (when its lines are at fault) the
/// trace's own report, each bad line a diagnostic at its line.
fn read_trace(
    spec: &TraceSpec,
    options: LoadOptions<'_>,
    spans: &Spans,
    errors: &mut Vec<Diagnostic>,
) -> Result<Trace, Option<Report>> {
    let path = match options.trace {
        Some(p) => p.to_path_buf(),
        None => match options.dir {
            Some(dir) => dir.join(&spec.path),
            None => Path::new(&spec.path).to_path_buf(),
        },
    };
    let at = spans.at("trace.path");
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            errors.push(Diagnostic::new(
                Code::InvalidValue,
                at,
                format!(
                    "cannot read trace {}: {}",
                    path.display(),
                    routex::config::file_io_reason(&e)
                ),
            ));
            return Err(None);
        }
    };
    match Trace::read(std::io::BufReader::new(file), spec, Limits::default()) {
        Ok(t) => Ok(t),
        Err(bad) => {
            let report = trace_report::report(&path, spec, &bad);
            let first = bad.first().map_or(0, |e| e.line);
            errors.push(Diagnostic::new(
                Code::InvalidTrace,
                at,
                format!(
                    "trace {} cannot be read as format \"{}\": {} (the first at line {first})",
                    path.display(),
                    spec.format,
                    match bad.len() {
                        1 => "1 problem".to_string(),
                        n => format!("{n} problems"),
                    },
                ),
            ));
            Err(Some(report))
        }
    }
}

fn settings(f: &ScenarioFile, workload: Arc<dyn WorkloadSource>) -> SimSettings {
    let p = &f.pylon;
    SimSettings {
        topology: Topology::resolve(&f.topology),
        engine: f.engine.clone(),
        pylon: PylonConfig {
            initial_tps: p.input_tps.initial_for(&f.engine),
            mode: match p.input_tps.mode {
                TpsModeSpec::Window => TpsMode::Window {
                    window: p.input_tps.window,
                    floor_us: from_ms(p.input_tps.floor_ms),
                },
                TpsModeSpec::Constant => TpsMode::Constant,
            },
            published_max: match p.max_input_tps {
                MaxInputTpsSpec::Constant => PublishedMax::Constant,
                MaxInputTpsSpec::RunningMax => PublishedMax::RunningMax,
            },
            slots: f.engine.max_concurrency(),
            mismatch: p.mismatch.enabled.then_some(Mismatch {
                min_delta_ms: p.mismatch.min_delta_ms,
                tolerance: p.mismatch.tolerance,
            }),
        },
        heartbeat_us: p.heartbeat_ms.saturating_mul(US_PER_MS),
        coalesce_us: p.coalesce_ms.map(|ms| ms.saturating_mul(US_PER_MS)),
        max_retries: f.router.max_retries,
        routing_key: f.router.routing_key.clone(),
        model: f.router.model.clone(),
        request_slo_ms: f.client.request_slo_ms,
        max_wait_ms: f.client.max_wait_ms,
        timeout_us: f.client.timeout_ms.saturating_mul(US_PER_MS),
        ttft_slo_us: f.client.ttft_slo_ms.saturating_mul(US_PER_MS) as Micros,
        last_cluster_store: f.client.last_cluster_store.as_ref().map(|store| {
            crate::world::gateway::StoreSettings {
                ttl_us: store.ttl_ms.saturating_mul(US_PER_MS),
                max_sessions: store
                    .max_sessions
                    .unwrap_or(crate::world::gateway::DEFAULT_MAX_SESSIONS),
            }
        }),
        workload,
        warmup_s: f.warmup_s,
        measure_s: f.measure_s,
        mode: WaitMode::Faithful,
        profiles: Vec::new(),
        shared_engines: false,
        max_in_flight: f.client.max_in_flight,
        faults: Vec::new(),
        keep_detail: false,
        publish_kv: false,
        warm_start: f.warm_start,
        reuse_lasting_unavailable: true,
        timeline_cells: crate::measure::timeline::MAX_CELLS,
    }
}

fn compile_policies(
    f: &ScenarioFile,
    text: &str,
    spans: &Spans,
    table: &RouteTable,
    errors: &mut Vec<Diagnostic>,
) -> Vec<NamedPolicy> {
    let mut out = Vec::new();
    for (name, policy_text) in &f.policies {
        // The string literal's content, between its quotes.
        let path = format!("policies.{name}");
        let literal = spans
            .node(&path)
            .filter(|_| !name.contains('.'))
            .map(|n| n.span)
            .filter(|sp| sp.end > sp.start + 1);
        let to_file = |d: Diagnostic| match literal {
            Some(sp) => {
                let (start, raw) = (sp.start + 1, &text[sp.start + 1..sp.end - 1]);
                Diagnostic {
                    span: Span::new(
                        start + raw_offset(raw, policy_text, d.span.start),
                        start + raw_offset(raw, policy_text, d.span.end),
                    ),
                    message: format!("policy `{name}`: {}", d.message),
                    ..d
                }
            }
            None => Diagnostic {
                span: spans.value("policies"),
                message: format!("policy `{name}`: {}", d.message),
                suggestion: None,
                ..d
            },
        };
        match policy::compile(table, &f.router.model, policy_text) {
            Err(ds) => errors.extend(ds.into_iter().map(to_file)),
            Ok((kind, warnings)) => {
                errors.extend(warnings.into_iter().map(to_file));
                let whole = Span::new(0, policy_text.len());
                for d in simulator_checks(&kind, whole) {
                    errors.push(to_file(d));
                }
                out.push(NamedPolicy {
                    name: name.clone(),
                    text: policy_text.clone(),
                    kind,
                    admission: admission::for_policy(f, name),
                });
            }
        }
    }
    out
}

/// Rules of A10.1 the core itself does not enforce.
fn simulator_checks(kind: &PolicyKind, whole: Span) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let (floor, ceil) = kind.queue_bounds();
    if let (Some(fl), Some(ce)) = (floor, ceil) {
        if fl > ce {
            out.push(
                Diagnostic::new(
                    Code::FloorAboveCeil,
                    whole,
                    format!("the queue-time floor {fl} ms is above the ceiling {ce} ms"),
                )
                .with_severity(Severity::Error)
                .with_help("the simulator rejects it; the core would accept it"),
            );
        }
    }
    if kind.is_band_walk() && (floor.is_none() || ceil.is_none()) {
        out.push(
            Diagnostic::new(
                Code::NoQueueSlo,
                whole,
                "without both queue-time bounds this policy degenerates to plain Pulsar while rank 1 is feasible",
            )
            .with_severity(Severity::Warning),
        );
    }
    out
}

/// Maps a byte offset in the unescaped string to its offset in the raw JSON
/// literal; offsets past the end clamp.
fn raw_offset(raw: &str, unescaped: &str, offset: usize) -> usize {
    let mut raw_at = 0;
    for (i, c) in unescaped.char_indices() {
        if i >= offset {
            return raw_at;
        }
        let escaped = serde_json::to_string(&c.to_string()).map_or(c.len_utf8(), |s| s.len() - 2);
        raw_at += escaped;
    }
    raw_at.min(raw.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_offsets_skip_escapes() {
        let unescaped = r#"a(seed="x")"#;
        let raw = r#"a(seed=\"x\")"#;
        assert_eq!(raw_offset(raw, unescaped, 0), 0);
        assert_eq!(raw_offset(raw, unescaped, 7), 7); // the opening quote
        assert_eq!(raw_offset(raw, unescaped, 8), 9); // x
        assert_eq!(raw_offset(raw, unescaped, 99), raw.len());
    }

    /// Every key path of a serialised value (arrays through their first
    /// item; the insides of `base_config` and `policies` are not the
    /// scenario's own keys).
    fn value_paths(v: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    out.push(p.clone());
                    if p != "base_config" && p != "policies" {
                        value_paths(v, &p, out);
                    }
                }
            }
            serde_json::Value::Array(items) => {
                if let Some(first) = items.first() {
                    if first.is_object() {
                        value_paths(first, &format!("{prefix}.0"), out);
                    }
                }
            }
            _ => {}
        }
    }

    #[test]
    fn shape_matches_the_structs() {
        let mut file: ScenarioFile = serde_json::from_str(DEFAULT_SCENARIO).expect("default");
        // Every optional field set, so that serde writes it.
        file.pylon.coalesce_ms = Some(5);
        file.engine.batched = Some(Default::default());
        // One override of each kind, every field set (`*`: see
        // schema::paths).
        let every: crate::world::engine::overrides::EngineOverride = serde_json::from_value(
            serde_json::json!({"model": "batched-v3", "slots": 1, "prefill_tps": 1.0,
                "ttft_base_ms": 1.0, "ttft_jitter_ms": 1.0, "decode_tps": [1.0, 2.0],
                "kv_capacity_tokens": 1, "backend_speed": 1.0,
                "batched": {"num_gpu_workers": 1, "max_num_seqs": 1, "max_batched_tokens": 1,
                    "step_fixed_ms": 1.0, "step_decode_ms_per_seq": 1.0,
                    "step_prefill_ms_per_token": 1.0},
                "initial_input_tps": 1.0}),
        )
        .expect("override");
        file.engine.regions.insert("*".into(), every.clone());
        file.engine.backends.insert("*".into(), every);
        file.topology.regions[0].backends_per_cluster = 2;
        // Every size a law with all its keys (schema::paths).
        let law = || {
            crate::workload::sizes::Sizes::Law(crate::workload::sizes::Dist::Lognormal {
                mean: 100.0,
                sigma: 0.5,
                min: Some(10.0),
                p99_cap: 400.0,
            })
        };
        if let Some(w) = file.workload.as_mut() {
            w.block_tokens = Some(64);
            w.input_tokens = law();
            w.output_tokens = law();
            w.arrival = Some(crate::workload::arrival::ArrivalSpec {
                law: crate::workload::arrival::Law::Bursty,
                burst_factor: Some(2.0),
                period_requests: Some(10),
                steps: Some(3),
                start_fraction: Some(0.5),
            });
            w.hot_set = Some(crate::workload::arrival::HotSetSpec {
                fraction: 0.1,
                share: 0.5,
            });
            w.classes = vec![crate::workload::classes::SizeClass {
                share: 1.0,
                input_tokens: Some(law()),
                output_tokens: Some(law()),
            }];
        }
        file.trace = Some(TraceSpec {
            path: "t.jsonl".into(),
            format: "mooncake".into(),
            block_tokens: 512,
            speedups: vec![1.0],
            affinity_key: Some(Default::default()),
            max_requests: Some(10),
            repeat: crate::workload::trace::Repeat::Same,
        });
        file.conversations = Some(ConversationSpec {
            mean_turns: 4.0,
            think_time_s: 5.0,
            first_message_tokens: law(),
            message_tokens: law(),
            output_tokens: law(),
            max_context_tokens: 8_192,
            block_tokens: 64,
            max_turn_attempts: 3,
            retry_backoff_s: 1.0,
        });
        file.base_config = Some(serde_json::json!({"default": "random"}));
        file.stargate = Some(Target::Widening);
        file.warm_start = true;
        file.faults = vec![faults::FaultSpec {
            at_s: Some(1.0),
            at_request: Some(2),
            backend: "b".into(),
            action: faults::FaultActionSpec::StatsOutage,
            duration_s: Some(1.0),
            factor: Some(2.0),
        }];
        file.pylon.input_tps.per_gpu_worker = true;
        file.pylon.mismatch_by_policy.insert(
            "*".into(),
            admission::MismatchOverride {
                enabled: Some(false),
                min_delta_ms: Some(1),
                tolerance: Some(2.0),
            },
        );
        file.client.last_cluster_store = Some(LastClusterStoreSpec {
            ttl_ms: 1,
            max_sessions: Some(2),
        });
        file.client.max_in_flight = Some(3);
        let value = serde_json::to_value(&file).expect("serialise");
        let mut from_structs = Vec::new();
        value_paths(&value, "", &mut from_structs);
        let mut from_shape = Vec::new();
        schema::paths(schema::SCENARIO, "", &mut from_shape);
        from_structs.sort();
        from_shape.sort();
        assert_eq!(from_structs, from_shape);
        // And the shape accepts what the structs write.
        let text = serde_json::to_string_pretty(&value).expect("text");
        let root = routex::config::json::parse(&text).expect("json");
        let mut errors = Vec::new();
        schema::check(&root, schema::SCENARIO, "", None, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn comments_are_ignored_everywhere_but_base_config() {
        let mut v: serde_json::Value = serde_json::from_str(DEFAULT_SCENARIO).expect("default");
        v["//"] = "top".into();
        v["engine"]["//"] = serde_json::json!(["any", "value"]);
        v["pylon"]["input_tps"]["//"] = 1.into();
        v["policies"]["//"] = "not a policy".into();
        let p = load("s.json", &v.to_string()).expect("comments load");
        assert_eq!(p.policies.len(), 7);
        // The file's order, not a map's: a comment is blanked in the text.
        let text = r#"{"policies": {"//": "c", "zeta": "random", "//": 1, "alpha": "round-robin", "//": [2]}}"#;
        let root = routex::config::json::parse(text).expect("json");
        let stripped = schema::strip_comments(text, &root);
        assert_eq!(stripped.len(), text.len());
        let read: IndexMap<String, IndexMap<String, String>> =
            serde_json::from_str(&stripped).expect("still JSON");
        let names: Vec<&String> = read["policies"].keys().collect();
        assert_eq!(names, ["zeta", "alpha"]);
        v["base_config"] = serde_json::json!({"//": "x", "default": "random"});
        let report = load("s.json", &v.to_string()).expect_err("stargate has no comments");
        assert_eq!(report.diagnostics.len(), 1, "{:?}", report.diagnostics);
        assert_eq!(report.diagnostics[0].code, Code::UnknownField);
    }
}
