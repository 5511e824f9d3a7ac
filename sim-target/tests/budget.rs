//! The callback budget through the real callback table: a call that makes more target-access
//! callbacks than the cap gets `ompd_rc_error` from the callbacks past it, one violation is
//! recorded for that call, and the next call has a budget of its own. (Its own test binary: the
//! ledger's budget and entry point in flight are process-wide.)

use sim_target::abi::{self, Rc};
use sim_target::arch::Arch;
use sim_target::callbacks::{self, ledger, table, Target, METERED};
use sim_target::image::lower;
use sim_target::layout::Policy;
use sim_target::ledger::{Violation, DEFAULT_CALLBACK_BUDGET};
use sim_target::model;

#[test]
fn metered_callbacks_refuse_past_the_budget() {
    let m = model::scenario("serial").unwrap().model;
    let t = Target::leak(lower(&m, Arch::LP64_LE, Policy::Natural).unwrap());
    let a = abi::Address {
        segment: 0,
        address: t.image().symbol("__kmp_openmp_version").unwrap(),
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
    assert_eq!(ledger().budget(), Some(DEFAULT_CALLBACK_BUDGET));
    assert!(METERED.contains(&"read_memory") && !METERED.contains(&"alloc_memory"));
    ledger().set_budget(Some(2));
    let rcs: Vec<Rc> = {
        let _g = callbacks::enter("ompd_budget_test");
        (0..4).map(|_| read()).collect()
    };
    assert_eq!(rcs, [Rc::OK, Rc::OK, Rc::ERROR, Rc::ERROR]);
    let over: Vec<Violation> = ledger()
        .violations()
        .iter()
        .filter(|v| matches!(v, Violation::BudgetExceeded { .. }))
        .cloned()
        .collect();
    assert_eq!(
        over,
        [Violation::BudgetExceeded {
            site: "ompd_budget_test",
            callback: "read_memory",
            cap: 2
        }]
    );
    let _g = callbacks::enter("ompd_budget_test_2");
    assert_eq!(read(), Rc::OK, "the next call has a budget of its own");
    assert_eq!(ledger().peak_call(), (4, "ompd_budget_test"));
}
