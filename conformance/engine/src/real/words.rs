//! The state word a kmp runtime keeps for each OpenMP thread, read by the harness itself: what
//! the runtime's memory shows, which a library that reads it faithfully answers.
//!
//! A fixture knows the state its program's point implies (a thread in `taskwait` waits at a
//! taskwait), not the state its runtime keeps: the runtime may keep another one there (LLVM's and
//! Intel's leave a thread waiting in taskwait in `ompt_state_work_parallel`). A library can
//! answer only what the runtime's memory shows, so that is what its state checks judge it
//! against, and the runtime's own check judges the word against the program.
//!
//! The word is found as every kmp-family library finds it: the thread's gtid from its
//! thread-local `__kmp_gtid`, its descriptor from `__kmp_threads[gtid]`, and the field from the
//! runtime's self-description (`ompd_access__*`, `ompd_sizeof__*`). Every read is bounded; a
//! runtime without that description gives `Err`, saying what is missing.

use super::{Fact, Lifted};
use ompd_abi::thread_id_kind;
use ompd_checks::known::StateWord;
use ompd_serve::source::{Source, SymbolError};
use sim_target::model::NativeId;

/// The most gtids a descriptor array is read at.
const MAX_GTID: u64 = 1 << 16;

/// The state word of each thread of `threads`, in their order.
pub fn state_words(source: &dyn Source, threads: &[NativeId]) -> Result<Vec<i64>, String> {
    let field = StateField::described(source)?;
    let pointer = u64::from(source.arch().pointer);
    let table = word(source, symbol(source, "__kmp_threads", None)?, pointer)?;
    threads
        .iter()
        .map(|n| {
            let gtid = gtid(source, n)?;
            let beyond = || format!("thread {}: an address beyond 64 bits", n.lwp);
            let slot = table.checked_add(pointer * gtid).ok_or_else(beyond)?;
            let info = word(source, slot, pointer)?;
            if info == 0 {
                return Err(format!("thread {}: __kmp_threads[{gtid}] is NULL", n.lwp));
            }
            let at = info.checked_add(field.offset).ok_or_else(beyond)?;
            Ok(source.arch().decode_signed(&source.read(at, field.size)?))
        })
        .collect()
}

/// Where a descriptor keeps its state word: the offset from the descriptor and the width.
struct StateField {
    offset: u64,
    size: u64,
}

impl StateField {
    /// The field, from the runtime's self-description.
    fn described(source: &dyn Source) -> Result<StateField, String> {
        // `kmp_info_t` is a union whose `th` is at offset 0 where the runtime does not say.
        let th = layout(source, "ompd_access__kmp_info_t__th").or_else(|e| match e {
            Absent::NotDefined => Ok(0),
            other => Err(other),
        });
        let offset = [
            th,
            layout(source, "ompd_access__kmp_base_info_t__ompt_thread_info"),
            layout(source, "ompd_access__ompt_thread_info_t__state"),
        ]
        .into_iter()
        .try_fold(0u64, |sum, w| Ok::<u64, Absent>(sum.saturating_add(w?)))
        .map_err(Absent::why)?;
        let size = layout(source, "ompd_sizeof__ompt_thread_info_t__state").map_err(Absent::why)?;
        match size {
            1..=8 => Ok(StateField { offset, size }),
            0 => Err(
                "the runtime leaves its layout words zero (it describes its layout only \
                      with OMP_DEBUG=enabled)"
                    .into(),
            ),
            n => Err(format!("ompd_sizeof__ompt_thread_info_t__state is {n}")),
        }
    }
}

/// Why a layout word could not be had.
enum Absent {
    NotDefined,
    Unreadable(String),
}

impl Absent {
    fn why(self) -> String {
        match self {
            Absent::NotDefined => "the runtime does not describe where it keeps a thread's \
                                   state (no ompd_access__/ompd_sizeof__ word for it)"
                .into(),
            Absent::Unreadable(e) => e,
        }
    }
}

/// A layout word of the runtime's self-description (a 64-bit global).
fn layout(source: &dyn Source, name: &str) -> Result<u64, Absent> {
    match source.symbol(name, None) {
        Ok(addr) => word(source, addr, 8).map_err(Absent::Unreadable),
        Err(SymbolError::NotFound) => Err(Absent::NotDefined),
        Err(e) => Err(Absent::Unreadable(format!("{name}: {e}"))),
    }
}

/// The address of symbol `name` (of thread `thread` for a thread-local one).
fn symbol(source: &dyn Source, name: &str, thread: Option<usize>) -> Result<u64, String> {
    source
        .symbol(name, thread)
        .map_err(|e| format!("{name}: {e}"))
}

/// A `len`-byte unsigned word at `addr`, in the target's byte order.
fn word(source: &dyn Source, addr: u64, len: u64) -> Result<u64, String> {
    Ok(source.arch().decode(&source.read(addr, len)?))
}

/// The gtid thread `n` keeps in its `__kmp_gtid`.
fn gtid(source: &dyn Source, n: &NativeId) -> Result<u64, String> {
    let lwp = source.arch().encode(u64::from(n.lwp), 4);
    let index = source
        .find_thread(thread_id_kind::LWP, &lwp)
        .ok_or_else(|| format!("thread {} is not among the target's threads", n.lwp))?;
    let at = symbol(source, "__kmp_gtid", Some(index))?;
    let gtid = source.arch().decode_signed(&source.read(at, 4)?);
    u64::try_from(gtid)
        .ok()
        .filter(|g| *g < MAX_GTID)
        .ok_or_else(|| format!("thread {}: __kmp_gtid is {gtid}", n.lwp))
}

/// Reads the state words of a lifted target's threads into it: each thread's state becomes the
/// word its runtime keeps, and the state its program's point implies goes to
/// [`Known::state_words`]. Where the words cannot be read, the states are not known. Without
/// state tracking nothing changes: a library's answer is then `needs_state_tracking`, whatever
/// the words say. The words are read even where the states are not known for another reason
/// (a wait id the fixture cannot record): the runtime's own check needs no wait id.
pub fn read_into(source: &dyn Source, lifted: &mut Lifted) {
    let (model, known) = (&mut lifted.model, &mut lifted.known);
    if !known.has(Fact::Threads) || !model.debug_enabled() {
        known.missing(
            Fact::StateWords,
            "the runtime's state words are read where the threads are known and their states \
             tracked (OMP_DEBUG=enabled)",
        );
        return;
    }
    let natives: Vec<NativeId> = model.threads.iter().map(|t| t.native).collect();
    match state_words(source, &natives) {
        Ok(words) => {
            known.state_words = (model.threads.iter_mut().zip(words).enumerate())
                .map(|(thread, (t, word))| {
                    let program = std::mem::replace(&mut t.state, word);
                    StateWord {
                        thread,
                        program,
                        word,
                    }
                })
                .collect();
            known.insert(Fact::StateWords);
        }
        Err(why) => {
            let why = format!("the harness cannot read the runtime's state words: {why}");
            if known.has(Fact::States) {
                known.missing(Fact::States, why.clone());
            }
            known.missing(Fact::StateWords, why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::state_words;
    use ompd_serve::arch::Arch;
    use sim_target::image::lower;
    use sim_target::layout::Policy;
    use sim_target::model::{self, NativeId};

    /// The reader finds in a simulated image exactly the states its model gave, on every arch
    /// and layout: it reads what a runtime's self-description says, not one layout.
    #[test]
    fn the_words_of_a_simulated_runtime_are_its_models_states() {
        let policies = [Policy::Natural, Policy::Packed, Policy::Random(7)];
        // A runtime in scan mode keeps no thread-local gtid to find a thread's descriptor by;
        // the real runtimes these words are read on (Linux builds) all keep one.
        let tls = |s: &model::Scenario| s.model.gtid_mode == model::GtidMode::Tls;
        for s in model::known_names().filter_map(model::scenario).filter(tls) {
            let natives: Vec<NativeId> = s.model.threads.iter().map(|t| t.native).collect();
            let states: Vec<i64> = s.model.threads.iter().map(|t| t.state).collect();
            for arch in Arch::ALL {
                for policy in policies.into_iter().filter(|p| p.supports(arch)) {
                    let image = lower(&s.model, arch, policy).unwrap();
                    let words = state_words(&image, &natives);
                    assert_eq!(words.as_ref(), Ok(&states), "{} {arch} {policy}", s.name);
                }
            }
        }
    }

    /// A wild descriptor array, a runtime that does not describe where it keeps the state, or
    /// one that leaves that description zero, gives a reason, not a guess (nor a panic).
    #[test]
    fn an_undescribed_state_field_is_a_reason() {
        let s = model::scenario("nested-tasks").unwrap();
        let natives: Vec<NativeId> = s.model.threads.iter().map(|t| t.native).collect();
        let mut image = lower(&s.model, Arch::LP64_LE, Policy::Natural).unwrap();
        let table = image.symbols["__kmp_threads"];
        let good = image.memory.read(table, 8).unwrap().to_vec();
        image
            .memory
            .write(table, &(u64::MAX - 3).to_le_bytes())
            .unwrap();
        assert!(
            state_words(&image, &natives).is_err(),
            "a wild descriptor array"
        );
        image.memory.write(table, &good).unwrap();
        let size = image.symbols["ompd_sizeof__ompt_thread_info_t__state"];
        image.memory.write(size, &[0; 8]).unwrap();
        let why = state_words(&image, &natives).unwrap_err();
        assert!(why.contains("layout words zero"), "{why}");
        image
            .symbols
            .remove("ompd_access__ompt_thread_info_t__state");
        let why = state_words(&image, &natives).unwrap_err();
        assert!(why.contains("does not describe"), "{why}");
    }
}
