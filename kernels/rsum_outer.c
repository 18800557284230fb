/* kernels/rsum_outer.c: the reproducible accumulator on the sums of a
 * tall-skinny product of float rows, r[p * ny + q] += sum_i x[p][i] y[q][i]
 * (the weight gradient of a layer over a chunk of samples), in one pass per
 * pair with no buffer and no max scan. The state reached is the one rsum_add
 * reaches on the same products (rsum.c: bins are canonical, so the result does
 * not depend on how the values are grouped); only the work differs:
 *   - rows are widened to double once per group of rows and scaled by a power
 *     of two (exact), 2^-e with e the exponent of the row's max |value|;
 *   - a pair's top bin is taken from the bound max|x_p| max|y_q| >= max
 *     |x_p[i] y_q[i]|, so the 3-fold split (the same add-and-subtract
 *     roundings as rsum.c, with the magic constants scaled by the same power of
 *     two) runs while the products are formed;
 *   - the bound's bin is the products' own bin exactly when some product
 *     reaches half a unit of the top bin, i.e. when some fold-0 part is
 *     nonzero (the OR of their bits says so). Otherwise the true max lies in a
 *     lower bin (or a product is exactly half a unit): that pair is redone by
 *     rsum_add_fdot, which scans the max first. Rows with an Inf or NaN go
 *     there too.
 * Costs about 12 vector operations per 4 products (the fold arithmetic),
 * against 2 per 8 for a float multiply-add. */
#include "reduce.h"
#include "reduce_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 32-byte vectors returned by always-inlined helpers: no call, no ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef rs_v4d v4d;
typedef int64_t v4l __attribute__((vector_size(32)));
typedef float   v4f __attribute__((vector_size(16)));
typedef float   v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

#define AI   static inline __attribute__((always_inline))
#define OSUB 256 /* samples per pass: the scaled rows of a group stay in L1/L2 */
#define OGRP 16  /* y rows widened at a time */

AI double pow2(int e) /* 2^e for -1022 <= e <= 1023 */
{
  uint64_t b = (uint64_t)(e + 1023) << 52;
  double   d;
  memcpy(&d, &b, sizeof d);
  return d;
}

AI int exponent(double v) /* frexp's exponent of a normal v: v = f 2^e, 0.5 <= |f| < 1 */
{
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return (int)((b >> 52) & 0x7ff) - 1022;
}

/* Row x[0..m) widened into xs[0..m4) (zero padding), scaled by 2^-e. Returns
 * max |x| (0 for a zero row, -1 when the row holds an Inf or NaN). */
AI double widen(size_t m, size_t m4, const float *x, double *xs, int *e)
{
  v8f    mx = {0}, chk = {0};
  size_t i  = 0;
  for (; i + 8 <= m; i += 8) {
    v8f v;
    memcpy(&v, x + i, sizeof v);
    v8f a = (v8f)((v8i)v & 0x7fffffff);
    v8i gt = a > mx;
    mx     = (v8f)((gt & (v8i)a) | (~gt & (v8i)mx));
    chk += v * 0.0f;
  }
  float fm = 0.0f, fc = 0.0f;
  for (int t = 0; t < 8; t++) fm = mx[t] > fm ? mx[t] : fm, fc += chk[t];
  for (; i < m; i++) fm = fabsf(x[i]) > fm ? fabsf(x[i]) : fm, fc += x[i] * 0.0f;
  if (fc != 0.0f) return -1.0; /* NaN: some value was Inf or NaN */
  if (fm == 0.0f) return 0.0;
  *e = exponent((double)fm);
  const double s = pow2(-*e);
  for (i = 0; i + 4 <= m; i += 4) {
    v4f v;
    memcpy(&v, x + i, sizeof v);
    v4d w = __builtin_convertvector(v, v4d) * s;
    memcpy(xs + i, &w, sizeof w);
  }
  for (; i < m4; i++) xs[i] = i < m ? (double)x[i] * s : 0.0;
  return (double)fm;
}


/* One pair: the 3-fold split of xs[i] ys[i] under the bound's top bin. Returns
 * 0 when the bound's bin is not the products' own (the caller redoes it).
 * OU independent 4-wide chains per step: the split is a chain of dependent
 * additions, and interleaving keeps the pipes busy (m4 is padded to 4 OUMAX). */
#define OUMAX 8
#define PAIR(NAME, ATTR, FOLD, OU)                                                                                            \
  static inline __attribute__((always_inline)) ATTR int NAME(rsum_t *r, size_t m4, const double *xs, const double *ys, double bound, int exy) \
  {                                                                                                                            \
    int       eb  = exponent(bound) + RSUM_W; /* rsum_top_bin without frexp: bound is normal */                                \
    int32_t   top = (eb >= 0 ? eb / RSUM_W : -((-eb + RSUM_W - 1) / RSUM_W)) - 1;                                               \
    int       E   = top * RSUM_W - exy; /* fold-0 unit 2^(top W), in the scaled products */                                   \
    const v4d M0 = (v4d){1.5, 1.5, 1.5, 1.5} * pow2(52 + E), M1 = M0 * 0x1p-40, M2 = M0 * 0x1p-80;                              \
    rs_v4u    S[RSUM_FOLD] = {{0}, {0}, {0}};                                                                                \
    v4l       any = {0};                                                                                                      \
    for (size_t i = 0; i < m4; i += 4 * (OU)) {                                                                              \
      v4d v[OU];                                                                                                              \
      for (int u = 0; u < (OU); u++) {                                                                                        \
        v4d a, b;                                                                                                             \
        memcpy(&a, xs + i + 4 * u, sizeof a);                                                                                 \
        memcpy(&b, ys + i + 4 * u, sizeof b);                                                                                 \
        v[u] = a * b;                                                                                                         \
      }                                                                                                                       \
      for (int u = 0; u < (OU); u++) any |= (v4l)FOLD(v[u], M0, M1, M2, S);                                                   \
    }                                                                                                                         \
    any &= 0x7fffffffffffffffLL; /* -0 is no part */                                                                          \
    if (!(any[0] | any[1] | any[2] | any[3])) return 0;                                                                       \
    __int128 c[RSUM_FOLD] = {rsum_fold_count(S[0], m4, M0[0]), rsum_fold_count(S[1], m4, M1[0]), rsum_fold_count(S[2], m4, M2[0])}; \
    rsum_add_bins(r, top, c);                                                                                                 \
    return 1;                                                                                                                 \
  }

/* The pass over a chunk's rows: groups of OGRP y rows widened, each x row
 * widened once per group, every pair of the group split while its rows are in
 * L1. */
#define OUTER(NAME, ATTR, PAIRFN)                                                                                             \
  ATTR static void NAME(rsum_t *r, size_t n, size_t nx, const float *x, size_t ldx, size_t ny, const float *y, size_t ldy)    \
  {                                                                                                                            \
    double xs[OSUB], ys[OGRP][OSUB], ymax[OGRP];                                                                               \
    int    ey[OGRP], ex = 0;                                                                                                   \
    for (size_t i0 = 0; i0 < n; i0 += OSUB) {                                                                                  \
      size_t m = n - i0 < OSUB ? n - i0 : OSUB, m4 = (m + 4 * OUMAX - 1) / (4 * OUMAX) * (4 * OUMAX);                            \
      for (size_t q0 = 0; q0 < ny; q0 += OGRP) {                                                                               \
        size_t nq = ny - q0 < OGRP ? ny - q0 : OGRP;                                                                           \
        for (size_t q = 0; q < nq; q++) ymax[q] = widen(m, m4, y + (q0 + q) * ldy + i0, ys[q], &ey[q]);                         \
        for (size_t p = 0; p < nx; p++) {                                                                                      \
          const float *xp   = x + p * ldx + i0;                                                                                \
          double       xmax = widen(m, m4, xp, xs, &ex);                                                                       \
          for (size_t q = 0; q < nq; q++) {                                                                                    \
            rsum_t *rp = &r[p * ny + q0 + q];                                                                                  \
            if (xmax < 0.0 || ymax[q] < 0.0) rsum_add_fdot(rp, m, xp, y + (q0 + q) * ldy + i0); /* Inf or NaN */              \
            else if (xmax == 0.0 || ymax[q] == 0.0) continue;                                     /* all products are zero */  \
            else if (!PAIRFN(rp, m4, xs, ys[q], xmax * ymax[q], ex + ey[q])) rsum_add_fdot(rp, m, xp, y + (q0 + q) * ldy + i0); \
          }                                                                                                                    \
        }                                                                                                                      \
      }                                                                                                                        \
    }                                                                                                                          \
  }

/* Three builds of the same arithmetic (the same bits: kernels_reduce_isa_*
 * run the accumulator's tests on each): generic; AVX2, 4 chains (16 vector
 * registers); AVX-512VL, the same 256-bit code with 32 registers, so 8 chains
 * (bench/bench_rsum times them side by side; docs/performance.md: 16 chains,
 * 512-bit vectors and subtractions moved to the FMA pipes were each slower
 * or no faster on an AMD Zen 4). */
PAIR(pair_generic, , rsum_fold3, 4)
OUTER(outer_generic, , pair_generic)
#if defined(__x86_64__)
PAIR(pair_avx2, __attribute__((target("avx2"))), rsum_fold3, 4)
PAIR(pair_avx512, __attribute__((target("avx512f,avx512vl,avx2"))), rsum_fold3, 8)
OUTER(outer_avx2, __attribute__((target("avx2"))), pair_avx2)
OUTER(outer_avx512, __attribute__((target("avx512f,avx512vl,avx2"))), pair_avx512)
#endif


typedef void outer_fn(rsum_t *, size_t, size_t, const float *, size_t, size_t, const float *, size_t);

/* The widest the CPU runs, or MINIAPP_RSUM_ISA=generic|avx2|avx512 (for the
 * tests that compare them; one this CPU lacks falls back to the widest it has). */
static outer_fn *pick_isa(const char *want)
{
  if (want && !strcmp(want, "generic")) return outer_generic;
#if defined(__x86_64__)
  __builtin_cpu_init();
  int avx2   = __builtin_cpu_supports("avx2");
  int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  if (want && !strcmp(want, "avx2") && avx2) return outer_avx2;
  return avx512 ? outer_avx512 : avx2 ? outer_avx2 : outer_generic;
#else
  return outer_generic;
#endif
}

static outer_fn *outer_fn_now;

static outer_fn *outer_now(void)
{
  outer_fn *f = __atomic_load_n(&outer_fn_now, __ATOMIC_RELAXED);
  if (!f) __atomic_store_n(&outer_fn_now, f = pick_isa(getenv("MINIAPP_RSUM_ISA")), __ATOMIC_RELAXED);
  return f;
}

const char *rsum_outer_set_isa(const char *isa)
{
  __atomic_store_n(&outer_fn_now, pick_isa(isa), __ATOMIC_RELAXED);
  return rsum_outer_isa();
}

const char *rsum_outer_isa(void)
{
  outer_fn *f = outer_now();
#if defined(__x86_64__)
  if (f == outer_avx512) return "avx512";
  if (f == outer_avx2) return "avx2";
#endif
  return f == outer_generic ? "generic" : "?";
}

void rsum_add_outer(rsum_t *r, size_t n, size_t nx, const float *x, size_t ldx, size_t ny, const float *y, size_t ldy) { outer_now()(r, n, nx, x, ldx, ny, y, ldy); }
