/*
 * ABI cross-check between the system omp-tools.h and sim-target/abi/src/lib.rs (the ompd-abi crate).
 *
 * Prints one `NAME VALUE` line per fact (sizes, alignments, field offsets,
 * enumerator values, typedef sizes and signedness), then a final
 * `end.lines N` line carrying the number of lines printed before it.
 * c-fixtures/selftest/tests/abi.rs compares every line with the Rust definitions.
 *
 * The entry-point and callback signatures are checked at compile time: each
 * one is compared with an independently written typedef through _Generic, so
 * a signature drift in the header fails the build of this program.
 *
 * Defining ABI_CHECK_INJECT_DRIFT to 1 (an entry point) or 2 (a callback)
 * swaps in one deliberately wrong typedef; build.rs compiles both variants to
 * prove that the checks reject a drift.
 *
 * Plain C11; the program only names the ompd_* entry points inside _Generic
 * controlling expressions, which are not evaluated, so nothing is linked
 * against an OMPD library.
 */
#include <omp-tools.h>

#include <stddef.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Compile-time signature checks                                              */
/* ------------------------------------------------------------------------ */

/* True when EXPR has exactly the (compatible) type TYPE. */
#define ABI_HAS_TYPE(expr, type) _Generic((expr), type: 1, default: 0)

#define ABI_CHECK_ENTRY(name, type)                                            \
  _Static_assert(ABI_HAS_TYPE(&name, type),                                    \
                 #name " does not match the prototype expected by the suite")

typedef ompd_address_space_handle_t ash_t;
typedef ompd_address_space_context_t asc_t;
typedef ompd_thread_handle_t th_t;
typedef ompd_thread_context_t tc_t;
typedef ompd_parallel_handle_t ph_t;
typedef ompd_task_handle_t task_t;

/* Callback types (mirrors of sim_target::abi::*Fn). */
typedef ompd_rc_t (*abi_alloc_memory_fn)(ompd_size_t, void **);
typedef ompd_rc_t (*abi_free_memory_fn)(void *);
typedef ompd_rc_t (*abi_print_string_fn)(const char *, int);
typedef ompd_rc_t (*abi_sizeof_type_fn)(asc_t *, ompd_device_type_sizes_t *);
typedef ompd_rc_t (*abi_symbol_addr_fn)(asc_t *, tc_t *, const char *,
                                        ompd_address_t *, const char *);
#if defined(ABI_CHECK_INJECT_DRIFT) && ABI_CHECK_INJECT_DRIFT == 2
/* Self-test of the checks (build.rs): the `const` of `addr` dropped. */
typedef ompd_rc_t (*abi_read_memory_fn)(asc_t *, tc_t *, ompd_address_t *,
                                        ompd_size_t, void *);
#else
typedef ompd_rc_t (*abi_read_memory_fn)(asc_t *, tc_t *, const ompd_address_t *,
                                        ompd_size_t, void *);
#endif
typedef ompd_rc_t (*abi_write_memory_fn)(asc_t *, tc_t *,
                                         const ompd_address_t *, ompd_size_t,
                                         const void *);
typedef ompd_rc_t (*abi_device_host_fn)(asc_t *, const void *, ompd_size_t,
                                        ompd_size_t, void *);
typedef ompd_rc_t (*abi_get_thread_context_fn)(asc_t *, ompd_thread_id_t,
                                               ompd_size_t, const void *,
                                               tc_t **);

#define ABI_CHECK_MEMBER(member, type)                                         \
  _Static_assert(ABI_HAS_TYPE(((ompd_callbacks_t *)0)->member, type),          \
                 "ompd_callbacks_t." #member " has an unexpected type")

ABI_CHECK_MEMBER(alloc_memory, abi_alloc_memory_fn);
ABI_CHECK_MEMBER(free_memory, abi_free_memory_fn);
ABI_CHECK_MEMBER(print_string, abi_print_string_fn);
ABI_CHECK_MEMBER(sizeof_type, abi_sizeof_type_fn);
ABI_CHECK_MEMBER(symbol_addr_lookup, abi_symbol_addr_fn);
ABI_CHECK_MEMBER(read_memory, abi_read_memory_fn);
ABI_CHECK_MEMBER(write_memory, abi_write_memory_fn);
ABI_CHECK_MEMBER(read_string, abi_read_memory_fn);
ABI_CHECK_MEMBER(device_to_host, abi_device_host_fn);
ABI_CHECK_MEMBER(host_to_device, abi_device_host_fn);
ABI_CHECK_MEMBER(get_thread_context_for_thread_id, abi_get_thread_context_fn);

/* The header's own callback typedefs must agree as well. */
_Static_assert(ABI_HAS_TYPE((ompd_callback_memory_alloc_fn_t)0,
                            abi_alloc_memory_fn),
               "ompd_callback_memory_alloc_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_memory_free_fn_t)0,
                            abi_free_memory_fn),
               "ompd_callback_memory_free_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_print_string_fn_t)0,
                            abi_print_string_fn),
               "ompd_callback_print_string_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_sizeof_fn_t)0, abi_sizeof_type_fn),
               "ompd_callback_sizeof_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_symbol_addr_fn_t)0,
                            abi_symbol_addr_fn),
               "ompd_callback_symbol_addr_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_memory_read_fn_t)0,
                            abi_read_memory_fn),
               "ompd_callback_memory_read_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_memory_write_fn_t)0,
                            abi_write_memory_fn),
               "ompd_callback_memory_write_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_device_host_fn_t)0,
                            abi_device_host_fn),
               "ompd_callback_device_host_fn_t");
_Static_assert(ABI_HAS_TYPE((ompd_callback_get_thread_context_for_thread_id_fn_t)0,
                            abi_get_thread_context_fn),
               "ompd_callback_get_thread_context_for_thread_id_fn_t");

/* Entry points (mirrors of sim_target::abi::entry::*), in header order. */
typedef ompd_rc_t (*abi_initialize_t)(ompd_word_t, const ompd_callbacks_t *);
typedef ompd_rc_t (*abi_get_api_version_t)(ompd_word_t *);
typedef ompd_rc_t (*abi_get_version_string_t)(const char **);
typedef ompd_rc_t (*abi_finalize_t)(void);
typedef ompd_rc_t (*abi_process_initialize_t)(asc_t *, ash_t **);
typedef ompd_rc_t (*abi_device_initialize_t)(ash_t *, asc_t *, ompd_device_t,
                                             ompd_size_t, void *, ash_t **);
typedef ompd_rc_t (*abi_rel_address_space_handle_t)(ash_t *);
typedef ompd_rc_t (*abi_get_omp_version_t)(ash_t *, ompd_word_t *);
typedef ompd_rc_t (*abi_get_omp_version_string_t)(ash_t *, const char **);
typedef ompd_rc_t (*abi_get_thread_in_parallel_t)(ph_t *, int, th_t **);
typedef ompd_rc_t (*abi_get_thread_handle_t)(ash_t *, ompd_thread_id_t,
                                             ompd_size_t, const void *,
                                             th_t **);
typedef ompd_rc_t (*abi_rel_thread_handle_t)(th_t *);
typedef ompd_rc_t (*abi_thread_handle_compare_t)(th_t *, th_t *, int *);
typedef ompd_rc_t (*abi_get_thread_id_t)(th_t *, ompd_thread_id_t, ompd_size_t,
                                         void *);
typedef ompd_rc_t (*abi_get_curr_parallel_handle_t)(th_t *, ph_t **);
typedef ompd_rc_t (*abi_get_enclosing_parallel_handle_t)(ph_t *, ph_t **);
typedef ompd_rc_t (*abi_get_task_parallel_handle_t)(task_t *, ph_t **);
typedef ompd_rc_t (*abi_rel_parallel_handle_t)(ph_t *);
typedef ompd_rc_t (*abi_parallel_handle_compare_t)(ph_t *, ph_t *, int *);
typedef ompd_rc_t (*abi_get_curr_task_handle_t)(th_t *, task_t **);
typedef ompd_rc_t (*abi_get_generating_task_handle_t)(task_t *, task_t **);
typedef ompd_rc_t (*abi_get_scheduling_task_handle_t)(task_t *, task_t **);
typedef ompd_rc_t (*abi_get_task_in_parallel_t)(ph_t *, int, task_t **);
typedef ompd_rc_t (*abi_rel_task_handle_t)(task_t *);
typedef ompd_rc_t (*abi_task_handle_compare_t)(task_t *, task_t *, int *);
typedef ompd_rc_t (*abi_get_task_function_t)(task_t *, ompd_address_t *);
typedef ompd_rc_t (*abi_get_task_frame_t)(task_t *, ompd_frame_info_t *,
                                          ompd_frame_info_t *);
typedef ompd_rc_t (*abi_enumerate_states_t)(ash_t *, ompd_word_t, ompd_word_t *,
                                            const char **, ompd_word_t *);
#if defined(ABI_CHECK_INJECT_DRIFT) && ABI_CHECK_INJECT_DRIFT == 1
/* Self-test of the checks (build.rs): `wait_id` made signed. */
typedef ompd_rc_t (*abi_get_state_t)(th_t *, ompd_word_t *, ompd_word_t *);
#else
typedef ompd_rc_t (*abi_get_state_t)(th_t *, ompd_word_t *, ompd_wait_id_t *);
#endif
typedef ompd_rc_t (*abi_get_display_control_vars_t)(ash_t *,
                                                    const char *const **);
typedef ompd_rc_t (*abi_rel_display_control_vars_t)(const char *const **);
typedef ompd_rc_t (*abi_enumerate_icvs_t)(ash_t *, ompd_icv_id_t,
                                          ompd_icv_id_t *, const char **,
                                          ompd_scope_t *, int *);
typedef ompd_rc_t (*abi_get_icv_from_scope_t)(void *, ompd_scope_t,
                                              ompd_icv_id_t, ompd_word_t *);
typedef ompd_rc_t (*abi_get_icv_string_from_scope_t)(void *, ompd_scope_t,
                                                     ompd_icv_id_t,
                                                     const char **);
typedef ompd_rc_t (*abi_get_tool_data_t)(void *, ompd_scope_t, ompd_word_t *,
                                         ompd_address_t *);

ABI_CHECK_ENTRY(ompd_initialize, abi_initialize_t);
ABI_CHECK_ENTRY(ompd_get_api_version, abi_get_api_version_t);
ABI_CHECK_ENTRY(ompd_get_version_string, abi_get_version_string_t);
ABI_CHECK_ENTRY(ompd_finalize, abi_finalize_t);
ABI_CHECK_ENTRY(ompd_process_initialize, abi_process_initialize_t);
ABI_CHECK_ENTRY(ompd_device_initialize, abi_device_initialize_t);
ABI_CHECK_ENTRY(ompd_rel_address_space_handle, abi_rel_address_space_handle_t);
ABI_CHECK_ENTRY(ompd_get_omp_version, abi_get_omp_version_t);
ABI_CHECK_ENTRY(ompd_get_omp_version_string, abi_get_omp_version_string_t);
ABI_CHECK_ENTRY(ompd_get_thread_in_parallel, abi_get_thread_in_parallel_t);
ABI_CHECK_ENTRY(ompd_get_thread_handle, abi_get_thread_handle_t);
ABI_CHECK_ENTRY(ompd_rel_thread_handle, abi_rel_thread_handle_t);
ABI_CHECK_ENTRY(ompd_thread_handle_compare, abi_thread_handle_compare_t);
ABI_CHECK_ENTRY(ompd_get_thread_id, abi_get_thread_id_t);
ABI_CHECK_ENTRY(ompd_get_curr_parallel_handle, abi_get_curr_parallel_handle_t);
ABI_CHECK_ENTRY(ompd_get_enclosing_parallel_handle,
                abi_get_enclosing_parallel_handle_t);
ABI_CHECK_ENTRY(ompd_get_task_parallel_handle, abi_get_task_parallel_handle_t);
ABI_CHECK_ENTRY(ompd_rel_parallel_handle, abi_rel_parallel_handle_t);
ABI_CHECK_ENTRY(ompd_parallel_handle_compare, abi_parallel_handle_compare_t);
ABI_CHECK_ENTRY(ompd_get_curr_task_handle, abi_get_curr_task_handle_t);
ABI_CHECK_ENTRY(ompd_get_generating_task_handle,
                abi_get_generating_task_handle_t);
ABI_CHECK_ENTRY(ompd_get_scheduling_task_handle,
                abi_get_scheduling_task_handle_t);
ABI_CHECK_ENTRY(ompd_get_task_in_parallel, abi_get_task_in_parallel_t);
ABI_CHECK_ENTRY(ompd_rel_task_handle, abi_rel_task_handle_t);
ABI_CHECK_ENTRY(ompd_task_handle_compare, abi_task_handle_compare_t);
ABI_CHECK_ENTRY(ompd_get_task_function, abi_get_task_function_t);
ABI_CHECK_ENTRY(ompd_get_task_frame, abi_get_task_frame_t);
ABI_CHECK_ENTRY(ompd_enumerate_states, abi_enumerate_states_t);
ABI_CHECK_ENTRY(ompd_get_state, abi_get_state_t);
ABI_CHECK_ENTRY(ompd_get_display_control_vars, abi_get_display_control_vars_t);
ABI_CHECK_ENTRY(ompd_rel_display_control_vars, abi_rel_display_control_vars_t);
ABI_CHECK_ENTRY(ompd_enumerate_icvs, abi_enumerate_icvs_t);
ABI_CHECK_ENTRY(ompd_get_icv_from_scope, abi_get_icv_from_scope_t);
ABI_CHECK_ENTRY(ompd_get_icv_string_from_scope,
                abi_get_icv_string_from_scope_t);
ABI_CHECK_ENTRY(ompd_get_tool_data, abi_get_tool_data_t);

/* ------------------------------------------------------------------------ */
/* Printed facts                                                              */
/* ------------------------------------------------------------------------ */

static long lines;

static void put(const char *name, long long value) {
  printf("%s %lld\n", name, value);
  lines++;
}

#define SIZE(type)                                                             \
  do {                                                                         \
    put("sizeof." #type, (long long)sizeof(type));                             \
    put("alignof." #type, (long long)_Alignof(type));                          \
  } while (0)
#define OFFSET(type, member)                                                   \
  put("offsetof." #type "." #member, (long long)offsetof(type, member))
/* 1 for a signed integer type, 0 for an unsigned one; anything else fails to
 * compile. */
#define ABI_IS_SIGNED(expr)                                                    \
  _Generic((expr), signed char: 1, short: 1, int: 1, long: 1, long long: 1,    \
           unsigned char: 0, unsigned short: 0, unsigned int: 0,              \
           unsigned long: 0, unsigned long long: 0)
#define SCALAR(type)                                                           \
  do {                                                                         \
    put("sizeof." #type, (long long)sizeof(type));                             \
    put("signed." #type, (long long)ABI_IS_SIGNED((type)0));                   \
  } while (0)
#define ENUM(name) put("enum." #name, (long long)(name))
#define STATE_FROM_MACRO(name, value)                                          \
  do {                                                                         \
    _Static_assert((long long)(name) == (long long)(value),                    \
                   "FOREACH_OMPT_STATE disagrees with ompt_state_t: " #name);  \
    put("foreach_state." #name, (long long)(value));                           \
  } while (0);

int main(void) {
  /* Structs: size, alignment and every field offset. */
  SIZE(ompd_address_t);
  OFFSET(ompd_address_t, segment);
  OFFSET(ompd_address_t, address);

  SIZE(ompd_frame_info_t);
  OFFSET(ompd_frame_info_t, frame_address);
  OFFSET(ompd_frame_info_t, frame_flag);

  SIZE(ompd_device_type_sizes_t);
  OFFSET(ompd_device_type_sizes_t, sizeof_char);
  OFFSET(ompd_device_type_sizes_t, sizeof_short);
  OFFSET(ompd_device_type_sizes_t, sizeof_int);
  OFFSET(ompd_device_type_sizes_t, sizeof_long);
  OFFSET(ompd_device_type_sizes_t, sizeof_long_long);
  OFFSET(ompd_device_type_sizes_t, sizeof_pointer);

  SIZE(ompd_callbacks_t);
  OFFSET(ompd_callbacks_t, alloc_memory);
  OFFSET(ompd_callbacks_t, free_memory);
  OFFSET(ompd_callbacks_t, print_string);
  OFFSET(ompd_callbacks_t, sizeof_type);
  OFFSET(ompd_callbacks_t, symbol_addr_lookup);
  OFFSET(ompd_callbacks_t, read_memory);
  OFFSET(ompd_callbacks_t, write_memory);
  OFFSET(ompd_callbacks_t, read_string);
  OFFSET(ompd_callbacks_t, device_to_host);
  OFFSET(ompd_callbacks_t, host_to_device);
  OFFSET(ompd_callbacks_t, get_thread_context_for_thread_id);

  /* Enum types passed by value across the interface. */
  SIZE(ompd_rc_t);
  SIZE(ompd_scope_t);

  /* Scalar typedefs. */
  SCALAR(ompd_word_t);
  SCALAR(ompd_addr_t);
  SCALAR(ompd_seg_t);
  SCALAR(ompd_size_t);
  SCALAR(ompd_wait_id_t);
  SCALAR(ompd_device_t);
  SCALAR(ompd_thread_id_t);
  SCALAR(ompd_icv_id_t);

  /* ompd_rc_t: every enumerator of the header. */
  ENUM(ompd_rc_ok);
  ENUM(ompd_rc_unavailable);
  ENUM(ompd_rc_stale_handle);
  ENUM(ompd_rc_bad_input);
  ENUM(ompd_rc_error);
  ENUM(ompd_rc_unsupported);
  ENUM(ompd_rc_needs_state_tracking);
  ENUM(ompd_rc_incompatible);
  ENUM(ompd_rc_device_read_error);
  ENUM(ompd_rc_device_write_error);
  ENUM(ompd_rc_nomem);
  ENUM(ompd_rc_incomplete);
  ENUM(ompd_rc_callback_error);

  /* ompd_scope_t. */
  ENUM(ompd_scope_global);
  ENUM(ompd_scope_address_space);
  ENUM(ompd_scope_thread);
  ENUM(ompd_scope_parallel);
  ENUM(ompd_scope_implicit_task);
  ENUM(ompd_scope_task);

  /* ompt_state_t, enumerator by enumerator. */
  ENUM(ompt_state_work_serial);
  ENUM(ompt_state_work_parallel);
  ENUM(ompt_state_work_reduction);
  ENUM(ompt_state_wait_barrier);
  ENUM(ompt_state_wait_barrier_implicit_parallel);
  ENUM(ompt_state_wait_barrier_implicit_workshare);
  ENUM(ompt_state_wait_barrier_implicit);
  ENUM(ompt_state_wait_barrier_explicit);
  ENUM(ompt_state_wait_barrier_implementation);
  ENUM(ompt_state_wait_barrier_teams);
  ENUM(ompt_state_wait_taskwait);
  ENUM(ompt_state_wait_taskgroup);
  ENUM(ompt_state_wait_mutex);
  ENUM(ompt_state_wait_lock);
  ENUM(ompt_state_wait_critical);
  ENUM(ompt_state_wait_atomic);
  ENUM(ompt_state_wait_ordered);
  ENUM(ompt_state_wait_target);
  ENUM(ompt_state_wait_target_map);
  ENUM(ompt_state_wait_target_update);
  ENUM(ompt_state_idle);
  ENUM(ompt_state_overhead);
  ENUM(ompt_state_undefined);

  /* ompt_state_t as the header itself lists it: this is the header's full
   * state set, independent of the list above. */
#ifdef FOREACH_OMPT_STATE
  FOREACH_OMPT_STATE(STATE_FROM_MACRO)
#else
#error "omp-tools.h does not define FOREACH_OMPT_STATE"
#endif

  /* ompt_frame_flag_t. */
  ENUM(ompt_frame_runtime);
  ENUM(ompt_frame_application);
  ENUM(ompt_frame_cfa);
  ENUM(ompt_frame_framepointer);
  ENUM(ompt_frame_stackaddress);

  /* Macros. */
  put("define.ompd_segment_none", (long long)(ompd_segment_none));

  printf("end.lines %ld\n", lines);
  return fflush(stdout) == 0 ? 0 : 1;
}
