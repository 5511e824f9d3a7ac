/*
 * An OpenMP target program for the OMPD conformance suite: it stops its threads at a known
 * point and records, through the standard OpenMP API, what an OMPD library should report there.
 *
 * Usage: omp_fixture SCENARIO    (SCENARIO: nested, barrier, serialized, tasks, locks, serial)
 *
 * Protocol, the same for every scenario:
 *   1. main sets two ICVs through the API (omp_set_max_active_levels(FX_MAX_ACTIVE_LEVELS),
 *      omp_set_schedule(omp_sched_dynamic, FX_SCHED_CHUNK)); the environment sets the others.
 *   2. Every recording thread fills its slot of `ompd_fixture_truth` (fixture_truth.h) itself,
 *      calls the OMPT truth tool's `ompd_fixture_ompt_record(slot)` when the tool is loaded
 *      (found with dlsym(RTLD_DEFAULT)), then increments `arrived` and waits until
 *      `arrived == expected`.
 *   3. One spinning thread (the leader) sets `magic`; when the scenario has threads that block
 *      in the runtime (barrier, taskwait, lock, critical) it first sleeps FX_SETTLE_MS so that
 *      they are really blocked. It prints the records as hex (`TRUTH <hex>`, and
 *      `OMPT <hex>` when the tool is loaded: the exact bytes of the two structs), then
 *      `READY <pid>`, and flushes stdout.
 *   4. Threads spin on a volatile flag (polling every millisecond) or block in their wait until
 *      SIGUSR1 sets the flag; then everything unwinds, the program prints `DONE` and exits 0.
 *   A safety alarm (FIXTURE_TIMEOUT seconds, default 300) exits with status 3 if SIGUSR1 never
 *   comes. A bad argument exits with status 2.
 *
 * Slots are assigned by logical position, never by arrival order, so every run of a scenario
 * gives the same records (up to tids, pthread ids and addresses).
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture_truth.h"

/* The layout c_fixtures::truth decodes: arrays of 8-byte words at these word indices. */
_Static_assert(sizeof(struct fx_thread) == 41 * 8, "fx_thread is 41 words");
_Static_assert(offsetof(struct fx_thread, team_size) == 15 * 8, "fx_thread.team_size");
_Static_assert(offsetof(struct fx_thread, in_final) == 23 * 8, "fx_thread.in_final");
_Static_assert(offsetof(struct fx_thread, function) == 40 * 8, "fx_thread.function");
_Static_assert(offsetof(struct fx_truth, threads) == 8 * 8, "fx_truth header is 8 words");
_Static_assert(sizeof(struct fx_truth) == 10560, "fx_truth size");

/* The ICV values main sets through the API before the first parallel region. */
#define FX_MAX_ACTIVE_LEVELS 3
#define FX_SCHED_CHUNK 7
/* How long the leader waits before READY when other threads block in the runtime. */
#define FX_SETTLE_MS 200

enum scenario {
  SC_NESTED = 1,
  SC_BARRIER = 2,
  SC_SERIALIZED = 3,
  SC_TASKS = 4,
  SC_LOCKS = 5,
  SC_SERIAL = 6,
};

static const struct {
  const char *name;
  int number;
  int expected; /* recording threads */
  int blocking; /* some recorded thread blocks in the runtime */
} scenarios[] = {
    {"nested", SC_NESTED, 4, 0},   {"barrier", SC_BARRIER, 4, 1},
    {"serialized", SC_SERIALIZED, 3, 0}, {"tasks", SC_TASKS, 3, 1},
    {"locks", SC_LOCKS, 3, 1},     {"serial", SC_SERIAL, 2, 0},
};

/* The record the harness reads by symbol; kept in .symtab and .dynsym. */
__attribute__((used, visibility("default"))) struct fx_truth ompd_fixture_truth;

static volatile sig_atomic_t released;
static int blocking;
static int leader_slot;

/* The tool's entry point and record, when OMP_TOOL_LIBRARIES loaded libompt_truth.so. */
typedef void (*ompt_record_fn)(int slot);
static ompt_record_fn ompt_record;
static const struct fx_ompt *ompt_truth;

/* Scenario state shared between threads. */
static omp_lock_t lock;
static int tasks_started; /* explicit tasks that began running (atomic) */

static void on_release(int sig) {
  (void)sig;
  released = 1;
}

static void on_alarm(int sig) {
  static const char msg[] = "omp_fixture: timed out before SIGUSR1, exiting\n";
  (void)sig;
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(3);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static int64_t load(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/* Spin in user code (no OpenMP call) until SIGUSR1. */
static void spin_until_released(void) {
  while (!released)
    sleep_ms(1);
}

/* Fill the calling thread's slot through the OpenMP API. `task_id` etc. describe the explicit
 * task the thread runs in (0 / -1 when it runs an implicit task). */
static struct fx_thread *record_common(int slot, enum fx_role role) {
  struct fx_thread *t = &ompd_fixture_truth.threads[slot];
  t->role = role;
  t->tid = gettid();
  t->pthread = (int64_t)pthread_self();
  return t;
}

static void record_omp(int slot, enum fx_role role, int64_t task_id, int64_t task_parent,
                       int64_t task_creator, int64_t task_untied, const void *wait_addr) {
  struct fx_thread *t = record_common(slot, role);
  t->thread_num = omp_get_thread_num();
  t->num_threads = omp_get_num_threads();
  t->level = omp_get_level();
  t->active_level = omp_get_active_level();
  for (int l = 0; l <= t->level && l < FX_MAX_LEVELS; l++) {
    t->ancestor[l] = omp_get_ancestor_thread_num(l);
    t->team_size[l] = omp_get_team_size(l);
  }
  t->in_final = omp_in_final();
  t->max_threads = omp_get_max_threads();
  t->dynamic = omp_get_dynamic();
  t->max_active_levels = omp_get_max_active_levels();
  t->thread_limit = omp_get_thread_limit();
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  t->sched_kind = (int64_t)(uint32_t)kind;
  t->sched_chunk = chunk;
  t->proc_bind = omp_get_proc_bind();
  t->default_device = omp_get_default_device();
  t->num_procs = omp_get_num_procs();
  t->cancellation = omp_get_cancellation();
  t->max_task_priority = omp_get_max_task_priority();
  t->task_id = task_id;
  t->task_parent = task_parent;
  t->task_creator = task_creator;
  t->task_untied = task_untied;
  t->wait_addr = (int64_t)(intptr_t)wait_addr;
  t->function = 0; /* outlined bodies cannot be named from C */
  if (ompt_record != NULL)
    ompt_record(slot);
  __atomic_add_fetch(&ompd_fixture_truth.arrived, 1, __ATOMIC_RELEASE);
}

static void wait_all_arrived(void) {
  while (load(&ompd_fixture_truth.arrived) != ompd_fixture_truth.expected)
    sleep_ms(1);
}

static void print_hex(const char *tag, const void *data, size_t size) {
  const unsigned char *bytes = data;
  printf("%s ", tag);
  for (size_t i = 0; i < size; i++)
    printf("%02x", bytes[i]);
  printf("\n");
}

/* Wait for everyone; the leader then completes the record and announces READY. */
static void arrive(int slot) {
  wait_all_arrived();
  if (slot != leader_slot)
    return;
  if (blocking)
    sleep_ms(FX_SETTLE_MS);
  ompd_fixture_truth.ompt = ompt_truth != NULL && ompt_truth->magic == (int64_t)FX_TRUTH_MAGIC;
  __atomic_store_n(&ompd_fixture_truth.magic, (int64_t)FX_TRUTH_MAGIC, __ATOMIC_RELEASE);
  print_hex("TRUTH", &ompd_fixture_truth, sizeof ompd_fixture_truth);
  if (ompt_truth != NULL)
    print_hex("OMPT", ompt_truth, sizeof *ompt_truth);
  printf("READY %d\n", (int)getpid());
  fflush(stdout);
}

/* nested and barrier: 2 outer threads, each with an inner team of 2. */
static void run_nested(int with_barrier) {
#pragma omp parallel num_threads(2)
  {
    int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
    {
      int inner = omp_get_thread_num();
      int slot = outer * 2 + inner;
      if (!with_barrier && outer == 1 && inner == 1)
        omp_set_dynamic(!omp_get_dynamic()); /* this implicit task's dyn-var only */
      enum fx_role role = with_barrier && inner != 0 ? FX_ROLE_BARRIER : FX_ROLE_SPIN;
      record_omp(slot, role, 0, 0, -1, 0, NULL);
      arrive(slot);
      if (role == FX_ROLE_SPIN)
        spin_until_released();
      if (with_barrier) {
#pragma omp barrier
      }
    }
  }
}

/* serialized: 3 outer threads, each inside a parallel region with if(0). */
static void run_serialized(void) {
#pragma omp parallel num_threads(3)
  {
    int outer = omp_get_thread_num();
#pragma omp parallel if (0)
    {
      record_omp(outer, FX_ROLE_SPIN, 0, 0, -1, 0, NULL);
      arrive(outer);
      spin_until_released();
    }
  }
}

/* tasks: thread 0 creates T1 (untied, runs on thread 1) and T2 (final, runs on thread 2 and
 * creates the included task T3), then waits in taskwait. Threads 1 and 2 pick the tasks up at
 * the implicit barrier ending the region. Each goes there only once its task is queued
 * (go[1], go[2]), so that it finds the task on arrival: a runtime need not wake a thread that
 * already sleeps in the barrier for a task queued later (LLVM with OMP_WAIT_POLICY=passive
 * does not, once the team has had a task). Thread 2 is released only after T1 has started,
 * and thread 0 reaches no task scheduling point between creating a task and seeing it
 * started, so T1 can only run on thread 1 and T2 only on thread 2. */
static volatile int go[3];

static void run_tasks(void) {
#pragma omp parallel num_threads(3)
  {
    int me = omp_get_thread_num();
    if (me == 0) {
#pragma omp task untied
      {
        __atomic_add_fetch(&tasks_started, 1, __ATOMIC_ACQ_REL);
        record_omp(1, FX_ROLE_TASK_SPIN, 1, 0, 0, 1, NULL);
        arrive(1);
        spin_until_released();
      }
      go[1] = 1;
      while (__atomic_load_n(&tasks_started, __ATOMIC_ACQUIRE) < 1)
        sleep_ms(1);
#pragma omp task final(1)
      {
        int creator = omp_get_thread_num();
#pragma omp task
        {
          __atomic_add_fetch(&tasks_started, 1, __ATOMIC_ACQ_REL);
          record_omp(2, FX_ROLE_TASK_SPIN, 3, 2, creator, 0, NULL);
          arrive(2);
          spin_until_released();
        }
      }
      go[2] = 1;
      while (__atomic_load_n(&tasks_started, __ATOMIC_ACQUIRE) < 2)
        sleep_ms(1);
      record_omp(0, FX_ROLE_TASKWAIT, 0, 0, -1, 0, NULL);
      arrive(0);
#pragma omp taskwait
    } else {
      while (!go[me])
        sleep_ms(1);
    }
  }
}

/* locks: thread 0 holds `lock` and the critical section `fx_region`; thread 1 waits for the
 * lock, thread 2 for the critical section. */
static void run_locks(void) {
  omp_init_lock(&lock);
#pragma omp parallel num_threads(3)
  {
    int me = omp_get_thread_num();
    if (me == 0) {
      omp_set_lock(&lock);
#pragma omp critical(fx_region)
      {
        record_omp(0, FX_ROLE_SPIN, 0, 0, -1, 0, NULL);
        arrive(0);
        spin_until_released();
      }
      omp_unset_lock(&lock);
    } else if (me == 1) {
      record_omp(1, FX_ROLE_LOCK, 0, 0, -1, 0, &lock);
      arrive(1);
      omp_set_lock(&lock);
      omp_unset_lock(&lock);
    } else {
      record_omp(2, FX_ROLE_CRITICAL, 0, 0, -1, 0, NULL);
      arrive(2);
#pragma omp critical(fx_region)
      {
        /* entering was the point; nothing to do inside */
      }
    }
  }
  omp_destroy_lock(&lock);
}

/* serial: the foreign thread's body; it never calls OpenMP. */
static void *foreign_thread(void *arg) {
  (void)arg;
  struct fx_thread *t = record_common(1, FX_ROLE_FOREIGN);
  t->function = (int64_t)(intptr_t)&foreign_thread;
  __atomic_add_fetch(&ompd_fixture_truth.arrived, 1, __ATOMIC_RELEASE);
  arrive(1);
  spin_until_released();
  return NULL;
}

/* serial: the initial thread after a parallel region ended, plus a plain pthread. */
static void run_serial(void) {
  int ran = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp atomic
    ran++;
  }
  if (ran != 2) {
    fprintf(stderr, "omp_fixture: the earlier region ran %d threads, not 2\n", ran);
    exit(4);
  }
  pthread_t foreign;
  if (pthread_create(&foreign, NULL, foreign_thread, NULL) != 0) {
    perror("omp_fixture: pthread_create");
    exit(4);
  }
  record_omp(0, FX_ROLE_SERIAL, 0, 0, -1, 0, NULL);
  arrive(0);
  spin_until_released();
  pthread_join(foreign, NULL);
}

int main(int argc, char **argv) {
  int which = -1;
  for (size_t i = 0; argc == 2 && i < sizeof scenarios / sizeof scenarios[0]; i++)
    if (strcmp(argv[1], scenarios[i].name) == 0)
      which = (int)i;
  if (which < 0) {
    fprintf(stderr, "usage: %s nested|barrier|serialized|tasks|locks|serial\n", argv[0]);
    return 2;
  }

  unsigned timeout = 300;
  const char *env_timeout = getenv("FIXTURE_TIMEOUT");
  if (env_timeout != NULL && atoi(env_timeout) > 0)
    timeout = (unsigned)atoi(env_timeout);
  signal(SIGALRM, on_alarm);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_release;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  alarm(timeout);
  /* A breakpoint tour (bp_stop.c preloaded) stops the process at the runtime's breakpoints
   * instead: nothing waits for SIGUSR1 then. */
  const char *tour = getenv("FIXTURE_TOUR");
  released = tour != NULL && strcmp(tour, "1") == 0;

  ompd_fixture_truth.version = FX_TRUTH_VERSION;
  ompd_fixture_truth.scenario = scenarios[which].number;
  ompd_fixture_truth.expected = scenarios[which].expected;
  ompd_fixture_truth.pid = getpid();
  const char *debug = getenv("OMP_DEBUG");
  ompd_fixture_truth.omp_debug = debug != NULL && strcmp(debug, "enabled") == 0;
  blocking = scenarios[which].blocking;
  leader_slot = scenarios[which].number == SC_TASKS ? 1 : 0;

  /* The first OpenMP call initializes the runtime, which loads the OMPT tool if any. */
  omp_set_max_active_levels(FX_MAX_ACTIVE_LEVELS);
  omp_set_schedule(omp_sched_dynamic, FX_SCHED_CHUNK);
  ompt_record = (ompt_record_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ompd_fixture_ompt_record");
  ompt_truth = dlsym(RTLD_DEFAULT, "ompd_fixture_ompt");
  if ((ompt_record == NULL) != (ompt_truth == NULL)) {
    fprintf(stderr, "omp_fixture: the OMPT tool exports only one of its two symbols\n");
    return 4;
  }

  switch (scenarios[which].number) {
  case SC_NESTED:
    run_nested(0);
    break;
  case SC_BARRIER:
    run_nested(1);
    break;
  case SC_SERIALIZED:
    run_serialized();
    break;
  case SC_TASKS:
    run_tasks();
    break;
  case SC_LOCKS:
    run_locks();
    break;
  case SC_SERIAL:
    run_serial();
    break;
  }
  alarm(0);
  printf("DONE\n");
  fflush(stdout);
  return 0;
}
