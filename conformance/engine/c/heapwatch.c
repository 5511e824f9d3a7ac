/* The heap watch: a shim preloaded (LD_PRELOAD) into the suite's worker processes only.
 *
 * It defines the process heap manager's entry points (the C allocator, the strdup family and
 * every form of the global C++ operator new and delete) and counts a call only when the caller,
 * __builtin_return_address(0), lies in the range the worker armed with ompd_heapwatch_arm (the
 * text of the OMPD library under test). Every call is then served by the allocator the process
 * would have used without the shim: glibc's __libc_* functions for the C ones, the next
 * definition (dlsym RTLD_NEXT, resolved on first use) for the C++ ones. The C functions never
 * call dlsym, so dlsym's own allocations cannot recurse into an unresolved function.
 *
 * The shim allocates nothing itself, takes no lock, and keeps its counters in plain words
 * updated atomically. ompd_heapwatch_kinds names the counters, in the order
 * ompd_heapwatch_read copies them.
 *
 * Limits (documented with the check): a call the library makes as a tail call (a jump, not a
 * call) is attributed to the library's caller and missed; an allocation made by another object
 * on the library's behalf (libstdc++ inside a std::string the library builds out of line, a
 * helper library it ships) is attributed to that object and missed.
 *
 * The signal watch, at the end of the file, counts the calls (from any caller) of the C library's
 * functions that may change a signal's action or a thread's signal mask, so that the worker reads
 * every action again only after one (ompd_heapwatch_signal_changes). The process watch after it
 * counts, likewise, the calls of the functions that may close or replace a descriptor or start a
 * thread (ompd_heapwatch_process_changes), so that the worker probes its descriptors and threads
 * again only after one. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>
#include <wchar.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#define EXPORT __attribute__((visibility("default")))

/* The counters, one per kind, in this order. */
enum {
    K_MALLOC, K_CALLOC, K_REALLOC, K_REALLOCARRAY, K_FREE, K_POSIX_MEMALIGN, K_ALIGNED_ALLOC,
    K_MEMALIGN, K_VALLOC, K_PVALLOC, K_STRDUP, K_STRNDUP, K_WCSDUP, K_NEW, K_NEW_ARRAY,
    K_DELETE, K_DELETE_ARRAY, K_COUNT
};

static const char KINDS[] =
    "malloc\ncalloc\nrealloc\nreallocarray\nfree\nposix_memalign\naligned_alloc\nmemalign\n"
    "valloc\npvalloc\nstrdup\nstrndup\nwcsdup\noperator new\noperator new[]\n"
    "operator delete\noperator delete[]";

static uint64_t counts[K_COUNT];
static uintptr_t watched_lo, watched_hi;

/* Arms the watch on [lo, hi) (lo == hi disarms it). */
EXPORT void ompd_heapwatch_arm(uintptr_t lo, uintptr_t hi) {
    __atomic_store_n(&watched_hi, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watched_lo, lo, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watched_hi, hi, __ATOMIC_SEQ_CST);
}

/* The counter names, one per line, in the order ompd_heapwatch_read copies them. */
EXPORT const char *ompd_heapwatch_kinds(void) { return KINDS; }

/* Copies up to n counters into out; returns how many counters there are. */
EXPORT size_t ompd_heapwatch_read(uint64_t *out, size_t n) {
    for (size_t i = 0; i < n && i < K_COUNT; i++)
        out[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
    return K_COUNT;
}

static inline void note(int kind, void *caller) {
    uintptr_t at = (uintptr_t)caller;
    uintptr_t lo = __atomic_load_n(&watched_lo, __ATOMIC_RELAXED);
    uintptr_t hi = __atomic_load_n(&watched_hi, __ATOMIC_RELAXED);
    if (at >= lo && at < hi)
        __atomic_fetch_add(&counts[kind], 1, __ATOMIC_RELAXED);
}

#define CALLER __builtin_return_address(0)

EXPORT void *malloc(size_t n) { note(K_MALLOC, CALLER); return __libc_malloc(n); }
EXPORT void *calloc(size_t k, size_t n) { note(K_CALLOC, CALLER); return __libc_calloc(k, n); }
EXPORT void *realloc(void *p, size_t n) { note(K_REALLOC, CALLER); return __libc_realloc(p, n); }
EXPORT void free(void *p) { note(K_FREE, CALLER); __libc_free(p); }
EXPORT void *memalign(size_t a, size_t n) { note(K_MEMALIGN, CALLER); return __libc_memalign(a, n); }
EXPORT void *valloc(size_t n) { note(K_VALLOC, CALLER); return __libc_valloc(n); }
EXPORT void *pvalloc(size_t n) { note(K_PVALLOC, CALLER); return __libc_pvalloc(n); }

EXPORT void *reallocarray(void *p, size_t k, size_t n) {
    note(K_REALLOCARRAY, CALLER);
    size_t total;
    if (__builtin_mul_overflow(k, n, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, total);
}

static int valid_alignment(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

EXPORT int posix_memalign(void **out, size_t a, size_t n) {
    note(K_POSIX_MEMALIGN, CALLER);
    if (!valid_alignment(a) || a % sizeof(void *) != 0)
        return EINVAL;
    void *p = __libc_memalign(a, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t a, size_t n) {
    note(K_ALIGNED_ALLOC, CALLER);
    if (!valid_alignment(a)) {
        errno = EINVAL;
        return NULL;
    }
    return __libc_memalign(a, n);
}

static char *copy_of(const char *s, size_t n) {
    char *p = __libc_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

EXPORT char *strdup(const char *s) { note(K_STRDUP, CALLER); return copy_of(s, strlen(s)); }
EXPORT char *__strdup(const char *s) { note(K_STRDUP, CALLER); return copy_of(s, strlen(s)); }
EXPORT char *strndup(const char *s, size_t n) { note(K_STRNDUP, CALLER); return copy_of(s, strnlen(s, n)); }
EXPORT char *__strndup(const char *s, size_t n) { note(K_STRNDUP, CALLER); return copy_of(s, strnlen(s, n)); }

EXPORT wchar_t *wcsdup(const wchar_t *s) {
    note(K_WCSDUP, CALLER);
    size_t bytes = (wcslen(s) + 1) * sizeof(wchar_t);
    wchar_t *p = __libc_malloc(bytes);
    if (p != NULL)
        memcpy(p, s, bytes);
    return p;
}

/* The C++ forms: each resolves the next definition once (a process without the C++ runtime
 * never reaches them: only code linked against it calls them). Without a next definition the
 * allocating forms fall back on the C heap, which is what the default ones use, and the
 * releasing forms on free. */
#define NEXT(type, name, sym)                                                                    \
    static type name(void) {                                                                     \
        static type resolved;                                                                    \
        type f = __atomic_load_n(&resolved, __ATOMIC_ACQUIRE);                                   \
        if (f == NULL) {                                                                         \
            f = (type)dlsym(RTLD_NEXT, sym);                                                     \
            __atomic_store_n(&resolved, f, __ATOMIC_RELEASE);                                    \
        }                                                                                        \
        return f;                                                                                \
    }

typedef void *(*new_fn)(size_t);
typedef void *(*new_x_fn)(size_t, uintptr_t);
typedef void *(*new_xy_fn)(size_t, uintptr_t, uintptr_t);
typedef void (*del_fn)(void *);
typedef void (*del_x_fn)(void *, uintptr_t);
typedef void (*del_xy_fn)(void *, uintptr_t, uintptr_t);

/* Allocating forms: (mangled name, kind, signature, arguments after the size). */
#define NEW0(sym, kind)                                                                          \
    NEXT(new_fn, next_##sym, #sym)                                                               \
    EXPORT void *sym(size_t n) {                                                                 \
        note(kind, CALLER);                                                                      \
        new_fn f = next_##sym();                                                                 \
        return f != NULL ? f(n) : __libc_malloc(n);                                              \
    }
#define NEW1(sym, kind)                                                                          \
    NEXT(new_x_fn, next_##sym, #sym)                                                             \
    EXPORT void *sym(size_t n, uintptr_t x) {                                                    \
        note(kind, CALLER);                                                                      \
        new_x_fn f = next_##sym();                                                               \
        return f != NULL ? f(n, x) : __libc_malloc(n);                                           \
    }
#define NEW_ALIGNED(sym, kind)                                                                   \
    NEXT(new_x_fn, next_##sym, #sym)                                                             \
    EXPORT void *sym(size_t n, uintptr_t a) {                                                    \
        note(kind, CALLER);                                                                      \
        new_x_fn f = next_##sym();                                                               \
        return f != NULL ? f(n, a) : __libc_memalign(a, n);                                      \
    }
#define NEW_ALIGNED1(sym, kind)                                                                  \
    NEXT(new_xy_fn, next_##sym, #sym)                                                            \
    EXPORT void *sym(size_t n, uintptr_t a, uintptr_t x) {                                       \
        note(kind, CALLER);                                                                      \
        new_xy_fn f = next_##sym();                                                              \
        return f != NULL ? f(n, a, x) : __libc_memalign(a, n);                                   \
    }
/* Releasing forms: every extra argument (size, alignment, nothrow tag) is passed on. */
#define DEL0(sym, kind)                                                                          \
    NEXT(del_fn, next_##sym, #sym)                                                               \
    EXPORT void sym(void *p) {                                                                   \
        note(kind, CALLER);                                                                      \
        del_fn f = next_##sym();                                                                 \
        if (f != NULL) f(p); else __libc_free(p);                                                \
    }
#define DEL1(sym, kind)                                                                          \
    NEXT(del_x_fn, next_##sym, #sym)                                                             \
    EXPORT void sym(void *p, uintptr_t x) {                                                      \
        note(kind, CALLER);                                                                      \
        del_x_fn f = next_##sym();                                                               \
        if (f != NULL) f(p, x); else __libc_free(p);                                             \
    }
#define DEL2(sym, kind)                                                                          \
    NEXT(del_xy_fn, next_##sym, #sym)                                                            \
    EXPORT void sym(void *p, uintptr_t x, uintptr_t y) {                                         \
        note(kind, CALLER);                                                                      \
        del_xy_fn f = next_##sym();                                                              \
        if (f != NULL) f(p, x, y); else __libc_free(p);                                          \
    }

/* operator new / new[] (size_t), nothrow, align_val_t, align_val_t + nothrow. */
NEW0(_Znwm, K_NEW)
NEW0(_Znam, K_NEW_ARRAY)
NEW1(_ZnwmRKSt9nothrow_t, K_NEW)
NEW1(_ZnamRKSt9nothrow_t, K_NEW_ARRAY)
NEW_ALIGNED(_ZnwmSt11align_val_t, K_NEW)
NEW_ALIGNED(_ZnamSt11align_val_t, K_NEW_ARRAY)
NEW_ALIGNED1(_ZnwmSt11align_val_tRKSt9nothrow_t, K_NEW)
NEW_ALIGNED1(_ZnamSt11align_val_tRKSt9nothrow_t, K_NEW_ARRAY)
/* operator delete / delete[] (void*), sized, nothrow, aligned, sized + aligned, aligned +
 * nothrow. */
DEL0(_ZdlPv, K_DELETE)
DEL0(_ZdaPv, K_DELETE_ARRAY)
DEL1(_ZdlPvm, K_DELETE)
DEL1(_ZdaPvm, K_DELETE_ARRAY)
DEL1(_ZdlPvRKSt9nothrow_t, K_DELETE)
DEL1(_ZdaPvRKSt9nothrow_t, K_DELETE_ARRAY)
DEL1(_ZdlPvSt11align_val_t, K_DELETE)
DEL1(_ZdaPvSt11align_val_t, K_DELETE_ARRAY)
DEL2(_ZdlPvmSt11align_val_t, K_DELETE)
DEL2(_ZdaPvmSt11align_val_t, K_DELETE_ARRAY)
DEL2(_ZdlPvSt11align_val_tRKSt9nothrow_t, K_DELETE)
DEL2(_ZdaPvSt11align_val_tRKSt9nothrow_t, K_DELETE_ARRAY)

/* The signal watch: each call of a function that may change a signal's action or a thread's mask
 * is counted after it returns (a reading that saw the old count may have seen either state, and
 * the next reading sees a new count), whoever calls it. A change made with a raw system call, or
 * with a function not listed here, is not counted: the worker reads everything again before the
 * check that judges the signals. */
static uint64_t signal_changes;

EXPORT uint64_t ompd_heapwatch_signal_changes(void) {
    return __atomic_load_n(&signal_changes, __ATOMIC_SEQ_CST);
}

static inline void changed(void) { __atomic_fetch_add(&signal_changes, 1, __ATOMIC_SEQ_CST); }

typedef int (*action_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*handler_fn)(int, sighandler_t);
typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*one_fn)(int);
typedef int (*two_fn)(int, int);

/* sigaction and its alias: a change only with a new action. */
#define ACTION(sym)                                                                              \
    NEXT(action_fn, next_##sym, #sym)                                                            \
    EXPORT int sym(int s, const struct sigaction *act, struct sigaction *old) {                  \
        action_fn f = next_##sym();                                                              \
        if (f == NULL) {                                                                         \
            errno = ENOSYS;                                                                      \
            return -1;                                                                           \
        }                                                                                        \
        int rc = f(s, act, old);                                                                 \
        if (act != NULL) changed();                                                              \
        return rc;                                                                               \
    }
/* signal and its kin: always a change. */
#define HANDLER(sym)                                                                             \
    NEXT(handler_fn, next_##sym, #sym)                                                           \
    EXPORT sighandler_t sym(int s, sighandler_t h) {                                             \
        handler_fn f = next_##sym();                                                             \
        if (f == NULL) {                                                                         \
            errno = ENOSYS;                                                                      \
            return SIG_ERR;                                                                      \
        }                                                                                        \
        sighandler_t was = f(s, h);                                                              \
        changed();                                                                               \
        return was;                                                                              \
    }
/* A thread's mask: a change only with a new set. */
#define MASK(sym)                                                                                \
    NEXT(mask_fn, next_##sym, #sym)                                                              \
    EXPORT int sym(int how, const sigset_t *set, sigset_t *old) {                                \
        mask_fn f = next_##sym();                                                                \
        if (f == NULL) return ENOSYS;                                                            \
        int rc = f(how, set, old);                                                               \
        if (set != NULL) changed();                                                              \
        return rc;                                                                               \
    }
/* The System V and BSD forms of one or two int arguments: always a change. */
#define ONE(sym)                                                                                 \
    NEXT(one_fn, next_##sym, #sym)                                                               \
    EXPORT int sym(int a) {                                                                      \
        one_fn f = next_##sym();                                                                 \
        int rc = f != NULL ? f(a) : -1;                                                          \
        changed();                                                                               \
        return rc;                                                                               \
    }
#define TWO(sym)                                                                                 \
    NEXT(two_fn, next_##sym, #sym)                                                               \
    EXPORT int sym(int a, int b) {                                                               \
        two_fn f = next_##sym();                                                                 \
        int rc = f != NULL ? f(a, b) : -1;                                                       \
        changed();                                                                               \
        return rc;                                                                               \
    }

ACTION(sigaction)
ACTION(__sigaction)
HANDLER(signal)
HANDLER(sysv_signal)
HANDLER(__sysv_signal)
HANDLER(bsd_signal)
HANDLER(ssignal)
HANDLER(sigset)
MASK(sigprocmask)
MASK(pthread_sigmask)
ONE(sighold)
ONE(sigrelse)
ONE(sigignore)
ONE(sigblock)
ONE(sigsetmask)
TWO(siginterrupt)

/* The process watch: each call of a function that may close or replace a descriptor, or start a
 * thread, is counted after it returns, whoever calls it (as the signal watch counts its calls). A
 * change made with a raw system call, or inside the C library through a function not listed here,
 * is not counted: the worker reads the descriptors and threads again before the checks that judge
 * them, and restores a vital descriptor of its own when writing to it fails. */
static uint64_t process_changes;

EXPORT uint64_t ompd_heapwatch_process_changes(void) {
    return __atomic_load_n(&process_changes, __ATOMIC_SEQ_CST);
}

/* A counted function: `ret sym(params)`, calling the next definition with `args` (or failing
 * with `fail` and ENOSYS when there is none), then counting the call. */
#define COUNTED(ret, sym, params, args, fail)                                                    \
    typedef ret(*sym##_fn) params;                                                               \
    NEXT(sym##_fn, next_##sym, #sym)                                                             \
    EXPORT ret sym params {                                                                      \
        sym##_fn next = next_##sym();                                                            \
        if (next == NULL) {                                                                      \
            errno = ENOSYS;                                                                      \
            return fail;                                                                         \
        }                                                                                        \
        ret rc = next args;                                                                      \
        __atomic_fetch_add(&process_changes, 1, __ATOMIC_SEQ_CST);                               \
        return rc;                                                                               \
    }

COUNTED(int, close, (int fd), (fd), -1)
COUNTED(int, __close, (int fd), (fd), -1)
COUNTED(int, close_range, (unsigned lo, unsigned hi, int flags), (lo, hi, flags), -1)
COUNTED(int, dup2, (int from, int to), (from, to), -1)
COUNTED(int, dup3, (int from, int to, int flags), (from, to, flags), -1)
COUNTED(int, fclose, (FILE *f), (f), EOF)
COUNTED(int, fcloseall, (void), (), EOF)
COUNTED(FILE *, freopen, (const char *p, const char *m, FILE *f), (p, m, f), NULL)
COUNTED(FILE *, freopen64, (const char *p, const char *m, FILE *f), (p, m, f), NULL)
COUNTED(int, daemon, (int nochdir, int noclose), (nochdir, noclose), -1)
COUNTED(int, pthread_create,
        (pthread_t *t, const pthread_attr_t *a, void *(*start)(void *), void *arg),
        (t, a, start, arg), EAGAIN)
COUNTED(int, thrd_create, (thrd_t *t, thrd_start_t start, void *arg), (t, start, arg), thrd_error)

/* closefrom returns nothing. */
typedef void (*closefrom_fn)(int);
NEXT(closefrom_fn, next_closefrom, "closefrom")
EXPORT void closefrom(int lo) {
    closefrom_fn f = next_closefrom();
    if (f != NULL) f(lo);
    __atomic_fetch_add(&process_changes, 1, __ATOMIC_SEQ_CST);
}
