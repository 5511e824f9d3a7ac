/*
 * A deliberately broken OMPD library, for the suite's self-tests.
 *
 * Every entry point of the OMPD 5.0 interface forwards to the same routine of an "inner" vendor
 * library: `libompd_inner.so`, found in the directory this library itself was loaded from (no
 * environment variable: workers may run with a scrubbed environment). Compiled once per
 * violation with `-DVIOLATION_<NAME>`, each build is correct except for that one violation;
 * without any, the build is the clean baseline (pure forwarding; only the library version
 * string is copied into this library's static data, as the inner library keeps it in its own).
 *
 * Violations (the entry point that carries each):
 *   SEGFAULT            ompd_get_omp_version writes through NULL.
 *   ABORT               ompd_get_thread_id calls abort().
 *   EXIT0               ompd_get_task_function calls exit(0) in the middle of the call.
 *   THROW               ompd_get_task_function throws a C++ exception (an int, through the
 *                       Itanium C++ ABI's __cxa_throw; linked with libstdc++) out of the call.
 *   HANG                ompd_finalize never returns.
 *   STACK_SMASH         ompd_get_task_frame overflows a local buffer (built with
 *                       -fstack-protector-all, so the canary check aborts).
 *   STDOUT              ompd_get_omp_version writes to stdout itself.
 *   LEAK                ompd_get_thread_handle allocates a block it never frees.
 *   DOUBLE_FREE         ompd_get_omp_version_string frees a block of its own twice.
 *   FREE_TOOL_MEMORY    ompd_get_thread_id frees the tool's thread-id buffer.
 *   STATIC_STRING       ompd_get_omp_version_string returns a static string instead of an
 *                       alloc_memory block.
 *   COMPARE_ASYMMETRIC  ompd_thread_handle_compare answers 1 for every pair of different
 *                       threads, in both orders.
 *   NULL_OK             ompd_get_omp_version returns ompd_rc_ok for a NULL omp_version.
 *   WRONG_API_VERSION   ompd_get_api_version answers 201800 (no OpenMP API version);
 *                       ompd_initialize accepts that value as its own.
 *   MISSING_ENTRY       ompd_get_task_function is not exported.
 *   UNDECLARED_DEP      ompd_get_api_version calls a function of libompd_fixture_dep.so, which
 *                       is not in DT_NEEDED: dlopen(RTLD_NOW) fails with an undefined symbol.
 *   FLAKY               ompd_get_omp_version crashes (SIGSEGV) the first time any process
 *                       calls it: it creates a marker file next to the library with
 *                       O_CREAT|O_EXCL and crashes only if that created it.
 *   HANG_TASK           ompd_get_curr_task_handle never returns (a commonly called entry point:
 *                       the per-call deadline and quarantine are measured on it).
 *   SEGFAULT_TASK       ompd_get_curr_task_handle writes through NULL, on every call.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <omp-tools.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The file name of the inner library, in this library's own directory. */
#define INNER_NAME "libompd_inner.so"

/* The callback table the tool gave ompd_initialize (the fixtures' violations use it). */
static const ompd_callbacks_t *tool_callbacks;

/* This library's directory, with a trailing slash, or "" when it cannot be found. */
static void own_directory(char *out, size_t size) {
  Dl_info info;
  out[0] = '\0';
  if (dladdr((const void *)(uintptr_t)&own_directory, &info) == 0 || info.dli_fname == NULL)
    return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash == NULL)
    return;
  size_t len = (size_t)(slash - info.dli_fname) + 1;
  if (len >= size)
    return;
  memcpy(out, info.dli_fname, len);
  out[len] = '\0';
}

/* Copies the file `from` to the new file `to`; 0 on success. */
static int copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY);
  int out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0755);
  int ok = in >= 0 && out >= 0;
  char buf[65536];
  ssize_t n;
  while (ok && (n = read(in, buf, sizeof buf)) > 0)
    ok = write(out, buf, (size_t)n) == n;
  if (in >= 0)
    close(in);
  if (out >= 0)
    close(out);
  return ok ? 0 : -1;
}

/* The inner library at `path` as an instance of its own: when the process already holds one
 * (an earlier instance of this library loaded it: a worker judging a batch of units), a private
 * copy, removed once loaded. */
static void *load_own_inner(const char *path) {
  void *held = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (held == NULL)
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  dlclose(held);
  /* The dynamic linker knows a loaded file by its path: the clock's nanoseconds keep each
   * copy's name new, though this library's own counters start again with each instance. */
  struct timespec now;
  char copy[4200];
  if (clock_gettime(CLOCK_REALTIME, &now) != 0 ||
      snprintf(copy, sizeof copy, "%s.%d.%ld.%ld.so", path, (int)getpid(), (long)now.tv_sec,
               (long)now.tv_nsec) >= (int)sizeof copy ||
      copy_file(path, copy) != 0)
    return NULL;
  void *handle = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
  unlink(copy);
  return handle;
}

/* The inner library (loaded on first use), or NULL when it cannot be loaded. */
static void *inner_library(void) {
  static void *handle;
  if (handle == NULL) {
    char path[4096];
    own_directory(path, sizeof path);
    if (strlen(path) + sizeof INNER_NAME > sizeof path)
      return NULL;
    strcat(path, INNER_NAME);
    handle = load_own_inner(path);
  }
  return handle;
}

/* The inner library's symbol `name`, or NULL. */
static void *inner_symbol(const char *name) {
  void *lib = inner_library();
  return lib == NULL ? NULL : dlsym(lib, name);
}

/* Declares `static TYPE-OF-name *fn` bound to the inner `name`; returns ompd_rc_error if the
 * inner library or its symbol is missing. */
#define INNER(name)                                                                            \
  static __typeof__(name) *fn;                                                                 \
  if (fn == NULL)                                                                              \
    fn = (__typeof__(name) *)(uintptr_t)inner_symbol(#name);                                   \
  if (fn == NULL)                                                                              \
  return ompd_rc_error

/* Defines entry point `name` as pure forwarding. */
#define FORWARD(name, params, args)                                                            \
  ompd_rc_t name params {                                                                      \
    INNER(name);                                                                               \
    return fn args;                                                                            \
  }

#if defined(VIOLATION_SEGFAULT) || defined(VIOLATION_FLAKY) || defined(VIOLATION_SEGFAULT_TASK)
/* Crashes with SIGSEGV (a write through a NULL pointer the compiler cannot prove NULL). */
static void write_through_null(void) {
  volatile int *volatile target = NULL;
  *target = 1;
}
#endif

#ifdef VIOLATION_FLAKY
/* True the first time any process calls this for this library file: creating the marker file
 * next to the library is atomic (O_CREAT|O_EXCL), so exactly one caller of the whole run wins,
 * even across parallel workers. */
static int first_call_of_the_run(void) {
  char path[4096];
  Dl_info info;
  if (dladdr((const void *)(uintptr_t)&first_call_of_the_run, &info) == 0 ||
      info.dli_fname == NULL)
    return 0;
  if (snprintf(path, sizeof path, "%s.crashed-once", info.dli_fname) >= (int)sizeof path)
    return 0;
  int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0)
    return 0;
  close(fd);
  return 1;
}
#endif

#ifdef VIOLATION_UNDECLARED_DEP
/* Defined in libompd_fixture_dep.so, which this library is deliberately not linked against. */
extern int ompd_fixture_dep_value(void);
#endif

#ifdef VIOLATION_WRONG_API_VERSION
/* The version this library claims: no OpenMP API version has it. */
#define WRONG_API_VERSION 201800
#endif

/* ---- Library lifecycle ---- */

ompd_rc_t ompd_initialize(ompd_word_t api_version, const ompd_callbacks_t *callbacks) {
  INNER(ompd_initialize);
  tool_callbacks = callbacks;
#ifdef VIOLATION_WRONG_API_VERSION
  /* Consistent with the wrong answer of ompd_get_api_version: its own claim is accepted. */
  if (api_version == WRONG_API_VERSION) {
    ompd_word_t real = 0;
    ompd_rc_t (*get)(ompd_word_t *) =
        (ompd_rc_t(*)(ompd_word_t *))(uintptr_t)inner_symbol("ompd_get_api_version");
    if (get == NULL || get(&real) != ompd_rc_ok)
      return ompd_rc_error;
    api_version = real;
  }
#endif
  return fn(api_version, callbacks);
}

ompd_rc_t ompd_get_api_version(ompd_word_t *version) {
  INNER(ompd_get_api_version);
#ifdef VIOLATION_UNDECLARED_DEP
  if (ompd_fixture_dep_value() != 0)
    return ompd_rc_error;
#endif
#ifdef VIOLATION_WRONG_API_VERSION
  ompd_rc_t rc = fn(version);
  if (rc == ompd_rc_ok)
    *version = WRONG_API_VERSION;
  return rc;
#else
  return fn(version);
#endif
}

ompd_rc_t ompd_get_version_string(const char **string) {
  INNER(ompd_get_version_string);
  /* The string is static data of this library, as the inner one's is of the inner library. */
  static char copy[512];
  const char *inner = NULL;
  ompd_rc_t rc = fn(string == NULL ? NULL : &inner);
  if (rc != ompd_rc_ok || string == NULL || inner == NULL)
    return rc;
  snprintf(copy, sizeof copy, "%s", inner);
  *string = copy;
  return rc;
}

ompd_rc_t ompd_finalize(void) {
  INNER(ompd_finalize);
#ifdef VIOLATION_HANG
  for (;;) {
    /* Sleeping keeps the hang cheap for the machine; the caller sees no answer either way. */
    sleep(1);
  }
#endif
  return fn();
}

/* ---- Address spaces ---- */

FORWARD(ompd_process_initialize,
        (ompd_address_space_context_t * context, ompd_address_space_handle_t **handle),
        (context, handle))

FORWARD(ompd_device_initialize,
        (ompd_address_space_handle_t * process_handle,
         ompd_address_space_context_t *device_context, ompd_device_t kind,
         ompd_size_t sizeof_id, void *id, ompd_address_space_handle_t **device_handle),
        (process_handle, device_context, kind, sizeof_id, id, device_handle))

FORWARD(ompd_rel_address_space_handle, (ompd_address_space_handle_t * handle), (handle))

ompd_rc_t ompd_get_omp_version(ompd_address_space_handle_t *address_space,
                               ompd_word_t *omp_version) {
  INNER(ompd_get_omp_version);
#ifdef VIOLATION_SEGFAULT
  write_through_null();
#endif
#ifdef VIOLATION_FLAKY
  if (first_call_of_the_run())
    write_through_null();
#endif
#ifdef VIOLATION_STDOUT
  printf("broken_ompd: ompd_get_omp_version was called\n");
#endif
#ifdef VIOLATION_NULL_OK
  if (omp_version == NULL)
    return ompd_rc_ok;
#endif
  return fn(address_space, omp_version);
}

ompd_rc_t ompd_get_omp_version_string(ompd_address_space_handle_t *address_space,
                                      const char **string) {
  INNER(ompd_get_omp_version_string);
#ifdef VIOLATION_DOUBLE_FREE
  void *scratch = NULL;
  if (tool_callbacks != NULL && tool_callbacks->alloc_memory(16, &scratch) == ompd_rc_ok) {
    tool_callbacks->free_memory(scratch);
    tool_callbacks->free_memory(scratch);
  }
#endif
#ifdef VIOLATION_STATIC_STRING
  static const char version[] = "OpenMP 5.0 (static string of a broken fixture)";
  const char *allocated = NULL;
  ompd_rc_t rc = fn(address_space, &allocated);
  if (rc != ompd_rc_ok || string == NULL)
    return string == NULL ? ompd_rc_bad_input : rc;
  /* The inner library's block is returned to the tool: only the answer is wrong. */
  if (tool_callbacks != NULL)
    tool_callbacks->free_memory((void *)(uintptr_t)allocated);
  *string = version;
  return ompd_rc_ok;
#else
  return fn(address_space, string);
#endif
}

/* ---- Threads ---- */

FORWARD(ompd_get_thread_in_parallel,
        (ompd_parallel_handle_t * parallel_handle, int thread_num,
         ompd_thread_handle_t **thread_handle),
        (parallel_handle, thread_num, thread_handle))

ompd_rc_t ompd_get_thread_handle(ompd_address_space_handle_t *handle, ompd_thread_id_t kind,
                                 ompd_size_t sizeof_thread_id, const void *thread_id,
                                 ompd_thread_handle_t **thread_handle) {
  INNER(ompd_get_thread_handle);
  ompd_rc_t rc = fn(handle, kind, sizeof_thread_id, thread_id, thread_handle);
#ifdef VIOLATION_LEAK
  /* A block of bookkeeping the library forgets: never freed, not even by the release. */
  void *forgotten = NULL;
  if (rc == ompd_rc_ok && tool_callbacks != NULL)
    (void)tool_callbacks->alloc_memory(24, &forgotten);
#endif
  return rc;
}

ompd_rc_t ompd_rel_thread_handle(ompd_thread_handle_t *thread_handle) {
  INNER(ompd_rel_thread_handle);
  ompd_rc_t rc = fn(thread_handle);
#ifdef VIOLATION_REL_NOT_OK
  /* The handle is released all the same: only the answer is wrong. */
  if (rc == ompd_rc_ok)
    return ompd_rc_error;
#endif
  return rc;
}

ompd_rc_t ompd_thread_handle_compare(ompd_thread_handle_t *thread_handle_1,
                                     ompd_thread_handle_t *thread_handle_2, int *cmp_value) {
  INNER(ompd_thread_handle_compare);
  ompd_rc_t rc = fn(thread_handle_1, thread_handle_2, cmp_value);
#ifdef VIOLATION_COMPARE_ASYMMETRIC
  if (rc == ompd_rc_ok && cmp_value != NULL && *cmp_value != 0)
    *cmp_value = 1;
#endif
  return rc;
}

ompd_rc_t ompd_get_thread_id(ompd_thread_handle_t *thread_handle, ompd_thread_id_t kind,
                             ompd_size_t sizeof_thread_id, void *thread_id) {
  INNER(ompd_get_thread_id);
#ifdef VIOLATION_ABORT
  abort();
#endif
  ompd_rc_t rc = fn(thread_handle, kind, sizeof_thread_id, thread_id);
#ifdef VIOLATION_FREE_TOOL_MEMORY
  /* The buffer belongs to the tool: it was never allocated with alloc_memory. */
  if (rc == ompd_rc_ok && tool_callbacks != NULL)
    tool_callbacks->free_memory(thread_id);
#endif
  return rc;
}

/* ---- Parallel regions ---- */

FORWARD(ompd_get_curr_parallel_handle,
        (ompd_thread_handle_t * thread_handle, ompd_parallel_handle_t **parallel_handle),
        (thread_handle, parallel_handle))

FORWARD(ompd_get_enclosing_parallel_handle,
        (ompd_parallel_handle_t * parallel_handle,
         ompd_parallel_handle_t **enclosing_parallel_handle),
        (parallel_handle, enclosing_parallel_handle))

FORWARD(ompd_get_task_parallel_handle,
        (ompd_task_handle_t * task_handle, ompd_parallel_handle_t **task_parallel_handle),
        (task_handle, task_parallel_handle))

FORWARD(ompd_rel_parallel_handle, (ompd_parallel_handle_t * parallel_handle),
        (parallel_handle))

FORWARD(ompd_parallel_handle_compare,
        (ompd_parallel_handle_t * parallel_handle_1, ompd_parallel_handle_t *parallel_handle_2,
         int *cmp_value),
        (parallel_handle_1, parallel_handle_2, cmp_value))

/* ---- Tasks ---- */

ompd_rc_t ompd_get_curr_task_handle(ompd_thread_handle_t *thread_handle,
                                    ompd_task_handle_t **task_handle) {
  INNER(ompd_get_curr_task_handle);
#ifdef VIOLATION_HANG_TASK
  for (;;)
    sleep(1);
#endif
#ifdef VIOLATION_SEGFAULT_TASK
  write_through_null();
#endif
  return fn(thread_handle, task_handle);
}

FORWARD(ompd_get_generating_task_handle,
        (ompd_task_handle_t * task_handle, ompd_task_handle_t **generating_task_handle),
        (task_handle, generating_task_handle))

FORWARD(ompd_get_scheduling_task_handle,
        (ompd_task_handle_t * task_handle, ompd_task_handle_t **scheduling_task_handle),
        (task_handle, scheduling_task_handle))

FORWARD(ompd_get_task_in_parallel,
        (ompd_parallel_handle_t * parallel_handle, int thread_num,
         ompd_task_handle_t **task_handle),
        (parallel_handle, thread_num, task_handle))

FORWARD(ompd_rel_task_handle, (ompd_task_handle_t * task_handle), (task_handle))

FORWARD(ompd_task_handle_compare,
        (ompd_task_handle_t * task_handle_1, ompd_task_handle_t *task_handle_2,
         int *cmp_value),
        (task_handle_1, task_handle_2, cmp_value))

#ifdef VIOLATION_THROW
/* The Itanium C++ ABI's throw, called from C as a C++ library's code calls it. */
extern void *__cxa_allocate_exception(size_t size);
extern void __cxa_throw(void *object, void *type, void (*destructor)(void *));
extern char _ZTIi[]; /* the type_info of int */
#endif

#ifndef VIOLATION_MISSING_ENTRY
ompd_rc_t ompd_get_task_function(ompd_task_handle_t *task_handle, ompd_address_t *entry_point) {
  INNER(ompd_get_task_function);
#ifdef VIOLATION_EXIT0
  exit(0);
#endif
#ifdef VIOLATION_THROW
  int *thrown = __cxa_allocate_exception(sizeof(int));
  *thrown = 7;
  __cxa_throw(thrown, _ZTIi, NULL);
#endif
  return fn(task_handle, entry_point);
}
#endif

#ifdef VIOLATION_STACK_SMASH
/* How many bytes the overflow writes; volatile, so the compiler cannot see the overflow. */
static volatile size_t smash_length = 256;
#endif

ompd_rc_t ompd_get_task_frame(ompd_task_handle_t *task_handle, ompd_frame_info_t *exit_frame,
                              ompd_frame_info_t *enter_frame) {
  INNER(ompd_get_task_frame);
#ifdef VIOLATION_STACK_SMASH
  char local[16];
  memset(local, 0x5a, smash_length);
  if (local[0] != 0x5a)
    return ompd_rc_error;
#endif
  return fn(task_handle, exit_frame, enter_frame);
}

/* ---- States, display control variables, ICVs, tool data ---- */

FORWARD(ompd_enumerate_states,
        (ompd_address_space_handle_t * address_space_handle, ompd_word_t current_state,
         ompd_word_t *next_state, const char **next_state_name, ompd_word_t *more_enums),
        (address_space_handle, current_state, next_state, next_state_name, more_enums))

FORWARD(ompd_get_state,
        (ompd_thread_handle_t * thread_handle, ompd_word_t *state, ompd_wait_id_t *wait_id),
        (thread_handle, state, wait_id))

FORWARD(ompd_get_display_control_vars,
        (ompd_address_space_handle_t * address_space_handle, const char *const **control_vars),
        (address_space_handle, control_vars))

FORWARD(ompd_rel_display_control_vars, (const char *const **control_vars), (control_vars))

FORWARD(ompd_enumerate_icvs,
        (ompd_address_space_handle_t * handle, ompd_icv_id_t current, ompd_icv_id_t *next_id,
         const char **next_icv_name, ompd_scope_t *next_scope, int *more),
        (handle, current, next_id, next_icv_name, next_scope, more))

FORWARD(ompd_get_icv_from_scope,
        (void *handle, ompd_scope_t scope, ompd_icv_id_t icv_id, ompd_word_t *icv_value),
        (handle, scope, icv_id, icv_value))

FORWARD(ompd_get_icv_string_from_scope,
        (void *handle, ompd_scope_t scope, ompd_icv_id_t icv_id, const char **icv_string),
        (handle, scope, icv_id, icv_string))

FORWARD(ompd_get_tool_data,
        (void *handle, ompd_scope_t scope, ompd_word_t *value, ompd_address_t *ptr),
        (handle, scope, value, ptr))
