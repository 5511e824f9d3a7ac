//! Library lifecycle: version queries before initialization, initialize with supported and
//! unsupported versions, finalize. Runs once per library in a fresh instance, in this order:
//! [`QUERIES`], then any other check that needs an uninitialized library, then [`INITIALIZE`].

use crate::{expect_rc, Check, Ctx, Judge, Profile, Run, Severity, Stage, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{api_version, Rc};
use ompd_loader::library::Fail;
use ompd_serve::callbacks;

/// Checks of this family that run before `ompd_initialize`: the inventory and version queries.
pub static QUERIES: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "lib.inventory.profile_entry_points_exported",
        requirements: &["OMPD-GEN-001", "OMPD-GEN-002"],
        summary: "every entry point of the library's API generation is exported as an unmangled C symbol",
        severity: Severity::Must,
        // The inventory reads the file's exports; it calls no routine.
        entry_points: &[],
        stage: Stage::Library,
        since: Profile::Draft2014,
        real: None,
        run: Run::Worker(inventory_complete),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.inventory.no_unknown_ompd_symbols",
        requirements: &["OMPD-GEN-001", "OMPD-GEN-002"],
        summary: "the library exports no ompd_* symbol outside its API generation's list (names a debugger might mistake for interface routines)",
        severity: Severity::Should,
        // The inventory reads the file's exports; it calls no routine.
        entry_points: &[],
        stage: Stage::Library,
        since: Profile::Draft2014,
        real: None,
        run: Run::Worker(inventory_no_unknown),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.api_version.known_value",
        requirements: &["OMPD-INIT-001", "OMPD-INIT-002", "OMPD-INIT-004", "OMPD-GEN-005"],
        summary: "ompd_get_api_version works before initialize and reports a known OMPD API version",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetApiVersion],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(api_version_known),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.api_version.stable",
        requirements: &["OMPD-INIT-005"],
        summary: "repeated ompd_get_api_version calls return the same value",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetApiVersion],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(api_version_stable),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.version_string.static_library_memory",
        requirements: &["OMPD-INIT-010", "OMPD-INIT-011", "OMPD-OWN-001"],
        summary: "ompd_get_version_string works before initialize and returns a non-empty string in the library's own static memory",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetVersionString],
        stage: Stage::Library,
        since: Profile::Tr2,
        real: None,
        run: Run::Worker(version_string_static),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.finalize.before_initialize",
        requirements: &["OMPD-INIT-031"],
        summary: "ompd_finalize before any ompd_initialize returns ompd_rc_unsupported (6.0 states it; earlier text is silent)",
        severity: Severity::MustFrom(Profile::V6_0),
        entry_points: &[EntryPoint::Finalize],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(finalize_before_initialize),
        ..Check::TARGET
    },
];

/// Checks of this family that initialize and finalize the library, after [`QUERIES`].
pub static INITIALIZE: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "lib.initialize.unsupported_version",
        requirements: &["OMPD-INIT-022"],
        summary: "ompd_initialize refuses API versions the library cannot provide, preferably with ompd_rc_unsupported",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Initialize],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(initialize_unsupported),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.initialize.null_callbacks",
        requirements: &["OMPD-INIT-020"],
        summary: "ompd_initialize with a NULL callback table returns ompd_rc_bad_input",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Initialize],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(initialize_null),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.initialize.supported_version",
        requirements: &["OMPD-INIT-021", "OMPD-INIT-024", "OMPD-CB-003"],
        summary: "ompd_initialize with the reported API version succeeds, using only context-free callbacks",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Initialize, EntryPoint::GetApiVersion],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(initialize_supported),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.version_queries.no_callbacks",
        requirements: &["OMPD-CB-002", "OMPD-INIT-001", "OMPD-INIT-010"],
        summary: "the version queries invoke no callback, also once the library holds a callback table (after a successful ompd_initialize)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetApiVersion, EntryPoint::GetVersionString],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(version_queries_no_callbacks),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.finalize.after_initialize",
        requirements: &["OMPD-INIT-030"],
        summary: "ompd_finalize after a successful ompd_initialize returns ok",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Finalize],
        stage: Stage::Library,
        real: None,
        run: Run::Worker(finalize_ok),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.finalize.no_callbacks_after",
        requirements: &["OMPD-INIT-033"],
        summary: "after ompd_finalize answered ok, the library makes no callback (the version queries and a second ompd_finalize are called to give it the chance)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Finalize, EntryPoint::GetApiVersion, EntryPoint::Initialize],
        stage: Stage::Library,
        since: Profile::Tr2,
        real: None,
        run: Run::Worker(no_callbacks_after_finalize),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "lib.print_string.null_not_called",
        requirements: &["OMPD-CB-012"],
        summary: "6.0: initialized with a callback table whose print_string is NULL, the library never calls it (initialize, the version queries, finalize)",
        severity: Severity::Must,
        entry_points: &[EntryPoint::Initialize, EntryPoint::GetApiVersion, EntryPoint::Finalize],
        stage: Stage::Library,
        since: Profile::V6_0,
        real: None,
        run: Run::Worker(null_print_string),
        ..Check::TARGET
    },
];

/// The target-stage check of the family: the API version against the runtime's own.
pub static RUNTIME_VERSION: &[Check] = &[Check {
    at: crate::here!(),
    id: "lib.api_version.matches_runtime",
    requirements: &["OMPD-INIT-003"],
    summary: "on the runtime the library ships with, ompd_get_api_version equals the runtime's OpenMP version (__kmp_openmp_version, what its memory shows of _OPENMP); 6.0 states it, earlier texts leave it open (AMBIG-19)",
    severity: Severity::MustFrom(Profile::V6_0),
    entry_points: &[EntryPoint::GetApiVersion],
    real: Some(&[]),
    run: Run::Worker(matches_runtime),
    ..Check::TARGET
}];

/// The prefix of the name of a runtime the user gives the run (`ompd-conform run --runtime`):
/// the runtime the libraries under test ship with.
pub const OWN_RUNTIME: &str = "own-";

/// True when the target's runtime (its name) is the one `library` ships with: a vendor cache
/// runtime of the library's own name (the stripped system build of it included), or one the
/// user gave as the libraries' own ([`OWN_RUNTIME`]).
fn ships_with(runtime: &str, library: &str) -> bool {
    runtime.starts_with(OWN_RUNTIME) || runtime.trim_start_matches("system-") == library
}

/// The runtime symbol holding the runtime's OpenMP version (`llvm-kmp-model.md`).
const RUNTIME_VERSION_SYMBOL: &str = "__kmp_openmp_version";

/// The runtime's OpenMP version (yyyymm), from [`RUNTIME_VERSION_SYMBOL`], or why it cannot be
/// read.
pub(crate) fn runtime_openmp_version(
    source: &dyn ompd_serve::source::Source,
) -> Result<i64, String> {
    let addr = source
        .symbol(RUNTIME_VERSION_SYMBOL, None)
        .map_err(|e| format!("{e:?}"))?;
    let bytes = source.read(addr, 4)?;
    Ok(source.arch().decode_signed(&bytes))
}

fn matches_runtime(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let Some(runtime) = ctx.runtime else {
        return Verdict::skip(
            "a simulated runtime (or one the harness did not start) ships with no library",
        );
    };
    if !ships_with(runtime, ctx.library) {
        return Verdict::skip(format!(
            "the target runs {runtime}, not the runtime {} ships with",
            ctx.library
        ));
    }
    let Some(Ok(api)) = ctx.setup.api_version.clone() else {
        return Verdict::skip("no API version (lib.api_version.known_value judges that)");
    };
    let Ok(version) = runtime_openmp_version(ctx.target().source()) else {
        return Verdict::skip(format!(
            "the runtime's {RUNTIME_VERSION_SYMBOL} cannot be read"
        ));
    };
    let mut j = Judge::new(ctx, format!("{version}, the runtime's OpenMP version"));
    j.expect(api == version, || format!("API version {api}"));
    j.verdict()
}

/// The exported `ompd_*` names of the library file and the profile's list.
fn inventory(ctx: &Ctx) -> Result<(Vec<String>, Vec<&'static str>), Verdict> {
    let info = ompd_loader::inspect::inspect(&ctx.lib.path)
        .map_err(|e| Verdict::harness_error(e.to_string()))?;
    let wanted = ctx.profile.entry_points().into_iter();
    Ok((
        info.exported_ompd,
        wanted.map(ompd_abi::EntryPoint::name).collect(),
    ))
}

fn inventory_complete(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let (exported, wanted) = match inventory(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        format!("the {} entry points of {}", wanted.len(), ctx.profile),
    );
    for name in wanted {
        j.expect(exported.iter().any(|e| e == name), || {
            format!("{name} is not exported")
        });
    }
    j.verdict()
}

fn inventory_no_unknown(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let (exported, wanted) = match inventory(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, format!("only {} entry points", ctx.profile));
    for name in &exported {
        j.expect(wanted.contains(&name.as_str()), || {
            format!(
                "{name} is exported but is not among the {} entry points",
                ctx.profile
            )
        });
    }
    j.verdict()
}

fn finalize_before_initialize(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "unsupported");
    expect_rc(
        &mut j,
        "ompd_finalize before ompd_initialize",
        ctx.lib.finalize(),
        Rc::UNSUPPORTED,
        &[],
    );
    j.verdict()
}

fn api_version_known(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(
        ctx,
        "ok with one of 201811, 202011, 202111, 202411; NULL out-parameter gives bad_input",
    );
    match ctx.lib.get_api_version() {
        Ok(v) => j.expect(api_version::KNOWN.contains(&v), || format!("reported {v}")),
        Err(e) => j.fail(format!("ompd_get_api_version: {e}")),
    }
    expect_rc(
        &mut j,
        "NULL version",
        ctx.lib.get_api_version_null(),
        Rc::BAD_INPUT,
        &[],
    );
    j.verdict()
}

fn api_version_stable(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "the same value on every call");
    let v: Vec<_> = (0..3).map(|_| ctx.lib.get_api_version()).collect();
    j.expect(v.windows(2).all(|w| w[0] == w[1]), || format!("{v:?}"));
    j.verdict()
}

fn version_string_static(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "ok; non-empty; inside the library file's mapping; not an alloc_memory block; same text each call");
    let first = ctx.lib.get_version_string();
    match &first {
        Ok(s) => {
            j.expect(!s.text.is_empty(), || "empty string".into());
            let lib = ctx.lib.path.canonicalize().unwrap_or(ctx.lib.path.clone());
            let in_lib = std::path::Path::new(&s.mapping)
                .canonicalize()
                .map(|p| p == lib)
                .unwrap_or(false);
            j.expect(in_lib, || {
                format!(
                    "string lives in mapping {:?}, not the library file",
                    s.mapping
                )
            });
            j.expect(!s.is_tool_block, || {
                "string is an alloc_memory block".into()
            });
            let again = ctx.lib.get_version_string();
            j.expect(
                again.as_ref().map(|a| a.text == s.text).unwrap_or(false),
                || format!("second call gave {again:?}"),
            );
        }
        Err(e) => j.fail(format!("ompd_get_version_string: {e}")),
    }
    j.verdict()
}

/// Runs after `lib.initialize.supported_version`: a library that holds a table could call it.
fn version_queries_no_callbacks(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "no callback invoked");
    let mark = callbacks::ledger().mark();
    let _ = ctx.lib.get_api_version();
    let _ = ctx.lib.get_version_string();
    let l = callbacks::ledger();
    let d = l.since(mark);
    j.expect(d.events.is_empty(), || {
        format!("{} callbacks, first {:?}", d.events.len(), d.events.first())
    });
    j.verdict()
}

/// Runs after `lib.finalize.after_initialize`: every callback since that finalize is a
/// violation the ledger recorded ([`ompd_serve::ledger::Violation::AfterFinalize`]).
fn no_callbacks_after_finalize(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    if ctx.profile < Profile::V5_0 && !callbacks::ledger().finalized() {
        // The checks that initialize and finalize the others judge 5.x requirements: a TR
        // library goes through its own lifecycle here, judged only by the skip below.
        if ctx.lib.tr_initialize().is_ok() {
            let _ = ctx.lib.finalize();
        }
    }
    if !callbacks::ledger().finalized() {
        return Verdict::skip("ompd_finalize did not answer ok: the library was never finalized");
    }
    let mut j = Judge::new(ctx, "no callback after ompd_finalize");
    let _ = ctx.lib.get_api_version();
    let _ = ctx.lib.get_version_string();
    let _ = ctx.lib.finalize();
    j.holds();
    for v in callbacks::ledger().violations() {
        if v.judged_by() == "lib.finalize.no_callbacks_after" {
            j.fail(format!("{v:?}"));
        }
    }
    j.verdict()
}

/// OpenMP 6.0 §40.5: a tool may pass no `print_string`. Runs last in the family, after
/// `ompd_finalize`: the library is initialized again with such a table and given the calls it
/// can make without a target. A call through the NULL pointer crashes the worker, which is the
/// finding.
fn null_print_string(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let version = match ctx.lib.get_api_version() {
        Ok(v) => v,
        Err(e) => return Verdict::skip(format!("no API version to initialize with: {e}")),
    };
    let mut j = Judge::new(ctx, "ok, and no call through the NULL print_string");
    match ctx
        .lib
        .initialize_with(version, callbacks::table_without_print())
    {
        Ok(()) => j.holds(),
        Err(e) => j.fail(format!(
            "ompd_initialize({version}) with print_string NULL: {e}"
        )),
    }
    let _ = ctx.lib.get_api_version();
    let _ = ctx.lib.get_version_string();
    let _ = ctx.lib.finalize();
    j.verdict()
}

fn initialize_unsupported(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(
        ctx,
        "unsupported for versions 0, -1, 199999, 999912 (other non-ok codes warn)",
    );
    for v in [0, -1, 199999, 999912] {
        let got = ctx.lib.initialize(v);
        match got {
            Ok(()) => j.fail(format!("ompd_initialize({v}) returned ok")),
            Err(Fail::Rc(rc)) if rc == Rc::UNSUPPORTED => j.holds(),
            Err(Fail::Rc(rc)) => j.allowed("OMPD-INIT-022", format!("ompd_initialize({v}): {rc}")),
            Err(e) => j.fail(format!("ompd_initialize({v}): {e}")),
        }
    }
    j.verdict()
}

fn initialize_null(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "bad_input");
    let version = ctx.lib.get_api_version().unwrap_or(api_version::V5_0);
    expect_rc(
        &mut j,
        "NULL callbacks",
        ctx.lib.initialize_null(version),
        Rc::BAD_INPUT,
        &[],
    );
    j.verdict()
}

fn initialize_supported(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(
        ctx,
        "ok; only alloc_memory, free_memory or print_string called",
    );
    let version = match ctx.lib.get_api_version() {
        Ok(v) => v,
        Err(e) => return Verdict::skip(format!("no API version to initialize with: {e}")),
    };
    let mark = callbacks::ledger().mark();
    let r = ctx.lib.initialize(version);
    j.expect(r.is_ok(), || {
        format!("ompd_initialize({version}): {}", crate::describe(&r))
    });
    let l = callbacks::ledger();
    for (_, e) in l.since(mark).events {
        use ompd_serve::ledger::Event;
        let context_free = matches!(
            e,
            Event::AllocMemory { .. } | Event::FreeMemory { .. } | Event::PrintString { .. }
        );
        j.expect(context_free, || {
            format!("called a target callback during initialize: {e:?}")
        });
    }
    j.verdict()
}

fn finalize_ok(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mut j = Judge::new(ctx, "ok");
    let r = ctx.lib.finalize();
    j.expect(r.is_ok(), || {
        format!("ompd_finalize: {}", crate::describe(&r))
    });
    j.verdict()
}
