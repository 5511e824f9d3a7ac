/* The bench's floor: an OMPD library that does nothing. It answers the version queries a
 * debugger makes first, ompd_initialize and ompd_process_initialize with ompd_rc_ok, touches no
 * memory of the target, and reads no symbol: a fresh instance of it costs the fork, the dynamic
 * load and the calls themselves, which every library pays before it does any work of its own.
 * It declares its types itself, so it builds without omp-tools.h.
 *
 * Tests build variants of it by defining, before this text, VERSION_STRING (an expression for
 * the version string) and ON_INITIALIZE (statements ompd_initialize runs first). */

#include <stdint.h>

#ifndef VERSION_STRING
#define VERSION_STRING "empty OMPD library (the bench's floor)"
#endif
#ifndef ON_INITIALIZE
#define ON_INITIALIZE
#endif

#define EXPORT __attribute__((visibility("default")))

typedef int ompd_rc_t;
typedef uint64_t ompd_word_t;
enum { ompd_rc_ok = 0 };

static char address_space;

EXPORT ompd_rc_t ompd_get_api_version(ompd_word_t *version) {
    *version = 201811;
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_version_string(const char **string) {
    *string = VERSION_STRING;
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_initialize(ompd_word_t version, const void *callbacks) {
    (void)version;
    (void)callbacks;
    ON_INITIALIZE
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_finalize(void) { return ompd_rc_ok; }

EXPORT ompd_rc_t ompd_process_initialize(void *context, void **handle) {
    (void)context;
    *handle = &address_space;
    return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_rel_address_space_handle(void *handle) {
    (void)handle;
    return ompd_rc_ok;
}
