//! The JSON report against its committed schema (`golden/report-v3.schema.json`), checked by a
//! small validator of the keywords the schema uses (type, const, enum, required, properties,
//! items, additionalProperties): a real run's report, one with every optional field set, and a
//! v1 report (valid against `golden/report-v1.schema.json`) read into the v2 shape.

use ompd_report::{Gate, LibraryInfo, Outcome, Report, ResultRecord};
use serde_json::Value;

/// Every violation of `schema` by `v`, as `path: what`.
fn validate(schema: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(c) = schema.get("const") {
        if c != v {
            out.push(format!("{path}: {v} is not {c}"));
        }
    }
    if let Some(Value::Array(e)) = schema.get("enum") {
        if !e.contains(v) {
            out.push(format!("{path}: {v} not in {e:?}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            out.push(format!("{path}: {v} is not {types:?}"));
        }
    }
    if let (Some(Value::Array(req)), Some(o)) = (schema.get("required"), v.as_object()) {
        for k in req.iter().filter_map(Value::as_str) {
            if !o.contains_key(k) {
                out.push(format!("{path}: missing {k}"));
            }
        }
    }
    if let Some(o) = v.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, x) in o {
            match (
                props.and_then(|p| p.get(k)),
                schema.get("additionalProperties"),
            ) {
                (Some(s), _) => validate(s, x, &format!("{path}.{k}"), out),
                (None, Some(s)) => validate(s, x, &format!("{path}.{k}"), out),
                // The schema is additive: undeclared fields are a test failure here so that
                // every new field gets documented in the schema.
                (None, None) => out.push(format!("{path}: field {k} is not in the schema")),
            }
        }
    }
    if let (Some(items), Some(a)) = (schema.get("items"), v.as_array()) {
        for (i, x) in a.iter().enumerate() {
            validate(items, x, &format!("{path}[{i}]"), out);
        }
    }
}

fn schema() -> Value {
    serde_json::from_str(suite_data::REPORT_SCHEMA_JSON).expect("the schema is JSON")
}

fn schema_v1() -> Value {
    serde_json::from_str(suite_data::REPORT_SCHEMA_V1_JSON).expect("the v1 schema is JSON")
}

fn errors(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    validate(
        &schema(),
        &serde_json::to_value(report).unwrap(),
        "$",
        &mut out,
    );
    out
}

#[test]
fn a_report_with_every_optional_field_matches_the_schema() {
    let mut r = Report::new();
    r.libraries.push(LibraryInfo {
        name: "l".into(),
        soname: Some("libompd.so".into()),
        profile: Some(ompd_checks::Profile::V5_0),
        package_version: Some("1".into()),
        api_version: Some(201811),
        quarantined: vec![ompd_report::QuarantinedEntry {
            entry_point: "ompd_get_curr_task_handle".into(),
            cause: "hang".into(),
            checks: 2,
            first: "task.curr.kind_matches_model on serial/lp64-le/natural: ...".into(),
        }],
        load_failed: Some("undefined symbol: x".into()),
        printed: Some("hello".into()),
        ..LibraryInfo::default()
    });
    r.push(ResultRecord {
        library: "l".into(),
        check: "c".into(),
        requirements: vec!["OMPD-X".into()],
        scenario: "s".into(),
        arch: "lp64-le".into(),
        layout: Some("natural".into()),
        outcome: Outcome::Crash,
        expected: "e".into(),
        actual: "a".into(),
        detail: String::new(),
        flaky: true,
        target: "live".into(),
        real: Some(ompd_report::RealTargetInfo {
            kind: "live".into(),
            fixture: Some("nested".into()),
            runtime: Some("llvm-21".into()),
            runtime_file: Some("/opt/llvm/lib/libomp.so".into()),
            build: Some("gcc".into()),
            omp_debug: Some(true),
            pid: Some(42),
            core: Some("/tmp/core".into()),
            tour: Some(true),
        }),
        gate: Some(Gate::Flake),
        replay: Some("ompd-conform run l --replay m.json --check c".into()),
    });
    r.answers.insert(
        "l".into(),
        [("serial/lp64-le/setup".to_string(), "ok".to_string())].into(),
    );
    r.incomplete = true;
    r.shard = Some(ompd_report::shard::ShardInfo {
        index: 1,
        count: 3,
        order: vec![[1, 4, 0]],
    });
    assert_eq!(errors(&r), Vec::<String>::new());
    // The validator is not vacuous.
    let mut bad = serde_json::to_value(&r).unwrap();
    bad["results"][0]["gate"] = "maybe".into();
    bad["results"][0].as_object_mut().unwrap().remove("target");
    let mut out = Vec::new();
    validate(&schema(), &bad, "$", &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
}

#[test]
fn a_v1_report_read_into_the_v2_shape_matches_the_v2_schema() {
    let v1 = serde_json::json!({
        "schema": ompd_report::SCHEMA_V1,
        "libraries": [],
        "summary": {"pass": 0, "warn": 0, "not-supported": 0, "skip": 0, "fail": 1, "crash": 0,
                    "timeout": 0, "harness-error": 0},
        "incomplete": false,
        "results": [{"library": "l", "check": "c", "requirements": [], "scenario": "nested-nodebug",
                     "arch": "lp64-le", "layout": "llvm-21/gcc", "outcome": "fail",
                     "expected": "", "actual": "", "detail": "", "target": "live"}],
    });
    let mut out = Vec::new();
    validate(&schema_v1(), &v1, "$", &mut out);
    assert_eq!(
        out,
        Vec::<String>::new(),
        "the hand-made report is a v1 report"
    );
    let r = Report::from_json(&v1.to_string()).expect("a v1 report reads");
    assert_eq!(r.schema, ompd_report::SCHEMA);
    assert_eq!(errors(&r), Vec::<String>::new());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["results"][0]["scenario"], "nested");
    assert!(v["results"][0].get("layout").is_none());
    assert_eq!(v["results"][0]["real"]["omp_debug"], false);
}

#[test]
fn a_real_run_s_report_matches_the_schema() {
    ompd_vendors::fetch(
        &ompd_vendors::default_cache_dir(),
        &["llvm-19"],
        false,
        &mut |_| {},
    )
    .expect("fetch");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r.json");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args([
            "run", "llvm-19", "--cases", "0", "--arch", "ilp32-be", "--quiet",
        ])
        .args(["--format", "json", "--output"])
        .arg(&out)
        .arg("--results-dir")
        .arg(d.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let report: Report = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(report.results.iter().all(|r| r.gate.is_some()));
    assert_eq!(errors(&report), Vec::<String>::new());
}
