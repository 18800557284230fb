/* kernels/fault.h: seeded bit-flip injection for the fault-detection study
 * (docs/faults.md). Plain C, no PETSc/MPI, compiled into every build.
 *
 * A driver parses one spec (fault_parse), and arms it (fault_arm, on its
 * fault_ctx) only around the replica's step or epoch it targets. Each site
 * calls fault_hit_*() on the data it has just produced, with the fault_ctx its
 * object holds: NULL unless faults are injected, so that injection costs one
 * branch when off.
 * When armed, the hit counts its calls during the arming; on the spec's
 * `call`-th one it flips `bit` of global entry `entry` (if this process holds
 * it) and fills the record. Sites:
 *   solver    state      u^{n+1} after the step's solve (double)
 *             iterate    the Krylov iterate x after iteration `call`
 *             operator   y = A p of the `call`-th operator application
 *   surrogate gradient   the batch gradient after the reduction (float, every
 *                        rank holds all of it)
 *             weight     a parameter, before the epoch's train step
 *             activation output of layer `call` (1 = first hidden) in the
 *                        training forward pass, entry = sample * width + unit
 *                        over the global batch
 * Bits: 0 is the least significant mantissa bit; double 52-62 exponent,
 * 63 sign; float 23-30 exponent, 31 sign. */
#ifndef MINIAPP_KERNELS_FAULT_H
#define MINIAPP_KERNELS_FAULT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  FAULT_STATE,
  FAULT_ITERATE,
  FAULT_OPERATOR,
  FAULT_GRADIENT,
  FAULT_WEIGHT,
  FAULT_ACTIVATION,
  FAULT_NSITES
} fault_site;
extern const char *const fault_site_names[FAULT_NSITES];

typedef struct {
  fault_site site;
  long long  at;      /* solver sites: the step that produces state `at` (1..nsteps); surrogate sites: epoch (from 0) */
  int        replica;
  long long  entry;   /* global entry; -1: seeded random */
  int        bit;     /* -1: seeded random */
  long long  call;    /* iterate: Krylov iteration; operator: application; activation: layer; else 1 */
  uint64_t   seed;
} fault_spec;

typedef struct {
  int        fired;   /* this process flipped (every rank does for replicated data) */
  fault_site site;
  long long  at, entry;
  int        replica, bit;
  long long  nentries; /* the global array's size at the armed call (0: never reached) */
  double     old_value, new_value;
} fault_record;

/* Parses "site=S,step=N|epoch=N[,replica=R][,entry=E|random][,bit=B|random]
 * [,call=K][,seed=X]" (defaults: replica 0... see fault.c). 0, or -1 with one
 * line in err naming what is wrong. */
int  fault_parse(const char *text, fault_spec *spec, char *err, size_t errlen);
int  fault_site_is_solver(fault_site s);
int  fault_site_bits(fault_site s); /* 64 (double) or 32 (float) */

/* One fault experiment's state: what is armed, the calls counted while it
 * is, and the record of the flip. Owned by the run's fault experiment; the
 * sites reach it through the objects they belong to (a NULL pointer there
 * unless -inject asks for faults), so that a site costs one branch when off. */
typedef struct fault_ctx {
  int          armed; /* the site armed now (-1: none) */
  fault_spec   spec;
  fault_record rec;
  long long    calls;
} fault_ctx;

void fault_init(fault_ctx *f);                      /* nothing armed */
void fault_arm(fault_ctx *f, const fault_spec *spec); /* clears the record */
void fault_disarm(fault_ctx *f);
const fault_record *fault_get_record(const fault_ctx *f);

/* x[0..n) are entries offset .. offset+n-1 of a global array of N entries.
 * Returns 1 when this call flipped a bit. f may be NULL (no injection). */
int fault_hit_double_(fault_ctx *f, fault_site s, double *x, size_t n, long long offset, long long N);
int fault_hit_float_(fault_ctx *f, fault_site s, float *x, size_t n, long long offset, long long N);
#define fault_is_armed(f, s) ((f) && (f)->armed == (int)(s))
#define fault_hit_double(f, s, x, n, off, N) (fault_is_armed(f, s) ? fault_hit_double_(f, s, x, n, off, N) : 0)
#define fault_hit_float(f, s, x, n, off, N)  (fault_is_armed(f, s) ? fault_hit_float_(f, s, x, n, off, N) : 0)
/* The same in two halves, for a site whose data is produced in pieces (a
 * fused pass): take this call's local index to flip (-1: none; counts the
 * call as a hit does), then flip that entry once it is produced. */
long long fault_take_(fault_ctx *f, fault_site s, size_t n, long long offset, long long N);
#define fault_take(f, s, n, off, N) (fault_is_armed(f, s) ? fault_take_(f, s, n, off, N) : -1)
void fault_flip_double(fault_ctx *f, double *v);

#endif
