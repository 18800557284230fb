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
 *     such K, scales by 2^(-K*W) (exact) and extracts RSUM_FOLD = 3 folds with
 *     the add-and-subtract trick (M + r) - M. Each fold's chunk sum is exact in
 *     double (|q| <= 2^(W-1) units, 1024 of them < 2^53 units) and is then
 *     converted exactly to an integer count.
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
 * Limits: non-finite inputs make the result their own (order-free) sum.
 * Needs IEEE double arithmetic with round-to-nearest and no FMA contraction
 * or reassociation of the extraction (-ffp-contract=off, no -ffast-math). */
#include "reduce.h"
#include "reduce_impl.h"

#include <math.h>
#include <string.h>

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

/* GCC/Clang vector extension: 4 doubles, split into what the target has. */
typedef rs_v4d v4d;
typedef int64_t v4l __attribute__((vector_size(32)));
typedef float   v4f __attribute__((vector_size(16)));
#define LOAD4(p) ({ v4d r_; memcpy(&r_, (p), sizeof r_); r_; })

/* Values v[0..m), m <= RSUM_CHUNK and a multiple of 4 (zero-padded), all
 * finite, max |v| = mx > 0. The fold sums are exact, so splitting them over
 * vector lanes cannot change them. */
static inline __attribute__((always_inline)) void rsum_chunk(rsum_t *a, size_t m, double *v, double mx)
{
  int32_t top = rsum_top_bin(mx);
  /* scale by 2^(-top*W): exact (tiny values that become subnormal are far
   * below the kept bins). 2^(-top*W) may not be representable: two steps. */
  int sh = -top * RSUM_W;
  if (sh > 1000) {
    for (size_t i = 0; i < m; i++) v[i] *= 0x1p600;
    sh -= 600;
  }
  const double s = ldexp(1.0, sh);
  const v4d    M0 = {0x1.8p52, 0x1.8p52, 0x1.8p52, 0x1.8p52}, M1 = M0 * 0x1p-40, M2 = M0 * 0x1p-80; /* 1.5*2^(52-kW) */
  rs_v4u       S[RSUM_FOLD] = {{0}, {0}, {0}};
  for (size_t i = 0; i < m; i += 4) (void)rsum_fold3(LOAD4(v + i) * s, M0, M1, M2, S);
  __int128 c[RSUM_FOLD] = {rsum_fold_count(S[0], m, M0[0]), rsum_fold_count(S[1], m, M1[0]), rsum_fold_count(S[2], m, M2[0])};
  rsum_add_bins(a, top, c);
}

static void rsum_nonfinite(rsum_t *a, size_t m, const double *v)
{
  for (size_t i = 0; i < m; i++)
    if (!isfinite(v[i])) {
      a->special   = a->nonfinite ? a->special + v[i] : v[i];
      a->nonfinite = 1;
    }
}

/* 32-byte vectors returned by always-inlined helpers: no call, no ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"
/* Summands i0..i0+4 of op, from double inputs or (isf) float inputs widened
 * to double (a product of two floats is exact in double). */
static inline __attribute__((always_inline)) v4d rsum_load4(red_op_t op, int isf, const void *x, const void *y, size_t i)
{
  v4d a, b;
  if (isf) {
    v4f f, g;
    memcpy(&f, (const float *)x + i, sizeof f);
    a = __builtin_convertvector(f, v4d);
    if (op == RED_OP_DOT) memcpy(&g, (const float *)y + i, sizeof g), b = __builtin_convertvector(g, v4d);
  } else {
    a = LOAD4((const double *)x + i);
    if (op == RED_OP_DOT) b = LOAD4((const double *)y + i);
  }
  switch (op) {
  case RED_OP_DOT: return a * b;
  case RED_OP_SUMSQ: return a * a;
  case RED_OP_ASUM: return (v4d){fabs(a[0]), fabs(a[1]), fabs(a[2]), fabs(a[3])};
  default: return a;
  }
}

static inline __attribute__((always_inline)) double rsum_elem1(red_op_t op, int isf, const void *x, const void *y, size_t i)
{
  if (!isf) return red_elem(op, (const double *)x, (const double *)y, i);
  double a = ((const float *)x)[i];
  return op == RED_OP_DOT ? a * (double)((const float *)y)[i] : op == RED_OP_SUMSQ ? a * a : op == RED_OP_ASUM ? fabs(a) : a;
}

/* Serial: one thread's share. Inlined per constant op and input width (see
 * below). The summands go to an L1-resident buffer (zero-padded to a multiple
 * of 4) with their max and a finiteness check (chk is NaN iff a summand is
 * Inf/NaN). */
static inline __attribute__((always_inline)) void rsum_add_op(rsum_t *a, red_op_t op, int isf, size_t n, const void *x, const void *y)
{
  double v[RSUM_CHUNK];
  for (size_t i0 = 0; i0 < n; i0 += RSUM_CHUNK) {
    size_t m = n - i0 < RSUM_CHUNK ? n - i0 : RSUM_CHUNK, m4 = (m + 3) / 4 * 4;
    v4d    mx = {0}, chk = {0};
    for (size_t i = 0; i + 4 <= m; i += 4) {
      v4d e = rsum_load4(op, isf, x, y, i0 + i);
      memcpy(v + i, &e, sizeof e);
      chk += e * 0.0;
      v4d ae = {fabs(e[0]), fabs(e[1]), fabs(e[2]), fabs(e[3])};
      v4l gt = ae > mx;
      mx     = (v4d)((gt & (v4l)ae) | (~gt & (v4l)mx));
    }
    for (size_t i = m / 4 * 4; i < m4; i++) {
      double e = i < m ? rsum_elem1(op, isf, x, y, i0 + i) : 0.0;
      v[i] = e, chk[0] += e * 0.0;
      mx[0] = fabs(e) > mx[0] ? fabs(e) : mx[0];
    }
    double c = (chk[0] + chk[1]) + (chk[2] + chk[3]), mmax = fmax(fmax(mx[0], mx[1]), fmax(mx[2], mx[3]));
    if (c != 0.0) rsum_nonfinite(a, m, v);
    else if (mmax > 0.0) rsum_chunk(a, m4, v, mmax);
  }
}

/* Cloned for AVX2 (picked at load time where the CPU has it): the same IEEE
 * operations on wider vectors, so the same bits, about 6x faster here. */
__attribute__((target_clones("avx2", "default"))) static void rsum_add_serial(rsum_t *a, red_op_t op, size_t n, const double *x, const double *y)
{
  switch (op) {
  case RED_OP_DOT: rsum_add_op(a, RED_OP_DOT, 0, n, x, y); break;
  case RED_OP_SUMSQ: rsum_add_op(a, RED_OP_SUMSQ, 0, n, x, y); break;
  case RED_OP_ASUM: rsum_add_op(a, RED_OP_ASUM, 0, n, x, y); break;
  default: rsum_add_op(a, RED_OP_SUM, 0, n, x, y); break;
  }
}

__attribute__((target_clones("avx2", "default"))) void rsum_add_fdot(rsum_t *a, size_t n, const float *x, const float *y)
{
  if (y) rsum_add_op(a, RED_OP_DOT, 1, n, x, y);
  else rsum_add_op(a, RED_OP_SUM, 1, n, x, NULL);
}

/* The CG tail's two sums, z.z into a and z.r into b, in one buffer pass
 * over z and r: the states rsum_add reaches for each. */
__attribute__((target_clones("avx2", "default"))) void rsum_add_sumsq_dot(rsum_t *a, rsum_t *b, size_t n, const double *z, const double *r)
{
  double v[RSUM_CHUNK], w[RSUM_CHUNK];
  for (size_t i0 = 0; i0 < n; i0 += RSUM_CHUNK) {
    size_t m = n - i0 < RSUM_CHUNK ? n - i0 : RSUM_CHUNK, m4 = (m + 3) / 4 * 4;
    v4d    mv = {0}, mw = {0}, cv = {0}, cw = {0};
    for (size_t i = 0; i + 4 <= m; i += 4) {
      v4d zz = LOAD4(z + i0 + i), e = zz * zz, f = zz * LOAD4(r + i0 + i);
      memcpy(v + i, &e, sizeof e), memcpy(w + i, &f, sizeof f);
      cv += e * 0.0, cw += f * 0.0;
      v4d af = {fabs(f[0]), fabs(f[1]), fabs(f[2]), fabs(f[3])};
      v4l gt = e > mv, gf = af > mw;
      mv = (v4d)((gt & (v4l)e) | (~gt & (v4l)mv)), mw = (v4d)((gf & (v4l)af) | (~gf & (v4l)mw));
    }
    for (size_t i = m / 4 * 4; i < m4; i++) {
      double e = i < m ? z[i0 + i] * z[i0 + i] : 0.0, f = i < m ? z[i0 + i] * r[i0 + i] : 0.0;
      v[i] = e, w[i] = f, cv[0] += e * 0.0, cw[0] += f * 0.0;
      mv[0] = e > mv[0] ? e : mv[0], mw[0] = fabs(f) > mw[0] ? fabs(f) : mw[0];
    }
    double xv = fmax(fmax(mv[0], mv[1]), fmax(mv[2], mv[3])), xw = fmax(fmax(mw[0], mw[1]), fmax(mw[2], mw[3]));
    if ((cv[0] + cv[1]) + (cv[2] + cv[3]) != 0.0) rsum_nonfinite(a, m, v); /* as rsum_add_op, each sum on its own */
    else if (xv > 0.0) rsum_chunk(a, m4, v, xv);
    if ((cw[0] + cw[1]) + (cw[2] + cw[3]) != 0.0) rsum_nonfinite(b, m, w);
    else if (xw > 0.0) rsum_chunk(b, m4, w, xw);
  }
}

void rsum_add(rsum_t *a, red_op_t op, size_t n, const double *x, const double *y)
{
  size_t nchunk = (n + RSUM_CHUNK - 1) / RSUM_CHUNK;
  if (nchunk < RED_PAR_MIN_BLOCKS) {
    rsum_add_serial(a, op, n, x, y);
    return;
  }
#pragma omp parallel
  {
    rsum_t loc;
    rsum_init(&loc);
#pragma omp for schedule(static)
    for (size_t c = 0; c < nchunk; c++) {
      size_t i0 = c * RSUM_CHUNK, m = n - i0 < RSUM_CHUNK ? n - i0 : RSUM_CHUNK;
      rsum_add_serial(&loc, op, m, x + i0, op == RED_OP_DOT ? y + i0 : y);
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
