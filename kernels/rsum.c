/* kernels/rsum.c: the reproducible (order-independent) accumulator.
 *
 * Algorithm (binned K-fold summation in the spirit of Demmel & Nguyen's
 * ReproBLAS, with integer bins so that merging is exact):
 *   - Bin j holds multiples of 2^(j*W) (W = RSUM_W = 40). Every finite double v
 *     has a canonical split v = sum_j q_j(v) + residual, obtained by rounding
 *     to the nearest multiple of 2^(j*W), j descending. Starting the cascade
 *     at any bin K with |v| < 2^((K+1)W - 1) gives the same q_j (the rounding
 *     at higher bins yields exactly 0), so q_j(v) is a function of v alone.
 *   - A chunk of at most RSUM_CHUNK values finds its max, picks the smallest
 *     such K and extracts RSUM_FOLD = 3 folds with the add-and-subtract trick
 *     (r + M) - M, M = 1.5 2^(52 + KW - kW) for fold k (rsum_lanes.h); the
 *     bits of r + M count each fold in integer lanes (|q| <= 2^(W-1) units,
 *     exact in int64 for a chunk).
 *   - The accumulator keeps only the 3 bins below the top bin seen so far;
 *     merging aligns the bins and adds integers (exact, associative). The
 *     final state is therefore sum_i q_j(v_i) for the 3 bins under the global
 *     maximum's bin: a function of the multiset of values.
 * Error bound: the discarded residuals are at most 2^((T-2)W) / 2 per value,
 * where 2^(TW-1) <= max|v| when the top bin is T, so |error| <= n * 2^-80 *
 * max|v| plus the one rounding of rsum_value (1/2 ulp of the result, 1 ulp
 * when it is subnormal). For n < 2^27 that is below one ulp of max|v|, far
 * below the pairwise tree's log2(n) * u * sum|v|; when every value is a
 * multiple of the lowest kept unit (2^((T-2)W)) the sum is exact and the
 * result is the correctly rounded exact sum, for either sign.
 * Limits: non-finite inputs make the result their own sum (Inf, -Inf or NaN;
 * which NaN, when several with different payloads meet, may depend on the
 * order).
 * Needs IEEE double arithmetic with round-to-nearest and no FMA contraction
 * or reassociation of the extraction (-ffp-contract=off, no -ffast-math). */
#include "rsum.h"
#include "reduce_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define RSUM_CHUNK 1024

void rsum_init(rsum_t *a)
{
  memset(a, 0, sizeof *a);
  a->top = INT32_MIN;
}

/* Add bins c[0..2] (bin index top, top-1, top-2) into a; drops bins below. */
void rsum_add_bins(rsum_t *a, int32_t top, const __int128 *c)
{
  if (a->top == INT32_MIN) {
    a->top = top;
    for (int k = 0; k < RSUM_FOLD; k++) a->bin[k] = c[k];
    return;
  }
  if (top > a->top) { /* shift a down: its lowest bins fall off */
    int32_t d = top - a->top;
    for (int k = RSUM_FOLD - 1; k >= 0; k--) a->bin[k] = (k - d >= 0) ? a->bin[k - d] : 0;
    a->top = top;
  }
  int32_t d = a->top - top; /* c's bin k lands in a's bin k + d */
  for (int k = 0; k + d < RSUM_FOLD; k++) a->bin[k + d] += c[k];
}

void rsum_merge(rsum_t *a, const rsum_t *b)
{
  if (b->nonfinite) {
    a->special   = a->nonfinite ? a->special + b->special : b->special;
    a->nonfinite = 1;
  }
  if (b->top != INT32_MIN) rsum_add_bins(a, b->top, b->bin);
}

/* Bin of a chunk whose max magnitude is mx > 0: smallest K with
 * mx < 2^((K+1)W - 1). With mx = f 2^E, f in [0.5, 1): K = ceil((E+1)/W) - 1. */
static int32_t rsum_top_bin(double mx)
{
  int e;
  (void)frexp(mx, &e);
  int a = e + RSUM_W; /* floor division for negative a as well */
  int q = a >= 0 ? a / RSUM_W : -((-a + RSUM_W - 1) / RSUM_W);
  return q - 1;
}

#define AI static inline __attribute__((always_inline))

static void rsum_nonfinite(rsum_t *a, size_t m, const double *v)
{
  for (size_t i = 0; i < m; i++)
    if (!isfinite(v[i])) {
      a->special   = a->nonfinite ? a->special + v[i] : v[i];
      a->nonfinite = 1;
    }
}

/* The larger of mx and |e|; a NaN, once seen, stays (the chunk's Inf or
 * NaN is then found by !(max < Inf)). */
#define ABS_BITS 0x7fffffffffffffffLL
AI double absmax1(double mx, double e)
{
  double a = fabs(e);
  return a > mx || a != a ? a : mx;
}

AI double rsum_elem1(red_op_t op, int isf, const void *x, const void *y, size_t i)
{
  if (!isf) return red_elem(op, (const double *)x, (const double *)y, i);
  double a = ((const float *)x)[i];
  return op == RED_OP_DOT   ? a * (double)((const float *)y)[i]
       : op == RED_OP_SUMSQ ? a * a
       : op == RED_OP_ASUM  ? fabs(a)
                            : a;
}

/* Vectors returned by always-inlined helpers: no call, no ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"

/* The vector kernels, one build per path (kernels_reduce_isa runs the tests
 * on each; the bits cannot differ: every lane does the same IEEE operations,
 * and the integer sums are exact), each in the lanes of one register
 * (GCC splits a vector wider than the target's registers badly, through the
 * stack): generic 2 (SSE2, NEON), AVX2 4, AVX-512 8. The AVX-512 path runs 8
 * on every CPU that has it: on a Zen 4 (whose 512-bit operations take two
 * 256-bit pipe slots), since the chunks are folded in the pass, 8 lanes took
 * 0.35 against 0.41 ns per value for a dot in cache and the same (0.64)
 * streamed from memory, one thread (docs/performance.md, 2026-11-27); on an
 * Intel Xeon (Emerald Rapids, two 512-bit FMA ports) 0.57 against 0.65 in
 * cache, before that change. */
#define RL         2
#define SUF        generic
#define RMAXI      0
#define RATTR
#define FADD(a, b) ((a) + (b))
#include "rsum_lanes.h"
#if defined(__x86_64__)
#undef RL
#undef SUF
#undef RATTR
#undef FADD
#define RL         4
#define SUF        avx2
#define RMAXI      1
#define RATTR      __attribute__((target("avx2,fma")))
#define FADD(a, b) ((VD)_mm256_fmadd_pd((__m256d)(a), _mm256_set1_pd(1.0), (__m256d)(b)))
#include "rsum_lanes.h"
#undef RL
#undef SUF
#undef RATTR
#undef FADD
#define RL         8
#define SUF        avx512
#define RMAXI      1
#define RATTR      __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define FADD(a, b) ((VD)_mm512_fmadd_pd((__m512d)(a), _mm512_set1_pd(1.0), (__m512d)(b)))
#define UMAX(a, b) ((VL)_mm512_max_epu64((__m512i)(a), (__m512i)(b)))
#include "rsum_lanes.h"
#endif

/* ---- the vector path: the widest the CPU runs, or MINIAPP_RSUM_ISA=generic|
 * avx2|avx512 (the tests that compare them; one the CPU lacks falls back to
 * the widest it has). rsum and gsum_add_outer both take it. */
static const char *const isa_name[] = {"generic", "avx2", "avx512"};
static int               isa_now = -1;

static int isa_pick(const char *want)
{
  int have = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) have = 1;
  if (have && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) have = 2;
#endif
  for (int l = 0; want && l < have; l++)
    if (!strcmp(want, isa_name[l])) return l;
  return have;
}

int rsum_isa_level(void)
{
  int l = __atomic_load_n(&isa_now, __ATOMIC_RELAXED);
  if (l < 0) __atomic_store_n(&isa_now, l = isa_pick(getenv("MINIAPP_RSUM_ISA")), __ATOMIC_RELAXED);
  return l;
}

const char *rsum_isa(void) { return isa_name[rsum_isa_level()]; }

const char *rsum_set_isa(const char *isa)
{
  __atomic_store_n(&isa_now, isa_pick(isa), __ATOMIC_RELAXED);
  return rsum_isa();
}

int rsum_lanes(void) { return 2 << rsum_isa_level(); } /* generic 2, AVX2 4, AVX-512 8 */

typedef void serial_fn(rsum_t *, red_op_t, int, size_t, const void *, const void *);
typedef void sumsq_dot_fn(rsum_t *, rsum_t *, size_t, const double *, const double *);

static void rsum_add_serial(rsum_t *a, red_op_t op, int isf, size_t n, const void *x, const void *y)
{
  static serial_fn *const f[] = {rsum_add_serial_generic,
#if defined(__x86_64__)
                                 rsum_add_serial_avx2, rsum_add_serial_avx512
#endif
  };
  f[rsum_isa_level()](a, op, isf, n, x, y);
}

void rsum_add_fdot(rsum_t *a, size_t n, const float *x, const float *y) { rsum_add_serial(a, RED_OP_DOT, 1, n, x, y); }

void rsum_add_sumsq_dot(rsum_t *a, rsum_t *b, size_t n, const double *z, const double *r)
{
  static sumsq_dot_fn *const f[] = {rsum_sumsq_dot_generic,
#if defined(__x86_64__)
                                    rsum_sumsq_dot_avx2, rsum_sumsq_dot_avx512
#endif
  };
  f[rsum_isa_level()](a, b, n, z, r);
}

void rsum_add(rsum_t *a, red_op_t op, size_t n, const double *x, const double *y)
{
  size_t nchunk = (n + RSUM_CHUNK - 1) / RSUM_CHUNK;
  if (nchunk < RED_PAR_MIN_BLOCKS) {
    rsum_add_serial(a, op, 0, n, x, y);
    return;
  }
#pragma omp parallel
  {
    rsum_t loc;
    rsum_init(&loc);
#pragma omp for schedule(static) nowait /* no barrier: each thread merges when its chunks are done */
    for (size_t c = 0; c < nchunk; c++) {
      size_t i0 = c * RSUM_CHUNK, m = n - i0 < RSUM_CHUNK ? n - i0 : RSUM_CHUNK;
      rsum_add_serial(&loc, op, 0, m, x + i0, op == RED_OP_DOT ? y + i0 : y);
    }
#pragma omp critical(rsum_merge)
    rsum_merge(a, &loc); /* exact, so the arrival order does not matter */
  }
}

/* Carry the bins into base-2^W digits: b[1], b[2] in [0, 2^W), b[0] any
 * sign, so that the exact value b0 2^2W + b1 2^W + b2 keeps its sign in b0
 * (0 <= the rest < 2^2W). */
static void rsum_carry(__int128 *b)
{
  for (int k = RSUM_FOLD - 1; k > 0; k--) {
    __int128 carry = b[k] >> RSUM_W; /* arithmetic shift: floor */
    b[k] -= carry * ((__int128)1 << RSUM_W);
    b[k - 1] += carry;
  }
}

/* The exact accumulated value, rounded once to the nearest double (ties to
 * even): its magnitude as one unsigned integer of at most 128 bits whose
 * lowest bit also records ("sticky") any nonzero bits shifted out, then one
 * correctly rounded integer-to-double conversion. A fixed procedure on an
 * order-free state, so the result is reproducible. Rounding to a subnormal
 * result happens twice (ldexp): at most 1 ulp there. An exact zero is +0.0
 * whatever the signs of the zero summands: the GPU's binned partials do not
 * carry them, and +0.0 keeps CPU and GPU bits equal. */
double rsum_value(const rsum_t *a)
{
  if (a->nonfinite) return a->special;
  if (a->top == INT32_MIN) return 0.0;
  __int128 b[RSUM_FOLD];
  memcpy(b, a->bin, sizeof b);
  rsum_carry(b);
  int neg = b[0] < 0;
  if (neg) { /* |V| = -V: negate the digits and carry again (b[0] >= 0 after) */
    for (int k = 0; k < RSUM_FOLD; k++) b[k] = -b[k];
    rsum_carry(b);
  }
  if (!b[0] && !b[1] && !b[2]) return 0.0;
  typedef unsigned __int128 u128;
  const __int128 lim47 = (__int128)1 << 47, lim87 = (__int128)1 << 87;
  u128 v;
  int  e = (a->top - 2) * RSUM_W; /* exponent of the unit of b[2] */
  if (b[0] < lim47) v = ((u128)b[0] << (2 * RSUM_W)) | ((u128)b[1] << RSUM_W) | (u128)b[2]; /* < 2^127: exact */
  else if (b[0] < lim87) { /* >= 2^127: b[2] only decides ties, as a sticky bit below 88 leading bits */
    v = ((((u128)b[0] << RSUM_W) | (u128)b[1]) << 1) | (u128)(b[2] != 0);
    e += RSUM_W - 1;
  } else {
    v = ((u128)b[0] << 1) | (u128)(b[1] != 0 || b[2] != 0);
    e += 2 * RSUM_W - 1;
  }
  double r = ldexp((double)v, e); /* (double) of an integer: correctly rounded */
  return neg ? -r : r;
}
