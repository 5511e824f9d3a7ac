/*
 * libompt_truth.so: an OMPT tool that records, for the OMPD conformance suite, what the OpenMP
 * runtime itself reports through the OMPT inquiry functions.
 *
 * Loaded through OMP_TOOL_LIBRARIES, its `ompt_start_tool` returns an initializer that
 * registers four callbacks, each giving the new data object a distinct value from its own
 * atomically counted series (n = 1, 2, ...):
 *   thread_begin    thread data      0x1000 + n
 *   parallel_begin  parallel data    0x2000 + n
 *                   (the initial parallel region has no parallel_begin: implicit_task for the
 *                   initial task gives its parallel data, if still 0, a value of this series)
 *   implicit_task   task data        0x3000 + n   (scope begin only; initial tasks included)
 *   task_create     task data        0x4000 + n   (explicit tasks)
 *
 * The fixture calls the exported `ompd_fixture_ompt_record(slot)` (found with
 * dlsym(RTLD_DEFAULT): `ompt_start_tool` re-opens this library with RTLD_NOLOAD | RTLD_GLOBAL,
 * since runtimes open tools with local scope) right after recording its own truth slot `slot`;
 * the function fills the same slot of `ompd_fixture_ompt` (fixture_truth.h) for the calling
 * thread: ompt_get_state, ompt_get_thread_data, and ompt_get_parallel_info /
 * ompt_get_task_info for ancestor levels 0, 1, ... until one does not answer 2. The harness
 * reads `ompd_fixture_ompt` from the target by symbol.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp-tools.h>
#include <stdint.h>
#include <stddef.h>
#include <unistd.h>

#include "fixture_truth.h"

/* The layout c_fixtures::truth decodes: arrays of 8-byte words at these word indices. */
_Static_assert(sizeof(struct fx_ompt_thread) == 86 * 8, "fx_ompt_thread is 86 words");
_Static_assert(offsetof(struct fx_ompt_thread, parallel_team_size) == 13 * 8, "team size");
_Static_assert(offsetof(struct fx_ompt_thread, task_levels) == 21 * 8, "task_levels");
_Static_assert(offsetof(struct fx_ompt_thread, enter_frame_flags) == 78 * 8, "frame flags");
_Static_assert(offsetof(struct fx_ompt, threads) == 3 * 8, "fx_ompt header is 3 words");
_Static_assert(sizeof(struct fx_ompt) == 22040, "fx_ompt size");

/* The record the harness reads by symbol (and the fixture through dlsym). */
__attribute__((used, visibility("default"))) struct fx_ompt ompd_fixture_ompt;

static ompt_get_state_t get_state;
static ompt_get_thread_data_t get_thread_data;
static ompt_get_parallel_info_t get_parallel_info;
static ompt_get_task_info_t get_task_info;

/* The four value series: thread, parallel, task (implicit), task (explicit). */
static uint64_t counters[4];
static const uint64_t bases[4] = {0x1000, 0x2000, 0x3000, 0x4000};

static uint64_t next_value(int series) {
  return bases[series] + __atomic_add_fetch(&counters[series], 1, __ATOMIC_RELAXED);
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data) {
  (void)type;
  if (thread_data != NULL)
    thread_data->value = next_value(0);
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
                              const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *parallel_data, unsigned int requested_parallelism,
                              int flags, const void *codeptr_ra) {
  (void)encountering_task_data;
  (void)encountering_task_frame;
  (void)requested_parallelism;
  (void)flags;
  (void)codeptr_ra;
  if (parallel_data != NULL)
    parallel_data->value = next_value(1);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                             ompt_data_t *task_data, unsigned int actual_parallelism,
                             unsigned int index, int flags) {
  (void)actual_parallelism;
  (void)index;
  if (endpoint != ompt_scope_begin)
    return;
  if (task_data != NULL)
    task_data->value = next_value(2);
  if ((flags & ompt_task_initial) && parallel_data != NULL && parallel_data->value == 0)
    parallel_data->value = next_value(1);
}

static void on_task_create(ompt_data_t *encountering_task_data,
                           const ompt_frame_t *encountering_task_frame,
                           ompt_data_t *new_task_data, int flags, int has_dependences,
                           const void *codeptr_ra) {
  (void)encountering_task_data;
  (void)encountering_task_frame;
  (void)flags;
  (void)has_dependences;
  (void)codeptr_ra;
  if (new_task_data != NULL)
    new_task_data->value = next_value(3);
}

static int64_t data_value(const ompt_data_t *data) {
  return data != NULL ? (int64_t)data->value : 0;
}

__attribute__((visibility("default"))) void ompd_fixture_ompt_record(int slot) {
  if (slot < 0 || slot >= FX_MAX_THREADS || get_state == NULL)
    return;
  struct fx_ompt_thread *t = &ompd_fixture_ompt.threads[slot];
  t->tid = gettid();
  ompt_wait_id_t wait_id = 0;
  t->state = get_state(&wait_id);
  t->wait_id = (int64_t)wait_id;
  t->thread_data = data_value(get_thread_data());

  int level = 0;
  for (; level < FX_MAX_LEVELS; level++) {
    ompt_data_t *parallel_data = NULL;
    int team_size = 0;
    if (get_parallel_info(level, &parallel_data, &team_size) != 2)
      break;
    t->parallel_data[level] = data_value(parallel_data);
    t->parallel_team_size[level] = team_size;
  }
  t->parallel_levels = level;

  for (level = 0; level < FX_MAX_LEVELS; level++) {
    int flags = 0, thread_num = -1;
    ompt_data_t *task_data = NULL, *parallel_data = NULL;
    ompt_frame_t *frame = NULL;
    if (get_task_info(level, &flags, &task_data, &frame, &parallel_data, &thread_num) != 2)
      break;
    t->task_flags[level] = flags;
    t->task_data[level] = data_value(task_data);
    t->task_parallel_data[level] = data_value(parallel_data);
    t->task_thread_num[level] = thread_num;
    if (frame != NULL) {
      t->exit_frame[level] = (int64_t)(intptr_t)frame->exit_frame.ptr;
      t->exit_frame_flags[level] = frame->exit_frame_flags;
      t->enter_frame[level] = (int64_t)(intptr_t)frame->enter_frame.ptr;
      t->enter_frame_flags[level] = frame->enter_frame_flags;
    }
  }
  t->task_levels = level;
  __atomic_add_fetch(&ompd_fixture_ompt.recorded, 1, __ATOMIC_RELEASE);
}

/* The runtime's own view of the calling thread at ancestor level 0, for the breakpoint-stop
 * shim (bp_stop.c, which calls it at each stop): the data and team size of the thread's parallel
 * region, the data of its task and of the region that task binds to; 0 where OMPT does not
 * answer. */
static void view_now(int64_t out[4]) {
  ompt_data_t *parallel_data = NULL, *task_data = NULL, *task_parallel = NULL;
  int team_size = 0, flags = 0, thread_num = -1;
  ompt_frame_t *frame = NULL;
  out[0] = out[1] = out[2] = out[3] = 0;
  if (get_parallel_info(0, &parallel_data, &team_size) == 2) {
    out[0] = data_value(parallel_data);
    out[1] = team_size;
  }
  if (get_task_info(0, &flags, &task_data, &frame, &task_parallel, &thread_num) == 2) {
    out[2] = data_value(task_data);
    out[3] = data_value(task_parallel);
  }
}

/* Hands `view_now` to the breakpoint-stop shim when it is preloaded. */
static void offer_view(void) {
  typedef void (*view_fn)(int64_t *);
  view_fn *hook = dlsym(RTLD_DEFAULT, "ompd_fixture_view");
  if (hook != NULL)
    *hook = view_now;
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num,
                      ompt_data_t *tool_data) {
  (void)initial_device_num;
  (void)tool_data;
  ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
  get_state = (ompt_get_state_t)lookup("ompt_get_state");
  get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
  get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
  get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
  if (set_callback == NULL || get_state == NULL || get_thread_data == NULL ||
      get_parallel_info == NULL || get_task_info == NULL) {
    get_state = NULL;
    return 0;
  }
  set_callback(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin);
  set_callback(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
  set_callback(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
  set_callback(ompt_callback_task_create, (ompt_callback_t)on_task_create);
  offer_view();
  ompd_fixture_ompt.version = FX_TRUTH_VERSION;
  __atomic_store_n(&ompd_fixture_ompt.magic, (int64_t)FX_TRUTH_MAGIC, __ATOMIC_RELEASE);
  return 1;
}

static void finalize(ompt_data_t *tool_data) { (void)tool_data; }

__attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  (void)omp_version;
  (void)runtime_version;
  /* Make ompd_fixture_ompt_record and ompd_fixture_ompt visible to dlsym(RTLD_DEFAULT). */
  Dl_info info;
  if (dladdr((const void *)(uintptr_t)&ompd_fixture_ompt_record, &info) != 0 &&
      info.dli_fname != NULL)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  return &result;
}
