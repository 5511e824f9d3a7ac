/*
 * The dependency of the UNDECLARED_DEP fixture of broken_ompd.c: a tiny shared library that the
 * fixture calls but is deliberately not linked against (it is missing from DT_NEEDED), so
 * loading the fixture fails with an undefined symbol unless this library is preloaded with
 * RTLD_GLOBAL.
 */

int ompd_fixture_dep_value(void);

/* Always 0: the fixture only needs the symbol to resolve. */
int ompd_fixture_dep_value(void) { return 0; }
