/* miniapp/optstrict.h: what optstrict.c offers besides the strict numeric
 * option readers it interposes. */
#ifndef MINIAPP_OPTSTRICT_H
#define MINIAPP_OPTSTRICT_H

#include <stddef.h>

/* Up to three option names this run asked PETSc for that are nearest to the
 * unknown option "-name", as "-a, -b or -c" (empty when none is near). */
void OptStrictSuggest(const char *unknown, char *buf, size_t len);
/* For the other tools (bench_solver, bench_surrogate): a PETSc error prints
 * one line "<prog>: error: <message>" from rank 0 instead of PETSc's trace. */
int  OptStrictOneLineErrors(const char *prog);

#endif
