//! The forwarding routines: each hands its arguments, as words, to the mutant's hook first
//! (which may answer in its place or change them), calls the inner library's routine of the
//! same name, and lets the hook change what came back. The forwarding calls no heap manager
//! while a routine runs (the clean baseline must pass OMPD-MEM-001 like its inner library): the
//! arguments travel in an array on the stack, and what needs the heap (the mutant's name, the
//! inner library, the hooks' tables) is set up by a constructor when the forwarder is loaded.
//! [`forward!`] defines them; the cdylib
//! packages `v5.2/` (the 37 routines of OpenMP 5.2) and `tr2.001/` (the 47 of TR 2.001) invoke
//! it with their routine lists.

/// Defines one exported forwarding routine per row: `symbol = EntryPoint: type (args)`, the type
/// being the routine's function-pointer type in `ompd_abi` (checked against the definition).
#[macro_export]
macro_rules! forward {
    ($($sym:ident = $ep:ident : $($ty:ident)::+ ($($a:ident : $t:ty),*);)*) => {$(
        #[doc = concat!("`", stringify!($sym), "`, forwarded.")]
        #[no_mangle]
        pub extern "C" fn $sym($($a: $t),*) -> $crate::abi::Rc {
            use $crate::__private::Word;
            let ep = $crate::abi::EntryPoint::$ep;
            // On the stack: the forwarding itself calls no heap manager (OMPD-MEM-001).
            let mut words = [$(Word::word($a),)* 0u64];
            let n = words.len() - 1;
            let w = &mut words[..n];
            if let Some(rc) = $crate::__private::before(ep, w) {
                return rc;
            }
            let Some(f) = $crate::__private::routine::<$crate::abi::$($ty)::+>(ep) else {
                return $crate::abi::Rc::UNSUPPORTED;
            };
            #[allow(unused_mut, unused_variables)] // `ompd_finalize` has no argument.
            let mut it = w.iter().copied();
            $(let $a: $t = Word::from_word(it.next().unwrap_or(0));)*
            // SAFETY: the inner routine has this type; the arguments are the tool's, as the
            // hook left them (a hook only substitutes values of the same type).
            let rc = unsafe { f($($a),*) };
            $crate::__private::after(ep, w, rc)
        }
        const _: $crate::abi::$($ty)::+ = $sym;
    )*
        /// Never called: a spare export whose name (as long as `_ZnwmRKSt9nothrow_t`) the
        /// `exports_operator_new` mutant's file patch turns into that global operator new's
        /// (`ompd_mutants::table::file_patch`). A nothrow operator new that always fails.
        #[no_mangle]
        pub extern "C" fn mutant_operator_new(
            _size: usize,
            _nothrow: *const std::ffi::c_void,
        ) -> *mut std::ffi::c_void {
            std::ptr::null_mut()
        }

        /// Runs when the forwarder is loaded: everything the forwarding needs on the heap is
        /// set up before any entry point runs ([`$crate::__private::prepare`]).
        #[used]
        #[link_section = ".init_array"]
        static PREPARE: extern "C" fn() = {
            extern "C" fn prepare() {
                $crate::__private::prepare();
            }
            prepare
        };
    };
}
