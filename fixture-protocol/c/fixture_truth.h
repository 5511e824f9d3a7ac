/* The first-party truth an OpenMP fixture program records for the conformance suite.
 *
 * A fixture fills `ompd_fixture_truth` (in the executable) through the standard OpenMP API; the
 * OMPT tool `libompt_truth.so`, when loaded through OMP_TOOL_LIBRARIES, fills
 * `ompd_fixture_ompt` (in the tool library) through the OMPT inquiry functions. The harness reads
 * both from the target's memory by symbol (the same way for live processes and core files), and
 * decodes them with `c_fixtures::truth` (Rust), which mirrors this header: every field is an
 * int64_t in native (x86-64: little-endian) byte order, so the layout is an array of 8-byte words.
 * Bump FX_TRUTH_VERSION on any change.
 */
#ifndef OMPD_FIXTURE_TRUTH_H
#define OMPD_FIXTURE_TRUTH_H

#include <stdint.h>

#define FX_TRUTH_MAGIC 0x4f4d5044545255ULL /* "OMPDTRU" */
#define FX_TRUTH_VERSION 1
#define FX_MAX_THREADS 32
#define FX_MAX_LEVELS 8 /* index 0 .. FX_MAX_LEVELS-1 */

/* What a recorded thread is doing at the stop point. */
enum fx_role {
    FX_ROLE_NONE = 0,          /* slot unused */
    FX_ROLE_SPIN = 1,          /* spinning in user code in an implicit task */
    FX_ROLE_BARRIER = 2,       /* waiting in an explicit `#pragma omp barrier` */
    FX_ROLE_TASKWAIT = 3,      /* waiting in `#pragma omp taskwait` */
    FX_ROLE_CRITICAL = 4,      /* waiting to enter a `#pragma omp critical` another thread holds */
    FX_ROLE_LOCK = 5,          /* waiting in omp_set_lock on a lock another thread holds */
    FX_ROLE_TASK_SPIN = 6,     /* spinning in user code inside an explicit task */
    FX_ROLE_SERIAL = 7,        /* the initial thread outside any parallel region */
    FX_ROLE_FOREIGN = 8,       /* a plain pthread that never called OpenMP */
};

/* One thread, recorded by the thread itself just before it stops. */
struct fx_thread {
    int64_t role;               /* enum fx_role */
    int64_t tid;                /* gettid() */
    int64_t pthread;            /* (int64_t)pthread_self() */
    int64_t thread_num;         /* omp_get_thread_num() */
    int64_t num_threads;        /* omp_get_num_threads() */
    int64_t level;              /* omp_get_level() */
    int64_t active_level;       /* omp_get_active_level() */
    int64_t ancestor[FX_MAX_LEVELS];  /* omp_get_ancestor_thread_num(l), l = 0..level */
    int64_t team_size[FX_MAX_LEVELS]; /* omp_get_team_size(l), l = 0..level */
    int64_t in_final;           /* omp_in_final() */
    int64_t max_threads;        /* omp_get_max_threads() */
    int64_t dynamic;            /* omp_get_dynamic() */
    int64_t max_active_levels;  /* omp_get_max_active_levels() */
    int64_t thread_limit;       /* omp_get_thread_limit() */
    int64_t sched_kind;         /* omp_get_schedule(): kind (omp_sched_t, modifier bits kept) */
    int64_t sched_chunk;        /* omp_get_schedule(): chunk */
    int64_t proc_bind;          /* omp_get_proc_bind() */
    int64_t default_device;     /* omp_get_default_device() */
    int64_t num_procs;          /* omp_get_num_procs() */
    int64_t cancellation;       /* omp_get_cancellation() */
    int64_t max_task_priority;  /* omp_get_max_task_priority() */
    int64_t task_id;            /* fixture id (>0) of the explicit task the thread is in, else 0 */
    int64_t task_parent;        /* fixture id of the explicit task that generated it, 0 = an implicit task */
    int64_t task_creator;       /* omp_get_thread_num() of the thread that created the task */
    int64_t task_untied;        /* the explicit task is untied */
    int64_t wait_addr;          /* FX_ROLE_LOCK: address of the omp_lock_t waited on; else 0 */
    int64_t function;           /* address of the user function this thread runs (outlined body
                                   cannot be named from C: 0 = not recorded) */
};

/* The whole record, in the executable as `ompd_fixture_truth`. */
struct fx_truth {
    int64_t magic;       /* FX_TRUTH_MAGIC once the record is complete (READY printed) */
    int64_t version;     /* FX_TRUTH_VERSION */
    int64_t scenario;    /* fixture scenario number (see the fixture's usage) */
    int64_t expected;    /* threads that record (OpenMP threads + foreign thread) */
    int64_t arrived;     /* threads that recorded */
    int64_t omp_debug;   /* OMP_DEBUG was "enabled" in the environment */
    int64_t ompt;        /* the OMPT truth tool was active (ompt_start_tool ran) */
    int64_t pid;         /* getpid() */
    struct fx_thread threads[FX_MAX_THREADS];
};

/* One thread's OMPT view, recorded by libompt_truth.so when the fixture calls
 * `void ompd_fixture_ompt_record(int slot)` (looked up with dlsym; absent without the tool)
 * right after recording its own truth slot: the OMPT slot has the same index. */
struct fx_ompt_thread {
    int64_t tid;                      /* gettid(), 0 = slot unused */
    int64_t state;                    /* ompt_get_state() */
    int64_t wait_id;                  /* its wait id out-argument */
    int64_t thread_data;              /* thread data value the tool set at thread_begin */
    int64_t parallel_levels;          /* ancestor levels for which ompt_get_parallel_info answered 2 */
    int64_t parallel_data[FX_MAX_LEVELS]; /* parallel data value per ancestor level */
    int64_t parallel_team_size[FX_MAX_LEVELS];
    int64_t task_levels;              /* ancestor levels for which ompt_get_task_info answered 2 */
    int64_t task_flags[FX_MAX_LEVELS];
    int64_t task_data[FX_MAX_LEVELS];     /* task data value per ancestor level */
    int64_t task_parallel_data[FX_MAX_LEVELS]; /* value of the task's parallel data */
    int64_t task_thread_num[FX_MAX_LEVELS];
    int64_t exit_frame[FX_MAX_LEVELS];    /* task_frame->exit_frame.ptr */
    int64_t exit_frame_flags[FX_MAX_LEVELS];
    int64_t enter_frame[FX_MAX_LEVELS];   /* task_frame->enter_frame.ptr */
    int64_t enter_frame_flags[FX_MAX_LEVELS];
};

/* The tool's record, in libompt_truth.so as `ompd_fixture_ompt`. */
struct fx_ompt {
    int64_t magic;     /* FX_TRUTH_MAGIC once ompt_start_tool's initializer ran */
    int64_t version;   /* FX_TRUTH_VERSION */
    int64_t recorded;  /* threads recorded */
    struct fx_ompt_thread threads[FX_MAX_THREADS];
};

#endif
