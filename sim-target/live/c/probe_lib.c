/*
 * The shared library of the live-target test fixture: a static (LOCAL) thread-local variable in
 * a module other than the executable (TLS module id 2 or more), as an OpenMP runtime's
 * `__kmp_gtid` is. `probe_lib_record` stores a value in the calling thread's instance and
 * returns its address.
 */
#include <stdint.h>

__attribute__((used)) static __thread volatile uint64_t probe_lib_tls;

uint64_t probe_lib_record(uint64_t value, uint64_t *stored) {
    probe_lib_tls = value;
    *stored = probe_lib_tls;
    return (uint64_t)(uintptr_t)&probe_lib_tls;
}
