//! The forwarding routines: each hands its arguments, as words, to the mutant's hook first
//! (which may answer in its place or change them), calls the inner library's routine of the
//! same name, and lets the hook change what came back. [`forward!`] defines them; the cdylib
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
            let mut w: Vec<u64> = vec![$(Word::word($a)),*];
            if let Some(rc) = $crate::__private::before(ep, &mut w) {
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
            $crate::__private::after(ep, &w, rc)
        }
        const _: $crate::abi::$($ty)::+ = $sym;
    )*};
}
