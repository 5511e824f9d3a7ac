/*
 * An OMPD library of the March 2014 draft (seed 001_...), for the suite's profile detection.
 *
 * It declares the draft's own types (section 14) and exports the 34 routines the draft declares
 * under their draft forms. It implements no inquiry: each routine that takes a debugger context
 * answers ompd_rc_unsupported. The version queries answer as the draft describes (section 9).
 * It includes no omp-tools.h: the draft predates it.
 */
#include <stdint.h>

typedef enum {
  ompd_rc_ok = 0,
  ompd_rc_unavailable = 1,
  ompd_rc_stale_handle = 2,
  ompd_rc_bad_input = 3,
  ompd_rc_error = 4,
  ompd_rc_unsupported = 5,
  ompd_rc_needs_state_tracking = 6
} ompd_rc_t;

typedef struct ompd_context_s ompd_context_t;
typedef struct ompd_callbacks_s ompd_callbacks_t;

#define UNSUPPORTED(name)                                                                 \
  ompd_rc_t name(ompd_context_t *context, void *a, void *b, void *c);                       \
  ompd_rc_t name(ompd_context_t *context, void *a, void *b, void *c) {                      \
    (void)context;                                                                          \
    (void)a;                                                                                \
    (void)b;                                                                                \
    (void)c;                                                                                \
    return ompd_rc_unsupported;                                                             \
  }

ompd_rc_t ompd_initialize(ompd_callbacks_t *data);
ompd_rc_t ompd_initialize(ompd_callbacks_t *data) {
  return data == 0 ? ompd_rc_bad_input : ompd_rc_ok;
}

ompd_rc_t ompd_get_version_string(const char **string);
ompd_rc_t ompd_get_version_string(const char **string) {
  if (string == 0)
    return ompd_rc_bad_input;
  *string = "OMPD 2014-draft fixture";
  return ompd_rc_ok;
}

ompd_rc_t ompd_get_version_compatibility(int *val);
ompd_rc_t ompd_get_version_compatibility(int *val) {
  if (val == 0)
    return ompd_rc_bad_input;
  *val = 201403;
  return ompd_rc_ok;
}

ompd_rc_t ompd_get_error_string(int errcode, const char **string);
ompd_rc_t ompd_get_error_string(int errcode, const char **string) {
  if (string == 0)
    return ompd_rc_bad_input;
  *string = errcode == ompd_rc_ok ? "ok" : "error";
  return ompd_rc_ok;
}

int ompd_enable(int setting);
int ompd_enable(int setting) {
  (void)setting;
  return 0;
}

UNSUPPORTED(ompd_get_threads)
UNSUPPORTED(ompd_get_thread_in_parallel)
UNSUPPORTED(ompd_get_innermost_parallel_region)
UNSUPPORTED(ompd_get_enclosing_parallel_handle)
UNSUPPORTED(ompd_get_top_task_region)
UNSUPPORTED(ompd_get_ancestor_task_handle)
UNSUPPORTED(ompd_get_implicit_task_in_parallel)
UNSUPPORTED(ompd_get_num_procs)
UNSUPPORTED(ompd_get_thread_limit)
UNSUPPORTED(ompd_get_num_threads)
UNSUPPORTED(ompd_get_level)
UNSUPPORTED(ompd_get_active_level)
UNSUPPORTED(ompd_get_parallel_id)
UNSUPPORTED(ompd_get_thread_handle)
UNSUPPORTED(ompd_get_osthread)
UNSUPPORTED(ompd_get_state)
UNSUPPORTED(ompd_get_max_threads)
UNSUPPORTED(ompd_get_thread_num)
UNSUPPORTED(ompd_in_parallel)
UNSUPPORTED(ompd_in_final)
UNSUPPORTED(ompd_get_dynamic)
UNSUPPORTED(ompd_get_nested)
UNSUPPORTED(ompd_get_max_active_levels)
UNSUPPORTED(ompd_get_schedule)
UNSUPPORTED(ompd_get_proc_bind)
UNSUPPORTED(ompd_get_task_frame)
UNSUPPORTED(ompd_get_task_id)
UNSUPPORTED(ompd_get_breakpoints)
UNSUPPORTED(ompd_display_control_vars)
