//! Cross-check of `ompd_abi` against the system `omp-tools.h` (LLVM 19).
//!
//! Runs the program compiled from `c/abi_check.c` and requires every size, offset and enumerator
//! value it prints to equal the Rust definition, and the header's enumerator sets to equal the
//! Rust sets minus exactly the OpenMP 6.0 additions that LLVM 19 does not have.

use std::collections::{BTreeMap, BTreeSet};
use std::mem::{align_of, offset_of, size_of};
use std::process::Command;

use ompd_abi::{
    self as abi, frame_flag, state, Address, Callbacks, DeviceTypeSizes, FrameInfo, OmpdAddr,
    OmpdDevice, OmpdIcvId, OmpdSeg, OmpdSize, OmpdThreadIdKind, OmpdWaitId, OmpdWord, Rc, Scope,
};

/// Lines `abi_check` prints before its `end.lines` trailer.
const EXPECTED_LINES: usize = 120;

/// `ompt_state_t` enumerators of `state::ALL` that only OpenMP 6.0 defines.
const STATES_6_0_ONLY: &[(i64, &str)] = &[
    (0x003, "ompt_state_work_free_agent"),
    (0x004, "ompt_state_work_induction"),
];

/// Every `Rc` constant with its header spelling.
const RETURN_CODES: &[(Rc, &str)] = &[
    (Rc::OK, "ompd_rc_ok"),
    (Rc::UNAVAILABLE, "ompd_rc_unavailable"),
    (Rc::STALE_HANDLE, "ompd_rc_stale_handle"),
    (Rc::BAD_INPUT, "ompd_rc_bad_input"),
    (Rc::ERROR, "ompd_rc_error"),
    (Rc::UNSUPPORTED, "ompd_rc_unsupported"),
    (Rc::NEEDS_STATE_TRACKING, "ompd_rc_needs_state_tracking"),
    (Rc::INCOMPATIBLE, "ompd_rc_incompatible"),
    (Rc::DEVICE_READ_ERROR, "ompd_rc_device_read_error"),
    (Rc::DEVICE_WRITE_ERROR, "ompd_rc_device_write_error"),
    (Rc::NOMEM, "ompd_rc_nomem"),
    (Rc::INCOMPLETE, "ompd_rc_incomplete"),
    (Rc::CALLBACK_ERROR, "ompd_rc_callback_error"),
    (Rc::INCOMPATIBLE_HANDLE, "ompd_rc_incompatible_handle"),
];

/// `Rc` constants that only OpenMP 6.0 defines.
const RETURN_CODES_6_0_ONLY: &[&str] = &["ompd_rc_incompatible_handle"];

/// Every `Scope` constant with its header spelling.
const SCOPES: &[(Scope, &str)] = &[
    (Scope::GLOBAL, "ompd_scope_global"),
    (Scope::ADDRESS_SPACE, "ompd_scope_address_space"),
    (Scope::THREAD, "ompd_scope_thread"),
    (Scope::PARALLEL, "ompd_scope_parallel"),
    (Scope::IMPLICIT_TASK, "ompd_scope_implicit_task"),
    (Scope::TASK, "ompd_scope_task"),
    (Scope::TEAMS, "ompd_scope_teams"),
    (Scope::TARGET, "ompd_scope_target"),
];

/// `Scope` constants that only OpenMP 6.0 defines.
const SCOPES_6_0_ONLY: &[&str] = &["ompd_scope_teams", "ompd_scope_target"];

/// Every frame flag with its header spelling.
const FRAME_FLAGS: &[(i64, &str)] = &[
    (frame_flag::RUNTIME, "ompt_frame_runtime"),
    (frame_flag::APPLICATION, "ompt_frame_application"),
    (frame_flag::CFA, "ompt_frame_cfa"),
    (frame_flag::FRAMEPOINTER, "ompt_frame_framepointer"),
    (frame_flag::STACKADDRESS, "ompt_frame_stackaddress"),
];

/// The output of `abi_check`, by name, with the `end.lines` trailer checked and removed.
fn header_facts() -> BTreeMap<String, i64> {
    let exe = c_fixtures::abi_check_exe();
    let output = Command::new(exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe}: {e}"));
    assert!(
        output.status.success(),
        "{exe} failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("abi_check prints UTF-8");
    let mut lines: Vec<&str> = stdout.lines().collect();
    let trailer = lines.pop().expect("abi_check printed nothing");
    let printed: usize = trailer
        .strip_prefix("end.lines ")
        .unwrap_or_else(|| panic!("last line is not the end.lines trailer: {trailer:?}"))
        .parse()
        .expect("end.lines count");
    assert_eq!(
        printed,
        lines.len(),
        "abi_check's own line count disagrees with its output"
    );
    assert_eq!(
        lines.len(),
        EXPECTED_LINES,
        "abi_check printed an unexpected number of lines"
    );

    let mut facts = BTreeMap::new();
    for line in lines {
        let (name, value) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("malformed line {line:?}"));
        let value: i64 = value
            .parse()
            .unwrap_or_else(|e| panic!("bad value in {line:?}: {e}"));
        assert!(
            facts.insert(name.to_owned(), value).is_none(),
            "duplicate line for {name}"
        );
    }
    facts
}

fn as_i64(n: usize) -> i64 {
    i64::try_from(n).expect("fits in i64")
}

/// True when `T` can hold -1.
fn is_signed<T: TryFrom<i8>>() -> bool {
    T::try_from(-1i8).is_ok()
}

/// The facts under `prefix` (`enum.`, `foreach_state.`, ...), keyed by the rest of the name.
fn with_prefix<'a>(facts: &'a BTreeMap<String, i64>, prefix: &str) -> BTreeMap<&'a str, i64> {
    facts
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|rest| (rest, *v)))
        .collect()
}

/// Everything the Rust side says the LLVM 19 header must print.
fn rust_facts() -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    let mut put = |name: String, value: i64| {
        assert!(
            m.insert(name.clone(), value).is_none(),
            "expected twice: {name}"
        );
    };

    macro_rules! layout {
        ($c:literal, $rust:ty, [$($field:ident),* $(,)?]) => {{
            put(format!("sizeof.{}", $c), as_i64(size_of::<$rust>()));
            put(format!("alignof.{}", $c), as_i64(align_of::<$rust>()));
            $(put(
                format!("offsetof.{}.{}", $c, stringify!($field)),
                as_i64(offset_of!($rust, $field)),
            );)*
        }};
    }
    layout!("ompd_address_t", Address, [segment, address]);
    layout!("ompd_frame_info_t", FrameInfo, [frame_address, frame_flag]);
    layout!(
        "ompd_device_type_sizes_t",
        DeviceTypeSizes,
        [
            sizeof_char,
            sizeof_short,
            sizeof_int,
            sizeof_long,
            sizeof_long_long,
            sizeof_pointer
        ]
    );
    layout!(
        "ompd_callbacks_t",
        Callbacks,
        [
            alloc_memory,
            free_memory,
            print_string,
            sizeof_type,
            symbol_addr_lookup,
            read_memory,
            write_memory,
            read_string,
            device_to_host,
            host_to_device,
            get_thread_context_for_thread_id,
        ]
    );
    layout!("ompd_rc_t", Rc, []);
    layout!("ompd_scope_t", Scope, []);

    macro_rules! scalar {
        ($c:literal, $rust:ty) => {{
            put(format!("sizeof.{}", $c), as_i64(size_of::<$rust>()));
            put(format!("signed.{}", $c), i64::from(is_signed::<$rust>()));
        }};
    }
    scalar!("ompd_word_t", OmpdWord);
    scalar!("ompd_addr_t", OmpdAddr);
    scalar!("ompd_seg_t", OmpdSeg);
    scalar!("ompd_size_t", OmpdSize);
    scalar!("ompd_wait_id_t", OmpdWaitId);
    scalar!("ompd_device_t", OmpdDevice);
    scalar!("ompd_thread_id_t", OmpdThreadIdKind);
    scalar!("ompd_icv_id_t", OmpdIcvId);

    for (rc, name) in RETURN_CODES
        .iter()
        .filter(|(_, n)| !RETURN_CODES_6_0_ONLY.contains(n))
    {
        put(format!("enum.{name}"), i64::from(rc.0));
    }
    for (scope, name) in SCOPES.iter().filter(|(_, n)| !SCOPES_6_0_ONLY.contains(n)) {
        put(format!("enum.{name}"), i64::from(scope.0));
    }
    for (value, name) in state::ALL.iter().filter(|s| !STATES_6_0_ONLY.contains(*s)) {
        put(format!("enum.{name}"), *value);
        put(format!("foreach_state.{name}"), *value);
    }
    put("enum.ompt_state_undefined".into(), state::UNDEFINED);
    put(
        "foreach_state.ompt_state_undefined".into(),
        state::UNDEFINED,
    );
    for (value, name) in FRAME_FLAGS {
        put(format!("enum.{name}"), *value);
    }
    put(
        "define.ompd_segment_none".into(),
        i64::try_from(abi::SEGMENT_NONE).expect("small"),
    );
    m
}

#[test]
fn the_header_used_is_reported() {
    let header = c_fixtures::omp_tools_header();
    assert!(header.ends_with(".h"), "{header}");
    assert!(std::path::Path::new(header).is_file(), "{header} is gone");
}

#[test]
fn every_header_fact_equals_the_rust_definition() {
    let header = header_facts();
    let rust = rust_facts();
    let mut mismatches = Vec::new();
    for (name, c_value) in &header {
        match rust.get(name) {
            Some(r) if r == c_value => {}
            Some(r) => mismatches.push(format!("{name}: header {c_value}, Rust {r}")),
            None => mismatches.push(format!("{name}: header {c_value}, not in ompd_abi")),
        }
    }
    for (name, r) in &rust {
        if !header.contains_key(name) {
            mismatches.push(format!("{name}: Rust {r}, not printed by the header check"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "omp-tools.h ({}) and ompd_abi disagree:\n  {}",
        c_fixtures::omp_tools_header(),
        mismatches.join("\n  ")
    );
    assert_eq!(rust.len(), EXPECTED_LINES);
}

#[test]
fn struct_layouts_match() {
    let h = header_facts();
    assert_eq!(h["sizeof.ompd_address_t"], as_i64(size_of::<Address>()));
    assert_eq!(
        h["offsetof.ompd_address_t.segment"],
        as_i64(offset_of!(Address, segment))
    );
    assert_eq!(
        h["offsetof.ompd_address_t.address"],
        as_i64(offset_of!(Address, address))
    );
    assert_eq!(
        h["sizeof.ompd_frame_info_t"],
        as_i64(size_of::<FrameInfo>())
    );
    assert_eq!(
        h["sizeof.ompd_device_type_sizes_t"],
        as_i64(size_of::<DeviceTypeSizes>())
    );
    assert_eq!(h["sizeof.ompd_callbacks_t"], as_i64(size_of::<Callbacks>()));
    assert_eq!(
        h["offsetof.ompd_callbacks_t.read_string"],
        as_i64(offset_of!(Callbacks, read_string))
    );
    assert_eq!(
        h["offsetof.ompd_callbacks_t.get_thread_context_for_thread_id"],
        as_i64(offset_of!(Callbacks, get_thread_context_for_thread_id))
    );
    // All 11 slots are printed, each one pointer wide and in order.
    let offsets: Vec<i64> = with_prefix(&h, "offsetof.ompd_callbacks_t.")
        .into_values()
        .collect();
    assert_eq!(offsets.len(), 11);
    let mut sorted = offsets;
    sorted.sort_unstable();
    let ptr = as_i64(size_of::<usize>());
    assert_eq!(sorted, (0..11).map(|i| i * ptr).collect::<Vec<_>>());
}

#[test]
fn return_codes_match_and_incompatible_handle_is_absent() {
    let h = header_facts();
    let header_codes = with_prefix(&h, "enum.ompd_rc_");
    for (rc, name) in RETURN_CODES {
        let short = name.strip_prefix("ompd_rc_").expect("prefix");
        assert_eq!(
            rc.name(),
            Some(short),
            "Rc::name() spells {name} differently"
        );
        if RETURN_CODES_6_0_ONLY.contains(name) {
            assert!(
                !header_codes.contains_key(short),
                "{name} printed by the LLVM 19 check"
            );
        } else {
            assert_eq!(header_codes.get(short), Some(&i64::from(rc.0)), "{name}");
        }
    }
    // The header has exactly codes 0..=12; 13 is the 6.0 ompd_rc_incompatible_handle.
    let values: BTreeSet<i64> = header_codes.values().copied().collect();
    assert_eq!(values, (0..=12).collect());
    assert_eq!(Rc::INCOMPATIBLE_HANDLE.0, 13);
    assert_eq!(
        c_fixtures::header_declares("ompd_rc_incompatible_handle"),
        Some(false)
    );
}

#[test]
fn scopes_match_and_the_6_0_scopes_are_absent() {
    let h = header_facts();
    let header_scopes = with_prefix(&h, "enum.ompd_scope_");
    for (scope, name) in SCOPES {
        let short = name.strip_prefix("ompd_scope_").expect("prefix");
        assert_eq!(
            scope.name(),
            Some(short),
            "Scope::name() spells {name} differently"
        );
        if SCOPES_6_0_ONLY.contains(name) {
            assert!(!header_scopes.contains_key(short));
            assert_eq!(c_fixtures::header_declares(name), Some(false), "{name}");
        } else {
            assert_eq!(
                header_scopes.get(short),
                Some(&i64::from(scope.0)),
                "{name}"
            );
        }
    }
    assert_eq!(header_scopes.len(), SCOPES.len() - SCOPES_6_0_ONLY.len());
}

#[test]
fn the_header_state_set_is_state_all_minus_exactly_the_6_0_states() {
    let h = header_facts();
    // The header's own list (FOREACH_OMPT_STATE), not one written in abi_check.c.
    let header: BTreeSet<(i64, &str)> = with_prefix(&h, "foreach_state.")
        .into_iter()
        .map(|(n, v)| (v, n))
        .collect();
    let rust: BTreeSet<(i64, &str)> = state::ALL.iter().copied().collect();
    assert_eq!(rust.len(), state::ALL.len(), "state::ALL has duplicates");

    let only_in_rust: BTreeSet<_> = rust.difference(&header).copied().collect();
    let only_in_header: BTreeSet<_> = header.difference(&rust).copied().collect();
    assert_eq!(only_in_rust, STATES_6_0_ONLY.iter().copied().collect());
    assert_eq!(
        only_in_header,
        BTreeSet::from([(state::UNDEFINED, "ompt_state_undefined")])
    );

    // Value by name, from the enumerators themselves.
    let enums = with_prefix(&h, "enum.ompt_state_");
    for (value, name) in state::ALL {
        let short = name.strip_prefix("ompt_state_").expect("prefix");
        if STATES_6_0_ONLY.contains(&(*value, name)) {
            assert!(
                !enums.contains_key(short),
                "{name} printed by the LLVM 19 check"
            );
            assert_eq!(c_fixtures::header_declares(name), Some(false), "{name}");
        } else {
            assert_eq!(enums.get(short), Some(value), "{name}");
            assert_eq!(state::name(*value), Some(*name));
        }
    }
    assert_eq!(enums["work_serial"], state::WORK_SERIAL);
    assert_eq!(enums["work_parallel"], state::WORK_PARALLEL);
    assert_eq!(enums["idle"], state::IDLE);
    assert_eq!(enums["overhead"], state::OVERHEAD);
    assert_eq!(enums["undefined"], state::UNDEFINED);
}

#[test]
fn frame_flags_segment_none_and_scalar_sizes_match() {
    let h = header_facts();
    for (value, name) in FRAME_FLAGS {
        assert_eq!(h[&format!("enum.{name}")], *value, "{name}");
    }
    assert_eq!(with_prefix(&h, "enum.ompt_frame_").len(), FRAME_FLAGS.len());
    assert_eq!(
        h["define.ompd_segment_none"],
        i64::try_from(abi::SEGMENT_NONE).expect("small")
    );
    assert_eq!(h["sizeof.ompd_word_t"], as_i64(size_of::<OmpdWord>()));
    assert_eq!(h["signed.ompd_word_t"], 1);
    assert_eq!(h["sizeof.ompd_addr_t"], as_i64(size_of::<OmpdAddr>()));
    assert_eq!(h["sizeof.ompd_seg_t"], as_i64(size_of::<OmpdSeg>()));
    assert_eq!(h["sizeof.ompd_size_t"], as_i64(size_of::<OmpdSize>()));
    assert_eq!(h["sizeof.ompd_wait_id_t"], as_i64(size_of::<OmpdWaitId>()));
    assert_eq!(h["sizeof.ompd_device_t"], as_i64(size_of::<OmpdDevice>()));
    assert_eq!(
        h["sizeof.ompd_thread_id_t"],
        as_i64(size_of::<OmpdThreadIdKind>())
    );
    assert_eq!(h["sizeof.ompd_icv_id_t"], as_i64(size_of::<OmpdIcvId>()));
}

#[test]
fn the_5_2_entry_points_are_absent_from_the_llvm_19_header() {
    let added = abi::EntryPoint::ALL
        .iter()
        .filter(|e| e.introduced() == abi::Generation::V5_2);
    for e in added {
        assert_eq!(c_fixtures::header_declares(e.name()), Some(false), "{e}");
    }
    // The control probe proves the probing itself works.
    assert_eq!(c_fixtures::header_declares("ompd_rc_ok"), Some(true));
    assert_eq!(c_fixtures::header_declares("not_probed"), None);
}

#[test]
fn the_c_signature_checks_cover_the_35_entry_points_in_header_order() {
    let source = include_str!("../c/abi_check.c");
    let checked: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("ABI_CHECK_ENTRY("))
        .filter_map(|rest| rest.split(',').next())
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect();
    let v5_0: Vec<&str> = abi::Generation::V5_0
        .entry_points()
        .into_iter()
        .map(abi::EntryPoint::name)
        .collect();
    assert_eq!(checked, v5_0);
}

#[test]
fn the_c_signature_checks_reject_an_injected_drift() {
    assert_eq!(c_fixtures::drift_rejected("entry_point"), Some(true));
    assert_eq!(c_fixtures::drift_rejected("callback"), Some(true));
}
