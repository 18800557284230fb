/* kernels/gsum.c: global-unit sums of float products (gsum.h), the
 * reproducible strategy's weight and bias gradients: r[p][q] += sum_i x_p[i]
 * y_q[i] over a chunk of samples, every product rounded once to the pair's
 * unit U = 2^(ex[p] + ey[q] - 51), fixed in advance by the rows' exponents
 * (gsum_units: within 3 binades above the rows' maxima over the whole batch),
 * and the rounded products added as integers: 64-bit fixed point, as
 * AMBER's SPFP accumulates forces.
 *
 * Why a unit fixed in advance: kernels/rsum.c splits every value at fixed
 * binary boundaries 40 bits apart and keeps three folds, because a chunk
 * cannot know the batch's largest value. Knowing the bound first, one fold of
 * 51 bits holds every product to 2^-51 of the bound, and no chunk ever needs
 * a redo. The cost per 4 products (one 256-bit vector):
 *   b0 = fma(x, y, M0)       q0 = b0 - M0: x y to the nearest multiple of 2^-51
 *                            (in units of 2^(ex+ey)), M0 = 3
 * and one integer add of the bits of b0 (b0 stays in [2, 4), so its bits
 * count the fold in units: the lanes wrap, and the count is corrected once
 * per block, exact while the true count fits in 63 bits). rsum's three folds
 * take 7 dependent additions and 3 integer adds; the two folds
 * this file kept before (to 2^-102 of the bound) 2 FMA, 1 subtraction and 2
 * integer adds. fma(x, y, c) equals (x*y) + c bitwise here, since x*y of two
 * widened floats is exact in double: the generic path multiplies and adds.
 * The rows are widened to double and scaled by 2^-ex (exact), so that
 * |x| < 1, |y| < 1 and |x y| < 1 - 2^-24: b0 never reaches 4.
 * The same arithmetic runs on the GPU (gsum_cuda.cu, gsum_fold in
 * gradsum_cuda.h): the same integers, the same bits. */
#include "gsum.h"
#include "reduce_impl.h"
#include "gradsum_cuda.h" /* gsum_exp_of: the same exponent on the device */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* 32-byte vectors returned by always-inlined helpers: no call, no ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"

/* GCC/Clang vector extension: 4 doubles and 4 64-bit integers, split into
 * what the target has. */
typedef double   v4d __attribute__((vector_size(32)));
typedef uint64_t rs_v4u __attribute__((vector_size(32)));
typedef float  v4f __attribute__((vector_size(16)));

#define AI   static inline __attribute__((always_inline))
#define OSUB 512 /* samples per pass: the scaled rows of a group stay in L1/L2; 512 2^51 < 2^63 */
#define OGRP 34   /* y rows widened at a time */

#define GSUM_M0 3.0 /* 1.5 2^1: ulp 2^-51 */

void gsum_init(gsum_t *g) { memset(g, 0, sizeof *g); }

AI int plain_exp(int32_t e) { return e != GSUM_NONFINITE && e != GSUM_ZERO; } /* neither marker: a unit exists */

void gsum_merge(gsum_t *a, const gsum_t *b)
{
  if (b->nonfinite) {
    a->special   = a->nonfinite ? a->special + b->special : b->special;
    a->nonfinite = 1;
  }
  a->c += b->c;
}

/* The largest |x_i| as the largest magnitude bits (an integer max, which
 * vectorizes; cloned for AVX2's 8-wide max): Inf and NaN bits lie above
 * every finite float's. */
__attribute__((target_clones("avx2", "default"))) float gsum_absmax(size_t n, const float *x)
{
  uint32_t m = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t b;
    memcpy(&b, &x[i], sizeof b);
    b &= 0x7fffffffu;
    m = b > m ? b : m;
  }
  if (m >= 0x7f800000u) return INFINITY;
  float f;
  memcpy(&f, &m, sizeof f);
  return f;
}

int32_t gsum_exponent(float absmax) { return gsum_exp_of(absmax); } /* shared with the device */

void gsum_to_rsum(const gsum_t *g, int32_t ex, int32_t ey, rsum_t *r)
{
  rsum_init(r);
  if (g->nonfinite) {
    r->nonfinite = 1, r->special = g->special;
    return;
  }
  if (!plain_exp(ex) || !plain_exp(ey)) return;
  /* value = c 2^eu, eu = ex + ey - 51: bin 2's unit 2^(40 (top-2)) at or
   * below 2^eu, sh = eu - 40 (top-2) in [0, 40) */
  int32_t eu = ex + ey - 51;
  int32_t t2 = eu >= 0 ? eu / RSUM_W : -((-eu + RSUM_W - 1) / RSUM_W);
  int     sh = eu - t2 * RSUM_W;
  __int128 b[RSUM_FOLD] = {0, 0, 0}, c = g->c;
  /* c 2^sh, c split into 40-bit digits first so that no shift overflows
   * (exact for any c; |c| < 2^75 for n < 2^24) */
  /* multiplied, not shifted: the high digits may be negative */
  __int128 m40 = ((__int128)1 << RSUM_W) - 1, f   = (__int128)1 << sh;
  b[2] += (c & m40) * f, b[1] += ((c >> RSUM_W) & m40) * f, b[0] += (c >> (2 * RSUM_W)) * f;
  r->top = t2 + 2;
  rsum_add_bins(r, r->top, b); /* onto the empty state: copies */
}

double gsum_half_unit(int32_t ex, int32_t ey)
{
  if (!plain_exp(ex) || !plain_exp(ey)) return 0.0;
  return ldexp(1.0, ex + ey - 52);
}

int gsum_units(size_t n, const int32_t *pred, const float *amax, int32_t *e)
{
  int renewed = 0;
  for (size_t r = 0; r < n; r++) {
    int32_t a = gsum_exponent(amax[r]), p = pred[r];
    /* fits: kept (a zero row fits any) */
    if (plain_exp(p) && (a == GSUM_ZERO || (plain_exp(a) && a <= p && p - a <= GSUM_SLACK))) e[r] = p;
    else {
      renewed++;
      if (plain_exp(a)) e[r] = a + GSUM_HEAD < 128 ? a + GSUM_HEAD : 128; /* 2^127 still a float */
      /* any exponent holds a zero row: a plain one, so that the next step can keep it */
      else if (a == GSUM_ZERO) e[r] = 0;
      else e[r] = a;                     /* GSUM_NONFINITE */
    }
  }
  return renewed;
}

float gsum_unit_bound(int32_t e)
{
  if (e == GSUM_ZERO) return 0.0f;
  if (!plain_exp(e)) return INFINITY;
  return ldexpf(1.0f, e - 1);
}

AI double pow2(int e) /* 2^e for -1022 <= e <= 1023 */
{
  uint64_t b = (uint64_t)(e + 1023) << 52;
  double   d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* Row x[0..m) widened into xs[0..m4) (zero padding), scaled by 2^-e (exact:
 * a float times a power of two within double's range). */
AI void widen(size_t m, size_t m4, const float *x, double *xs, int32_t e)
{
  const double s = pow2(-e);
  size_t       i = 0;
  for (; i + 4 <= m; i += 4) {
    v4f v;
    memcpy(&v, x + i, sizeof v);
    v4d w = __builtin_convertvector(v, v4d) * s;
    memcpy(xs + i, &w, sizeof w);
  }
  for (; i < m4; i++) xs[i] = i < m ? (double)x[i] * s : 0.0;
}

AI void ones(size_t m, size_t m4, double *ys) /* the bias row: 1 scaled by 2^-1 */
{
  for (size_t i = 0; i < m4; i++) ys[i] = i < m ? 0.5 : 0.0;
}

/* The fold of 4 products. Generic: multiply, then add (the product is exact). */
AI void fold_generic(v4d a, v4d b, rs_v4u *S0)
{
  const v4d M0 = {GSUM_M0, GSUM_M0, GSUM_M0, GSUM_M0};
  v4d       b0 = a * b + M0;
  *S0 += (rs_v4u)b0;
}

/* The fold's count after m4 products (lanes summed, m4 bits(M0) taken off). */
AI void counts(gsum_t *g, rs_v4u S0, size_t m4)
{
  g->c += rsum_fold_count((S0[0] + S0[1]) + (S0[2] + S0[3]), m4, GSUM_M0);
}

/* A block of BX x rows by BY y rows over m4 scaled samples: each loaded
 * vector serves BY (or BX) pairs, so a vector of 4 products costs about one
 * load instead of two; the pairs' folds are independent chains. */
#define BLOCK(NAME, ATTR, FOLD, BX, BY)                                                                  \
  ATTR AI void NAME(gsum_t **g, size_t m4, const double *const *xs, const double *const *ys)             \
  {                                                                                                      \
    rs_v4u S0[BX][BY];                                                                                   \
    for (int u = 0; u < (BX); u++)                                                                       \
      for (int v = 0; v < (BY); v++) S0[u][v] = (rs_v4u){0, 0, 0, 0};                                    \
    for (size_t i = 0; i < m4; i += 4) {                                                                 \
      v4d a[BX], b[BY];                                                                                  \
      for (int u = 0; u < (BX); u++) memcpy(&a[u], xs[u] + i, sizeof a[u]);                              \
      for (int v = 0; v < (BY); v++) memcpy(&b[v], ys[v] + i, sizeof b[v]);                              \
      for (int u = 0; u < (BX); u++)                                                                     \
        for (int v = 0; v < (BY); v++) FOLD(a[u], b[v], &S0[u][v]);                                      \
    }                                                                                                    \
    for (int u = 0; u < (BX); u++)                                                                       \
      for (int v = 0; v < (BY); v++) counts(g[u * (BY) + v], S0[u][v], m4);                              \
  }

/* A pair whose bound is non-finite: the sum of its non-finite products (as
 * rsum.c keeps them apart; order-free); its finite products do not count. */
static void pair_nonfinite(gsum_t *g, size_t m, const float *x, const float *y)
{
  for (size_t i = 0; i < m; i++) {
    double v = (double)x[i] * (y ? (double)y[i] : 1.0);
    if (!isfinite(v)) g->special = g->nonfinite ? g->special + v : v, g->nonfinite = 1;
  }
}

/* Row x[0..m) scaled into xs (zeros for a zero or non-finite row: its pairs
 * then add nothing to the folds; the non-finite ones are summed apart). */
AI void widen_row(size_t m, size_t m4, const float *x, double *xs, int32_t e)
{
  if (plain_exp(e)) widen(m, m4, x, xs, e);
  else memset(xs, 0, m4 * sizeof *xs);
}

#if defined(__x86_64__)
/* widen_row for the AVX2 and AVX-512 paths: 4 or 8 floats a conversion (the
 * generic vector code compiles there to conversions of 2 floats and an
 * insert); the same values. */
#define WIDEN_ROW(NAME, TGT, W, VD, SET1, CVTLOAD, MUL, STORE)                                          \
  __attribute__((target(TGT))) AI void NAME(size_t m, size_t m4, const float *x, double *xs, int32_t e) \
  {                                                                                                     \
    if (!plain_exp(e)) {                                                                                \
      memset(xs, 0, m4 * sizeof *xs);                                                                   \
      return;                                                                                           \
    }                                                                                                   \
    const double sc = pow2(-e);                                                                         \
    const VD     s  = SET1(sc);                                                                         \
    size_t       i  = 0;                                                                                \
    for (; i + (W) <= m; i += (W)) STORE(xs + i, MUL(CVTLOAD(x + i), s));                               \
    for (; i < m4; i++) xs[i] = i < m ? (double)x[i] * sc : 0.0;                                        \
  }
#define CVT256(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define CVT512(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
WIDEN_ROW(widen_row256, "avx2,fma", 4, __m256d, _mm256_set1_pd, CVT256, _mm256_mul_pd, _mm256_storeu_pd)
WIDEN_ROW(widen_row512, "avx512f,avx512vl,avx2,fma", 8, __m512d, _mm512_set1_pd, CVT512, _mm512_mul_pd,
          _mm512_storeu_pd)
#endif

/* The rows' next block of samples while this one computes (they come from
 * memory); past n too: a caller walking a row chunk by chunk
 * (surrogate/tallskinny_cpu.c) reads that next. A prefetch never faults. */
AI void prefetch_next(size_t i0, size_t nx, const float *x, size_t ldx, size_t ny, const float *y, size_t ldy)
{
  for (size_t i = i0 + OSUB; i < i0 + 2 * OSUB; i += 16) {
    for (size_t p = 0; p < nx; p++) __builtin_prefetch(x + p * ldx + i);
    for (size_t q = 0; q < ny; q++) __builtin_prefetch(y + q * ldy + i);
  }
}

/* The pass for fewer x rows than a block holds (the output layer: one delta
 * row against every input row). Each y row serves only nx pairs there, so it
 * is converted as it is used instead of widened into a buffer (a conversion,
 * a store and a load per product), and left unscaled: the pair's constant is
 * M0 2^ey instead, which scales the sum x y + M0 by 2^ey exactly, so that
 * the rounding and the count are those of the scaled rows. The x rows are
 * widened and scaled as in the blocks. Reads no y value at or past n: the
 * last partial vector is converted from a zero-padded copy. */
#define THIN(NAME, ATTR, WIDEN, W, VD, VU, CVT, FMAV) \
  ATTR static void NAME##_thin(gsum_t *r, gsum_t *rb, size_t n, size_t nx, const float *x, size_t ldx, \
                               const int32_t *ex, size_t ny, const float *y, size_t ldy, const int32_t *ey) \
  { \
    double xs[OSUB]; \
    for (size_t i0 = 0; i0 < n; i0 += OSUB) { \
      size_t m = n - i0 < OSUB ? n - i0 : OSUB, mw = (m + (W)-1) / (W) * (W); \
      prefetch_next(i0, nx, x, ldx, ny, y, ldy); \
      for (size_t p = 0; p < nx; p++) { \
        WIDEN(m, mw, x + p * ldx + i0, xs, ex[p]); \
        for (size_t q = 0; q < ny + (rb != NULL); q++) { /* q == ny: the bias (y = 1, exponent 1) */ \
          int32_t      e  = q < ny ? ey[q] : 1; \
          gsum_t      *g  = q < ny ? &r[p * ny + q] : &rb[p]; \
          const float *yq = q < ny ? y + q * ldy + i0 : NULL; \
          if (ex[p] == GSUM_NONFINITE || e == GSUM_NONFINITE) pair_nonfinite(g, m, x + p * ldx + i0, yq); \
          if (!plain_exp(ex[p]) || !plain_exp(e)) continue; /* a zero row adds nothing to the fold */ \
          const double Mq = GSUM_M0 * pow2(e); \
          const VD     M = (VD){0} + Mq, one = (VD){0} + 1.0; \
          VU           S = {0}; \
          size_t       i = 0; \
          for (; i + (W) <= m; i += (W)) S += (VU)FMAV(xs + i, yq ? CVT(yq + i) : one, M); \
          if (i < m) { \
            float t[W] = {0}; \
            for (size_t k = i; k < m; k++) t[k - i] = yq ? yq[k] : 1.0f; \
            S += (VU)FMAV(xs + i, CVT(t), M); \
          } \
          uint64_t sum = 0; \
          for (int l = 0; l < (W); l++) sum += S[l]; \
          g->c += rsum_fold_count(sum, mw, Mq); \
        } \
      } \
    } \
  }

/* The thin pass's vector steps: W floats converted, x (widened) times y plus M. */
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
AI v4d cvt_generic(const float *p)
{
  v4f v;
  memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v4d);
}
AI v4d fmav_generic(const double *xs, v4d b, v4d M) /* multiply, then add: the product is exact */
{
  v4d a;
  memcpy(&a, xs, sizeof a);
  return a * b + M;
}
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) AI v4d cvt_avx2(const float *p) { return (v4d)_mm256_cvtps_pd(_mm_loadu_ps(p)); }
__attribute__((target("avx2,fma"))) AI v4d fmav_avx2(const double *xs, v4d b, v4d M)
{
  return (v4d)_mm256_fmadd_pd(_mm256_loadu_pd(xs), (__m256d)b, (__m256d)M);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) AI v8d cvt_avx512(const float *p)
{
  return (v8d)_mm512_cvtps_pd(_mm256_loadu_ps(p));
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) AI v8d fmav_avx512(const double *xs, v8d b, v8d M)
{
  return (v8d)_mm512_fmadd_pd(_mm512_loadu_pd(xs), (__m512d)b, (__m512d)M);
}
#endif

/* The pass over a chunk's rows: groups of OGRP y rows (the bias row last)
 * widened, then BX x rows at a time, every pair of the group folded in blocks
 * of BX x BY while its rows are in L1 (the edges in narrower blocks). */
#define OUTER(NAME, ATTR, WIDEN, B11, B1Y, BX1, BXY, BX, BY) \
  ATTR static void NAME(gsum_t *r, gsum_t *rb, size_t n, size_t nx, const float *x, size_t ldx, const int32_t *ex, \
                        size_t ny, const float *y, size_t ldy, const int32_t *ey) \
  { \
    if (nx < (BX)) { /* the output layer's single delta row: each y row serves fewer pairs than a widening costs */ \
      NAME##_thin(r, rb, n, nx, x, ldx, ex, ny, y, ldy, ey); \
      return; \
    } \
    double xs[BX][OSUB], ys[OGRP][OSUB]; \
    size_t nyb = ny + (rb != NULL); \
    for (size_t i0 = 0; i0 < n; i0 += OSUB) { \
      size_t m = n - i0 < OSUB ? n - i0 : OSUB, m4 = (m + 7) / 8 * 8; /* 8: the 512-bit blocks */ \
      prefetch_next(i0, nx, x, ldx, ny, y, ldy); \
      for (size_t q0 = 0; q0 < nyb; q0 += OGRP) { \
        size_t        nq = nyb - q0 < OGRP ? nyb - q0 : OGRP; \
        const double *yp[OGRP]; \
        for (size_t q = 0; q < nq; q++) { \
          if (q0 + q == ny) ones(m, m4, ys[q]); \
          else WIDEN(m, m4, y + (q0 + q) * ldy + i0, ys[q], ey[q0 + q]); \
          yp[q] = ys[q]; \
        } \
        for (size_t p0 = 0; p0 < nx; p0 += (BX)) { \
          size_t        np = nx - p0 < (BX) ? nx - p0 : (BX); \
          const double *xp[BX]; \
          for (size_t u = 0; u < np; u++) WIDEN(m, m4, x + (p0 + u) * ldx + i0, xs[u], ex[p0 + u]), xp[u] = xs[u]; \
          for (size_t q = 0; q < nq;) { \
            size_t w = nq - q >= (BY) ? (BY) : 1, h = np == (BX) ? (BX) : 1; \
            for (size_t u = 0; u < np; u += h) { \
              gsum_t *g[(BX) * (BY)]; \
              for (size_t a = 0; a < h; a++) \
                for (size_t b = 0; b < w; b++) \
                  g[a * w + b] = q0 + q + b < ny ? &r[(p0 + u + a) * ny + q0 + q + b] : &rb[p0 + u + a]; \
              if (h == (BX) && w == (BY)) BXY(g, m4, xp + u, yp + q); \
              else if (h == (BX)) BX1(g, m4, xp + u, yp + q); \
              else if (w == (BY)) B1Y(g, m4, xp + u, yp + q); \
              else B11(g, m4, xp + u, yp + q); \
            } \
            q += w; \
          } \
          for (size_t u = 0; u < np; u++) /* pairs with a non-finite bound: their non-finite products, apart */ \
            for (size_t q = 0; q < nq; q++) { \
              int32_t eq = q0 + q < ny ? ey[q0 + q] : 1; \
              if (ex[p0 + u] == GSUM_NONFINITE || eq == GSUM_NONFINITE) \
                pair_nonfinite(q0 + q < ny ? &r[(p0 + u) * ny + q0 + q] : &rb[p0 + u], m, x + (p0 + u) * ldx + i0, \
                               q0 + q < ny ? y + (q0 + q) * ldy + i0 : NULL); \
            } \
        } \
      } \
    } \
  }

/* Three builds of the same integers (kernels_reduce_isa holds each to a
 * scalar model; bench_rsum_bits compares them): generic, blocks of 2 x 2
 * pairs; AVX2 with FMA (below), blocks of 3 x 3; AVX-512 (below), 512-bit
 * vectors and 32 registers, blocks of 4 x 4 (as fast as 4 x 6, faster than
 * 2 x 4 and 3 x 8). */
#define ISA(SUF, ATTR, WIDEN, FOLD, BX, BY)             \
  THIN(outer_##SUF, ATTR, WIDEN, 4, v4d, rs_v4u, cvt_##SUF, fmav_##SUF) \
  BLOCK(b11_##SUF, ATTR, FOLD, 1, 1)                    \
  BLOCK(b1y_##SUF, ATTR, FOLD, 1, BY)                   \
  BLOCK(bx1_##SUF, ATTR, FOLD, BX, 1)                   \
  BLOCK(bxy_##SUF, ATTR, FOLD, BX, BY)                  \
  OUTER(outer_##SUF, ATTR, WIDEN, b11_##SUF, b1y_##SUF, bx1_##SUF, bxy_##SUF, BX, BY)
/* AVX-512 with 512-bit vectors: 8 products per operation. */
#if defined(__x86_64__)
  #define BLOCK512(NAME, BX, BY) \
    __attribute__((target("avx512f,avx512vl,avx2,fma"))) AI void NAME(gsum_t **g, size_t m4, const double *const *xs, \
                                                                      const double *const *ys) \
    { \
      __m512i       S0[BX][BY]; \
      const __m512d M0 = _mm512_set1_pd(GSUM_M0); \
      for (int u = 0; u < (BX); u++) \
        for (int v = 0; v < (BY); v++) S0[u][v] = _mm512_setzero_si512(); \
      for (size_t i = 0; i < m4; i += 8) { \
        __m512d a[BX]; \
        for (int u = 0; u < (BX); u++) a[u] = _mm512_loadu_pd(xs[u] + i); \
        for (int v = 0; v < (BY); v++) { \
          __m512d b = _mm512_loadu_pd(ys[v] + i); \
          for (int u = 0; u < (BX); u++) \
            S0[u][v] = _mm512_add_epi64(S0[u][v], _mm512_castpd_si512(_mm512_fmadd_pd(a[u], b, M0))); \
        } \
      } \
      for (int u = 0; u < (BX); u++) \
        for (int v = 0; v < (BY); v++) { \
          rs_v4u  lo, hi; \
          __m256i t; \
          t = _mm512_castsi512_si256(S0[u][v]), memcpy(&lo, &t, 32); \
          t = _mm512_extracti64x4_epi64(S0[u][v], 1), memcpy(&hi, &t, 32); \
          counts(g[u * (BY) + v], lo + hi, m4); \
        } \
    }
#endif

#if defined(__x86_64__)
/* AVX2 with 256-bit vectors, blocks of 3 x 3 pairs: every x and y vector
 * loaded once per step (16 registers: 9 sums, 3 x, one y, M0 and the
 * product), M0 copied into the product's register first so that no FMA
 * overwrites a row. The generic block compiled here to a load folded into
 * every FMA (8 loads per 16 products, bound by the loads); bench_rsum's 32 x
 * 32 pairs on a Zen 3 (2026-11-28): 0.111-0.115 against 0.128-0.137 ns per
 * product, 0.74x the float tree's time against 0.86x (4 rounds). */
  #define BLOCK256(NAME, BX, BY) \
    __attribute__((target("avx2,fma"))) AI void NAME(gsum_t **g, size_t m4, const double *const *xs, \
                                                     const double *const *ys) \
    { \
      __m256i       S0[BX][BY]; \
      const __m256d M0 = _mm256_set1_pd(GSUM_M0); \
      for (int u = 0; u < (BX); u++) \
        for (int v = 0; v < (BY); v++) S0[u][v] = _mm256_setzero_si256(); \
      for (size_t i = 0; i < m4; i += 4) { \
        __m256d a[BX]; \
        for (int u = 0; u < (BX); u++) a[u] = _mm256_loadu_pd(xs[u] + i); \
        for (int v = 0; v < (BY); v++) { \
          __m256d b = _mm256_loadu_pd(ys[v] + i); \
          for (int u = 0; u < (BX); u++) { \
            __m256d t = M0; \
            __asm__("vfmadd231pd %[b], %[a], %[t]" : [t] "+x"(t) : [a] "x"(a[u]), [b] "x"(b)); \
            S0[u][v] = _mm256_add_epi64(S0[u][v], _mm256_castpd_si256(t)); \
          } \
        } \
      } \
      for (int u = 0; u < (BX); u++) \
        for (int v = 0; v < (BY); v++) { \
          rs_v4u c; \
          memcpy(&c, &S0[u][v], 32); \
          counts(g[u * (BY) + v], c, m4); \
        } \
    }
#endif

ISA(generic, , widen_row, fold_generic, 2, 2)
#if defined(__x86_64__)
BLOCK256(y11, 1, 1)
BLOCK256(y1y, 1, 3)
BLOCK256(yx1, 3, 1)
BLOCK256(yxy, 3, 3)
THIN(outer_avx2, __attribute__((target("avx2,fma"))), widen_row256, 4, v4d, rs_v4u, cvt_avx2, fmav_avx2)
OUTER(outer_avx2, __attribute__((target("avx2,fma"))), widen_row256, y11, y1y, yx1, yxy, 3, 3)
BLOCK512(z11, 1, 1)
BLOCK512(z1y, 1, 4)
BLOCK512(zx1, 4, 1)
BLOCK512(zxy, 4, 4)
THIN(outer_avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))), widen_row512, 8, v8d, v8u, cvt_avx512,
     fmav_avx512)
OUTER(outer_avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))), widen_row512, z11, z1y, zx1, zxy, 4, 4)
#endif

typedef void outer_fn(gsum_t *, gsum_t *, size_t, size_t, const float *, size_t, const int32_t *, size_t, const float *,
                      size_t, const int32_t *);

void gsum_add_outer(gsum_t *r, gsum_t *rb, size_t n, size_t nx, const float *x, size_t ldx, const int32_t *ex,
                    size_t ny, const float *y, size_t ldy, const int32_t *ey)
{
  static outer_fn *const f[] = {outer_generic, /* the path rsum_isa names */
#if defined(__x86_64__)
                                outer_avx2, outer_avx512
#endif
  };
  f[rsum_isa_level()](r, rb, n, nx, x, ldx, ex, ny, y, ldy, ey);
}
