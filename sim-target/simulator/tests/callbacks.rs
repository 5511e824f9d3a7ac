//! The callback table served from simulated images: lookups, reads, thread contexts, the
//! allocation modes, the fault plan and the budget, through the `extern "C"` entries a library
//! calls.

use ompd_abi::{self as abi, AddressSpaceContext, DeviceTypeSizes, Rc, ThreadContext};
use ompd_serve::arch::Arch;
use ompd_serve::callbacks::*;
use ompd_serve::faults::{Census, FaultPlan};
use ompd_serve::ledger::{AllocMode, Event, Violation, POISON};
use sim_target::image::{lower, ServedImage};
use sim_target::{layout::Policy, model};
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

/// The ledger (entry point in flight, budget, fault plan) is process-wide: these tests run one
/// at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `get_thread_context_for_thread_id` for the pthread id of native thread `index` of a 64-bit
/// target.
fn thread_context(t: &Target, index: usize) -> (Rc, *mut ThreadContext) {
    let id = t
        .image()
        .unwrap()
        .thread_id_bytes(index, abi::thread_id_kind::PTHREAD)
        .unwrap();
    let mut tctx = std::ptr::null_mut();
    // SAFETY: valid context, 8-byte id buffer and out-parameter.
    let rc = unsafe {
        table().get_thread_context_for_thread_id.unwrap()(
            t.context(),
            abi::thread_id_kind::PTHREAD,
            8,
            id.as_ptr().cast(),
            &mut tctx,
        )
    };
    (rc, tctx)
}

fn target(arch: Arch) -> &'static Target {
    let m = model::scenario("nested-tasks").unwrap().model;
    Target::leak(lower(&m, arch, Policy::Natural).unwrap())
}

#[test]
fn lookups_and_reads_serve_the_image() {
    let _serial = serial();
    let t = target(Arch::ILP32_BE);
    let _g = enter("test");
    let cb = table();
    let name = c"__kmp_openmp_version";
    let mut addr = abi::Address::default();
    // SAFETY: valid context, name and out-parameter.
    let rc = unsafe {
        cb.symbol_addr_lookup.unwrap()(
            t.context(),
            std::ptr::null_mut(),
            name.as_ptr(),
            &mut addr,
            std::ptr::null(),
        )
    };
    assert_eq!(rc, Rc::OK);
    let mut buf = [0u8; 4];
    // SAFETY: valid context, address and 4-byte buffer.
    let rc = unsafe {
        cb.read_memory.unwrap()(
            t.context(),
            std::ptr::null_mut(),
            &addr,
            4,
            buf.as_mut_ptr().cast(),
        )
    };
    assert_eq!(rc, Rc::OK);
    // SAFETY: in-place conversion of 4 bytes, which the callback supports.
    let rc = unsafe {
        cb.device_to_host.unwrap()(
            t.context(),
            buf.as_ptr().cast(),
            4,
            1,
            buf.as_mut_ptr().cast(),
        )
    };
    assert_eq!(rc, Rc::OK);
    assert_eq!(i32::from_le_bytes(buf), 201611);
}

#[test]
fn substituted_memory_is_served_until_the_guard_drops() {
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let _g = enter("test");
    let a = abi::Address {
        segment: 0,
        address: t.image().unwrap().symbol("__kmp_openmp_version").unwrap(),
    };
    let read = |t: &Target| {
        let mut buf = [0u8; 4];
        // SAFETY: valid context, address and 4-byte buffer.
        let rc = unsafe {
            table().read_memory.unwrap()(
                t.context(),
                std::ptr::null_mut(),
                &a,
                4,
                buf.as_mut_ptr().cast(),
            )
        };
        (rc, i32::from_le_bytes(buf))
    };
    let mut memory = t.image().unwrap().memory.clone();
    memory.write(a.address, &7i32.to_le_bytes()).unwrap();
    {
        let s = t.substitute(memory);
        assert_eq!(read(t), (Rc::OK, 7));
        {
            let _p = s.pause();
            assert_eq!(read(t), (Rc::OK, 201611));
        }
        assert_eq!(read(t), (Rc::OK, 7));
    }
    assert_eq!(read(t), (Rc::OK, 201611));
}

#[test]
fn unknown_contexts_are_refused() {
    let _serial = serial();
    let _g = enter("test");
    let mut sizes = DeviceTypeSizes::default();
    let bogus = 0x1234 as *mut AddressSpaceContext;
    // SAFETY: the callback must not dereference an unknown context.
    let rc = unsafe { table().sizeof_type.unwrap()(bogus, &mut sizes) };
    assert_eq!(rc, Rc::STALE_HANDLE);
    assert!(ledger()
        .violations()
        .iter()
        .any(|v| matches!(v, Violation::UnknownContext { .. })));
}

#[test]
fn thread_contexts_resolve_the_tls_gtid() {
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let _g = enter("test");
    let (rc, mut tctx) = thread_context(t, 2);
    let id = t
        .image()
        .unwrap()
        .thread_id_bytes(2, abi::thread_id_kind::PTHREAD)
        .unwrap();
    assert_eq!(rc, Rc::OK);
    let mut addr = abi::Address::default();
    // SAFETY: valid context, thread context, name and out-parameter.
    let rc = unsafe {
        table().symbol_addr_lookup.unwrap()(
            t.context(),
            tctx,
            c"__kmp_gtid".as_ptr(),
            &mut addr,
            std::ptr::null(),
        )
    };
    assert_eq!(rc, Rc::OK);
    assert_eq!(
        t.image().unwrap().memory.read(addr.address, 4).unwrap(),
        2i32.to_le_bytes()
    );
    // SAFETY: wrong size for the kind.
    let rc = unsafe {
        table().get_thread_context_for_thread_id.unwrap()(
            t.context(),
            0,
            4,
            id.as_ptr().cast(),
            &mut tctx,
        )
    };
    assert_eq!(rc, Rc::BAD_INPUT);
}

#[test]
fn allocation_modes_zero_or_poison_new_blocks() {
    let _serial = serial();
    let _g = enter("test");
    for (mode, byte) in [(AllocMode::Zeroed, 0u8), (AllocMode::Poisoned, POISON)] {
        set_alloc_mode(mode);
        let mut p = std::ptr::null_mut();
        let alloc = table().alloc_memory.unwrap();
        // SAFETY: valid out-parameter.
        assert_eq!(unsafe { alloc(32, &mut p) }, Rc::OK);
        // SAFETY: the block is live and 32 bytes long.
        let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, 32) };
        assert!(bytes.iter().all(|b| *b == byte), "{mode:?}");
        tool_free(p).unwrap();
    }
    set_alloc_mode(AllocMode::default());
}

#[test]
fn allocations_are_tracked_and_double_free_refused() {
    let _serial = serial();
    let _g = enter("test");
    let mut p = std::ptr::null_mut();
    // SAFETY: valid out-parameter.
    assert_eq!(unsafe { table().alloc_memory.unwrap()(8, &mut p) }, Rc::OK);
    assert!(ledger().live_block(p as usize).is_some());
    // SAFETY: freeing a block we allocated, then again (refused, not freed twice).
    assert_eq!(unsafe { table().free_memory.unwrap()(p) }, Rc::OK);
    // SAFETY: see above.
    assert_eq!(unsafe { table().free_memory.unwrap()(p) }, Rc::BAD_INPUT);
}

#[test]
fn zero_width_reads_and_conversions_succeed() {
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let _g = enter("test");
    let a = abi::Address {
        segment: 0,
        address: t.image().unwrap().symbol("__kmp_version_lib_ver").unwrap(),
    };
    let read = table().read_memory.unwrap();
    // SAFETY: a 0-byte read needs no buffer.
    let rc = unsafe {
        read(
            t.context(),
            std::ptr::null_mut(),
            &a,
            0,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, Rc::OK);
    let convert = table().device_to_host.unwrap();
    // SAFETY: a unit-0 conversion touches no memory.
    let rc = unsafe { convert(t.context(), std::ptr::null(), 0, 1, std::ptr::null_mut()) };
    assert_eq!(rc, Rc::OK);
}

/// Reads through the table: `read_string` when `string`, else `read_memory`.
fn read(t: &Target, addr: u64, buf: &mut [u8], string: bool) -> Rc {
    let a = abi::Address {
        segment: 0,
        address: addr,
    };
    let f = if string {
        table().read_string.unwrap()
    } else {
        table().read_memory.unwrap()
    };
    // SAFETY: valid context and address; `buf` has `buf.len()` bytes.
    unsafe {
        f(
            t.context(),
            std::ptr::null_mut(),
            &a,
            buf.len() as u64,
            buf.as_mut_ptr().cast(),
        )
    }
}

fn plan(fault: ompd_serve::faults::Fault) -> FaultGuard {
    set_fault_plan(FaultPlan {
        site: Some("fault-test"),
        fault: Some(fault),
    })
}

#[test]
fn a_fault_plan_breaks_the_kth_read_and_records_it() {
    use ompd_serve::faults::Fault;
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let addr = t.image().unwrap().symbol("__kmp_version_lib_ver").unwrap();
    let _g = enter("fault-test");
    let mut buf = [0u8; 4];
    let guard = plan(Fault::ReadError(2));
    let got: Vec<Rc> = (0..3).map(|_| read(t, addr, &mut buf, false)).collect();
    let census = guard.finish();
    assert_eq!(got, [Rc::OK, Rc::ERROR, Rc::OK]);
    assert_eq!((census.reads, census.target_accesses), (3, 3));
    assert_eq!(census.injected.len(), 1);
    assert!(matches!(
        ledger().events().last(),
        Some(("fault-test", Event::ReadMemory { ok: true, .. }))
    ));
    assert!(ledger().events().iter().any(|(_, e)| matches!(
        e,
        Event::Injected {
            into: "read_memory",
            fault: Fault::ReadError(2),
            rc: 4
        }
    )));
    // Cleared: nothing fails any more.
    assert_eq!(read(t, addr, &mut buf, false), Rc::OK);
}

#[test]
fn short_reads_deliver_half_and_never_a_terminator() {
    use ompd_serve::faults::Fault;
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let _g = enter("fault-test");
    let slot = t.image().unwrap().symbol("ompd_env_block").unwrap();
    let mut word = [0u8; 8];
    assert_eq!(read(t, slot, &mut word, false), Rc::OK);
    let text = u64::from_le_bytes(word);
    let mut full = [0u8; 4096];
    assert_eq!(read(t, text, &mut full, true), Rc::OK);
    let len = full.iter().position(|b| *b == 0).unwrap();
    assert!(len >= 2, "the scenario has a display environment");

    let guard = plan(Fault::ShortRead(1));
    let mut short = [0xEEu8; 4096];
    assert_eq!(read(t, text, &mut short, true), Rc::INCOMPLETE);
    let half = len.div_ceil(2);
    assert_eq!(short[..half], full[..half]);
    assert!(!short[..half].contains(&0), "no terminator delivered");
    assert!(
        short[half..].iter().all(|b| *b == POISON),
        "the rest poisoned"
    );
    drop(guard);

    let _guard = plan(Fault::ShortRead(1));
    let mut prefix = [0xEEu8; 8];
    assert_eq!(read(t, slot, &mut prefix, false), Rc::ERROR);
    assert_eq!(prefix[..4], word[..4]);
    assert_eq!(prefix[4..], [POISON; 4]);
}

#[test]
fn symbol_alloc_conversion_and_context_faults_return_their_codes() {
    use ompd_serve::faults::Fault;
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let _g = enter("fault-test");
    let lookup = |name: &std::ffi::CStr| {
        let mut addr = abi::Address::default();
        // SAFETY: valid context, name and out-parameter.
        unsafe {
            table().symbol_addr_lookup.unwrap()(
                t.context(),
                std::ptr::null_mut(),
                name.as_ptr(),
                &mut addr,
                std::ptr::null(),
            )
        }
    };
    let guard = plan(Fault::MissingSymbol("__kmp_version_lib_ver".into()));
    assert_eq!(lookup(c"__kmp_openmp_version"), Rc::OK);
    assert_eq!(lookup(c"__kmp_version_lib_ver"), Rc::ERROR);
    assert_eq!(lookup(c"__kmp_version_lib_ver"), Rc::ERROR);
    let census = guard.finish();
    assert_eq!(
        census.symbols,
        ["__kmp_openmp_version", "__kmp_version_lib_ver"]
    );
    assert_eq!(census.injected.len(), 2);

    let guard = plan(Fault::AllocFailure(1));
    let mut p = std::ptr::dangling_mut::<c_void>();
    // SAFETY: valid out-parameter.
    let rc = unsafe { table().alloc_memory.unwrap()(8, &mut p) };
    assert_eq!(rc, Rc::NOMEM);
    assert_eq!(p as usize, usize::from_ne_bytes([POISON; 8]), "poisoned");
    drop(guard);

    let guard = plan(Fault::ConversionFailure(1));
    let mut v = [1u8, 2, 3, 4];
    // SAFETY: in-place conversion of 4 bytes.
    let rc = unsafe {
        table().device_to_host.unwrap()(t.context(), v.as_ptr().cast(), 4, 1, v.as_mut_ptr().cast())
    };
    assert_eq!((rc, v), (Rc::ERROR, [POISON; 4]));
    drop(guard);

    let guard = plan(Fault::ThreadContextFailure(1));
    let (rc, tctx) = thread_context(t, 0);
    assert_eq!(
        (rc, tctx as usize),
        (Rc::ERROR, usize::from_ne_bytes([POISON; 8]))
    );
    assert_eq!(guard.finish().thread_contexts, 1);

    let _guard = plan(Fault::StaleHandle(2));
    assert_eq!(lookup(c"__kmp_openmp_version"), Rc::OK);
    assert_eq!(lookup(c"__kmp_openmp_version"), Rc::STALE_HANDLE);
}

#[test]
fn a_dropped_guard_clears_the_plan() {
    use ompd_serve::faults::Fault;
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let addr = t.image().unwrap().symbol("__kmp_version_lib_ver").unwrap();
    let _g = enter("fault-test");
    drop(plan(Fault::ReadError(1)));
    let mut buf = [0u8; 4];
    assert_eq!(read(t, addr, &mut buf, false), Rc::OK);
    assert_eq!(ledger().faults.clear(), Census::default());
}

#[test]
fn metered_callbacks_refuse_past_the_budget() {
    let _serial = serial();
    let t = target(Arch::LP64_LE);
    let a = abi::Address {
        segment: 0,
        address: t.image().unwrap().symbol("__kmp_openmp_version").unwrap(),
    };
    let read = || {
        let mut buf = [0u8; 4];
        // SAFETY: a registered context, a valid address and a 4-byte buffer.
        unsafe {
            table().read_memory.unwrap()(
                t.context(),
                std::ptr::null_mut(),
                &a,
                4,
                buf.as_mut_ptr().cast(),
            )
        }
    };
    assert!(METERED.contains(&"read_memory") && !METERED.contains(&"alloc_memory"));
    let before = ledger().budget();
    let mark = ledger().mark();
    ledger().set_budget(Some(2));
    let rcs: Vec<Rc> = {
        let _g = enter("ompd_budget_test");
        (0..4).map(|_| read()).collect()
    };
    let again = {
        let _g = enter("ompd_budget_test_2");
        read()
    };
    ledger().set_budget(before);
    assert_eq!(rcs, [Rc::OK, Rc::OK, Rc::ERROR, Rc::ERROR]);
    assert_eq!(again, Rc::OK, "the next call has a budget of its own");
    assert_eq!(
        ledger().take_violations_since(mark),
        [Violation::BudgetExceeded {
            site: "ompd_budget_test",
            callback: "read_memory",
            cap: 2
        }]
    );
}
