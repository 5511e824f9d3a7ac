/*
 * The live-target test fixture: a small multi-threaded program (plain pthreads, no OpenMP) whose
 * threads record what a debugger must find on its own, then wait to be inspected.
 *
 *   probe [WORKERS]     (default 3, at most PROBE_MAX - 1)
 *
 * The main thread (slot 0) and WORKERS pthreads (slots 1..WORKERS) each write into the global
 * array `probe_truth` their gettid(), pthread_self(), the address of their instance of the
 * static (LOCAL) thread-local variable `probe_tls` and the value they stored there, and the same
 * for `probe_lib_tls`, a LOCAL thread-local variable of the shared library `libprobe_lib.so`
 * (`c/probe_lib.c`, another TLS module). The static
 * (LOCAL) global `probe_marker` holds PROBE_MARKER. Once every thread has recorded, the main
 * thread prints `READY <pid>` and every thread waits on a volatile flag that SIGUSR1 sets; then
 * the workers are joined, `DONE` is printed and the program exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROBE_MAX 16
#define PROBE_MARKER 0x5eed0f5ca1ab1e00ull

/* One thread's record; the layout (six 64-bit words) is read back by the tests. */
struct probe_record {
    uint64_t tid;
    uint64_t pthread;
    uint64_t tls_addr;
    uint64_t tls_value;
    uint64_t lib_tls_addr;
    uint64_t lib_tls_value;
};

uint64_t probe_lib_record(uint64_t value, uint64_t *stored);

struct probe_record probe_truth[PROBE_MAX];
int probe_count;

__attribute__((used)) static volatile uint64_t probe_marker = PROBE_MARKER;
__attribute__((used)) static __thread volatile uint64_t probe_tls;

static volatile sig_atomic_t probe_release;
static int probe_arrived;

static void on_usr1(int sig) {
    (void)sig;
    probe_release = 1;
}

static void pause_briefly(void) {
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void record(int slot) {
    probe_tls = 0x7100000000000000ull + (uint64_t)slot * 0x1111;
    probe_truth[slot].tid = (uint64_t)syscall(SYS_gettid);
    probe_truth[slot].pthread = (uint64_t)pthread_self();
    probe_truth[slot].tls_addr = (uint64_t)(uintptr_t)&probe_tls;
    probe_truth[slot].tls_value = probe_tls;
    probe_truth[slot].lib_tls_addr =
        probe_lib_record(0x1b00000000000000ull + (uint64_t)slot, &probe_truth[slot].lib_tls_value);
    __atomic_add_fetch(&probe_arrived, 1, __ATOMIC_SEQ_CST);
}

static void wait_for_release(void) {
    while (!probe_release)
        pause_briefly();
}

static void *worker(void *arg) {
    record((int)(intptr_t)arg);
    wait_for_release();
    return NULL;
}

int main(int argc, char **argv) {
    int workers = argc > 1 ? atoi(argv[1]) : 3;
    if (workers < 0 || workers > PROBE_MAX - 1) {
        fprintf(stderr, "probe: WORKERS must be in 0..%d\n", PROBE_MAX - 1);
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("sigaction");
        return 2;
    }
    probe_count = workers + 1;
    record(0);
    pthread_t threads[PROBE_MAX];
    for (int i = 1; i <= workers; i++) {
        if (pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i) != 0) {
            perror("pthread_create");
            return 2;
        }
    }
    while (__atomic_load_n(&probe_arrived, __ATOMIC_SEQ_CST) < probe_count)
        pause_briefly();
    printf("READY %d\n", (int)getpid());
    fflush(stdout);
    wait_for_release();
    for (int i = 1; i <= workers; i++)
        pthread_join(threads[i], NULL);
    printf("DONE marker=%llx\n", (unsigned long long)probe_marker);
    fflush(stdout);
    return 0;
}
