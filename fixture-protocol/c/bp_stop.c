/*
 * Breakpoint stops for the OMPD conformance suite's fixture programs (`libbp_stop.so`,
 * preloaded with LD_PRELOAD). It makes the process stop itself, all threads at once, each time
 * the OpenMP runtime passes one of its OMPD breakpoint functions, as a debugger's all-stop
 * breakpoint would; the harness then inspects the stopped process and continues it.
 *
 * Protocol:
 *   - The runtimes keep their `ompd_bp_*` functions out of `.dynsym`, so the harness reads
 *     them from the runtime's `.symtab` and passes them in `OMPD_FIXTURE_BREAKPOINTS`:
 *     `NAME=OFFSET` pairs (OFFSET in hex from the runtime's load base, the base dladdr gives
 *     for its `omp_get_num_threads`), separated by spaces. The constructor (the runtime is a
 *     DT_NEEDED library, mapped before any constructor runs) installs a SIGTRAP handler and
 *     writes an int3 over the first byte of each.
 *   - On a trap at one of them, the handler (one thread at a time) fills `ompd_fixture_stop`
 *     (sequence number, breakpoint, thread id, passes per breakpoint) and, when the OMPT truth
 *     tool installed `ompd_fixture_view`, the runtime's own OMPT view of the thread there (its
 *     region's data and team size, its task's data and that task's region's data), prints
 *     `BP <seq> <name> <tid>` (followed by the four view values when there is a view) on
 *     stderr (unbuffered, and apart from the program's own stdout, whose buffered output could
 *     cut a line in two), and stops the whole process with SIGSTOP.
 *   - After SIGCONT it returns from the breakpoint function on the thread's behalf (the OMPD
 *     breakpoint functions have no effect, by their definition), so the runtime goes on.
 *   - `BPSTOP armed <n>` is printed (on stderr) once the constructor armed n breakpoints.
 * A trap anywhere else is re-raised with the default action (a crash, as without the shim).
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define FX_STOP_MAGIC 0x4f4d504453544f50LL /* "OMPDSTOP" */
#define NBP 8

static const char *const names[NBP] = {
    "ompd_bp_thread_begin",   "ompd_bp_thread_end",   "ompd_bp_parallel_begin",
    "ompd_bp_parallel_end",   "ompd_bp_task_begin",   "ompd_bp_task_end",
    "ompd_bp_device_begin",   "ompd_bp_device_end",
};

/* The record the harness reads by symbol: 8-byte words. `kind` indexes `names`. */
struct fx_stop {
  int64_t magic;
  int64_t seq;
  int64_t kind;
  int64_t tid;
  int64_t passes[NBP];
  int64_t viewed;
  int64_t view[4];
};
_Static_assert(sizeof(struct fx_stop) == 17 * 8, "fx_stop is 17 words");

__attribute__((used, visibility("default"))) volatile struct fx_stop ompd_fixture_stop;
/* Set by the OMPT truth tool (ompt_truth.c) when it initializes. */
__attribute__((used, visibility("default"))) void (*ompd_fixture_view)(int64_t *out);

static uintptr_t addresses[NBP];
static int lock;

static int breakpoint_at(uintptr_t pc) {
  for (int i = 0; i < NBP; i++)
    if (addresses[i] != 0 && addresses[i] == pc)
      return i;
  return -1;
}

/* Appends the decimal digits of `v` to `p`; returns the new end. */
static char *put_number(char *p, int64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0)
    *p++ = digits[--n];
  return p;
}

static void announce(int64_t seq, int kind, int64_t tid, const int64_t *view) {
  char line[192];
  char *p = line;
  memcpy(p, "BP ", 3);
  p = put_number(p + 3, seq);
  *p++ = ' ';
  size_t len = strlen(names[kind]);
  memcpy(p, names[kind], len);
  p += len;
  *p++ = ' ';
  p = put_number(p, tid);
  for (int i = 0; view != NULL && i < 4; i++) {
    *p++ = ' ';
    p = put_number(p, view[i] < 0 ? 0 : view[i]);
  }
  *p++ = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, (size_t)(p - line));
  (void)ignored;
}

static void on_trap(int sig, siginfo_t *info, void *context) {
  (void)info;
  ucontext_t *uc = context;
  greg_t *regs = uc->uc_mcontext.gregs;
  int kind = breakpoint_at((uintptr_t)regs[REG_RIP] - 1);
  if (kind < 0) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  while (__atomic_test_and_set(&lock, __ATOMIC_ACQUIRE))
    syscall(SYS_sched_yield);
  int64_t tid = syscall(SYS_gettid);
  int64_t seq = ompd_fixture_stop.seq + 1;
  ompd_fixture_stop.seq = seq;
  ompd_fixture_stop.kind = kind;
  ompd_fixture_stop.tid = tid;
  ompd_fixture_stop.passes[kind]++;
  int64_t view[4] = {0, 0, 0, 0};
  ompd_fixture_stop.viewed = ompd_fixture_view != NULL;
  if (ompd_fixture_view != NULL)
    ompd_fixture_view(view);
  for (int i = 0; i < 4; i++)
    ompd_fixture_stop.view[i] = view[i];
  announce(seq, kind, tid, ompd_fixture_view != NULL ? view : NULL);
  kill(getpid(), SIGSTOP);
  __atomic_clear(&lock, __ATOMIC_RELEASE);
  /* Return from the breakpoint function: the trap hit its first byte, so the stack pointer
   * still points at the return address. */
  uintptr_t sp = (uintptr_t)regs[REG_RSP];
  regs[REG_RIP] = (greg_t)(*(uintptr_t *)sp);
  regs[REG_RSP] = (greg_t)(sp + 8);
}

static int patch(uintptr_t address) {
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t start = address & ~(uintptr_t)(page - 1);
  size_t span = (size_t)(address + 1 - start);
  if (mprotect((void *)start, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
    return -1;
  *(volatile unsigned char *)address = 0xcc;
  return mprotect((void *)start, span, PROT_READ | PROT_EXEC);
}

/* The load base of the OpenMP runtime: the object defining omp_get_num_threads. */
static uintptr_t runtime_base(void) {
  void *f = dlsym(RTLD_DEFAULT, "omp_get_num_threads");
  Dl_info info;
  if (f == NULL || dladdr(f, &info) == 0)
    return 0;
  return (uintptr_t)info.dli_fbase;
}

/* Arms the breakpoint `name` (one of `names`) at `base + offset`; returns 1 when armed. */
static int arm_one(const char *name, size_t len, uintptr_t base, uintptr_t offset) {
  for (int i = 0; i < NBP; i++)
    if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0 && addresses[i] == 0 &&
        patch(base + offset) == 0) {
      addresses[i] = base + offset;
      return 1;
    }
  return 0;
}

/* Arms every `NAME=OFFSET` pair of `spec`; returns how many. */
static int arm_all(const char *spec, uintptr_t base) {
  int armed = 0;
  while (*spec != '\0') {
    while (*spec == ' ')
      spec++;
    const char *eq = strchr(spec, '=');
    if (eq == NULL)
      break;
    char *end;
    uintptr_t offset = (uintptr_t)strtoull(eq + 1, &end, 16);
    armed += arm_one(spec, (size_t)(eq - spec), base, offset);
    spec = end;
  }
  return armed;
}

__attribute__((constructor)) static void arm(void) {
  const char *spec = getenv("OMPD_FIXTURE_BREAKPOINTS");
  uintptr_t base = runtime_base();
  if (spec == NULL || base == 0)
    return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTRAP, &sa, NULL);
  ompd_fixture_stop.magic = FX_STOP_MAGIC;
  char line[32] = "BPSTOP armed ";
  char *p = put_number(line + 13, arm_all(spec, base));
  *p++ = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, (size_t)(p - line));
  (void)ignored;
}
