/* A test library of the worker's batches: linked -z nodelete, so that unloading leaves it in
 * place, it says in its version string whether ompd_initialize has run in this instance. A
 * batch's unit that got an instance an earlier unit used would see "initialized". Built with
 * CHANGES_SIGNALS defined, its ompd_initialize also installs a SIGUSR2 handler: a change of the
 * process, after which a worker ends its batch. */

#include <stdint.h>
#ifdef CHANGES_SIGNALS
#include <signal.h>
static void on_usr2(int sig) { (void)sig; }
#endif

#define EXPORT __attribute__((visibility("default")))

typedef int ompd_rc_t;
typedef uint64_t ompd_word_t;
enum { ompd_rc_ok = 0 };

static int initialized;
static char address_space;

EXPORT ompd_rc_t ompd_get_api_version(ompd_word_t *version) {
    *version = 201811;
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_version_string(const char **string) {
    *string = initialized ? "initialized" : "never initialized";
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_initialize(ompd_word_t version, const void *callbacks) {
    (void)version;
    (void)callbacks;
#ifdef CHANGES_SIGNALS
    signal(SIGUSR2, on_usr2);
#endif
    initialized = 1;
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_finalize(void) { return ompd_rc_ok; }

EXPORT ompd_rc_t ompd_process_initialize(void *context, void **handle) {
    (void)context;
    *handle = &address_space;
    return ompd_rc_ok;
}
