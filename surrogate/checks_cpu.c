/* surrogate/checks_cpu.c: the CPU backend's per-sample ABFT checks (forward
 * pass and backward-data products, every sample, vectorized across samples)
 * and its per-layer gradient references (formed with s->strategy, as the
 * gradient is). Called only with checks on; see surrogate_checks.c for the
 * encodings and the gradient comparison. The CUDA backend has no per-sample
 * checks. Arrays are feature-major with row stride cap: A[unit][sample]. */
#include "surrogate_impl.h"

#include <stdint.h>
#include <string.h>
#include <omp.h>

#define CK_SB 256 /* samples per block: the block's running sums stay in L1 */

/* 1 where a > 0 (a positive float, Inf included), else 64 = 1/slope: the
 * factor that undoes the leaky ReLU exactly. Tested on the bits, because a
 * float comparison is not turned into a vector select under -ftrapping-math. */
static inline float unleak(float a)
{
  int32_t i;
  memcpy(&i, &a, sizeof i);
  return 64.0f - 63.0f * (float)((i > 0) & (i <= 0x7f800000)); /* 64 - 63 = 1: exact */
}

static PetscErrorCode Scratch(Surrogate s, size_t cap, double **buf)
{
  PetscFunctionBeginUser;
  if (s->ck.scap < cap) {
    PetscCall(PetscFree(s->ck.scratch));
    PetscCall(PetscMalloc1(5 * cap, &s->ck.scratch));
    s->ck.scap = cap;
  }
  *buf = s->ck.scratch;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One row x of a layer's input side into the encoded sums of every sample:
 * rf += e x (double), sa += |e| |x| (float, scales the bound only). */
static inline __attribute__((always_inline)) void encoded_row(size_t m, double e, float eabs, const float *x,
                                                              double *rf, float *sa)
{
  for (size_t i = 0; i < m; i++) rf[i] += e * x[i], sa[i] += eabs * fabsf(x[i]);
}

/* Forward check of layer l (W = W_l [dout][din], b = b_l), every sample s:
 *   sum_j z_js = c . a_s + sum_j b_j,   c = 1^T W (stored encoding),
 * with z recovered from the stored activation (leaky ReLU 2^-6: z = a if
 * a > 0, else 64 a; exact). Bound: z_j = fl(sum_k w_jk a_k + b_j) in float,
 * k in order, is within gamma_f(din+1) (sum_k |w_jk a_k| + |b_j|) of the exact
 * value, so the sum over j is within gamma_f(din+1) S, S = |c| . |a| + sum|b|
 * (|c| = 1^T |W|, stored). The two sides are summed in double (c itself,
 * c . a, sum_j z: at most gamma_d(din+dout+2) (S + Z), Z = sum_j |z_j|).
 * Underflow escapes the relative model: a float product that lands among the
 * subnormals is off by at most 2^-150, and so is an activation z 2^-6 (2^-144
 * once scaled back by 64), hence dout (din + 64) 2^-150 in all:
 *   tau = 2 [ gamma_f(din+1) S + gamma_d(din+dout+2) (S + Z) + dout (din + 64) 2^-150 ].
 * S and Z only scale the bound, so they are summed in float (relative error
 * below gamma_f(65537) < 0.004 for any allowed width); the factor 2 covers
 * that and the rounding of tau. Per block: dis[i] = |discrepancy|, tau[i]. */
__attribute__((target_clones("avx2", "default"))) static void forward_block(const double *c, const double *cabs,
                                                                            double cb, double babs, size_t din,
                                                                            size_t dout, const float *ain,
                                                                            const float *aout, size_t m, size_t cap,
                                                                            int hidden, double *dis, double *tau)
{
  const double gf = surr_gamma_f((double)din + 1), gd = surr_gamma_d((double)(din + dout + 2)),
               tiny = (double)dout * ((double)din + 64) * 0x1p-150;
  double       zs[CK_SB], rf[CK_SB];
  float        za[CK_SB], sa[CK_SB];
  for (size_t i = 0; i < m; i++) zs[i] = 0.0, rf[i] = cb, za[i] = 0.0f, sa[i] = 0.0f;
  for (size_t j = 0; j < dout; j++) {
    const float *o = aout + j * cap;
    if (hidden)
      for (size_t i = 0; i < m; i++) {
        float z = o[i] * unleak(o[i]);
        zs[i] += z, za[i] += fabsf(z);
      }
    else
      for (size_t i = 0; i < m; i++) zs[i] += o[i], za[i] += fabsf(o[i]);
  }
  for (size_t k = 0; k < din; k++) encoded_row(m, c[k], (float)cabs[k], ain + k * cap, rf, sa);
  for (size_t i = 0; i < m; i++) {
    double S = (double)sa[i] + babs;
    tau[i]   = 2.0 * (gf * S + gd * (S + za[i]) + tiny);
    dis[i]   = fabs(zs[i] - rf[i]);
  }
}

/* Backward-data check of layer l (dprev = act'(a_prev) (W^T d), W [dout][din]),
 * every sample: the un-activated product g = W^T d is recovered exactly
 * (g = dprev if a_prev > 0, else 64 dprev) and
 *   sum_k g_k = r . d,   r = W 1 (stored row sums, no bias).
 * Bound: g_k = fl(sum_j w_jk d_j), j in order, is within gamma_f(dout)
 * sum_j |w_jk d_j|; summed over k: gamma_f(dout) S, S = |r| . |d| (|r| = |W| 1,
 * stored). Double sums: gamma_d(din+dout+1) (S + G), G = sum_k |g_k|;
 * underflow: 2^-150 per subnormal product, 2^-144 per subnormal dprev:
 *   tau = 2 [ gamma_f(dout) S + gamma_d(din+dout+1) (S + G) + din (dout + 64) 2^-150 ],
 * S and G summed in float as above. */
__attribute__((target_clones("avx2", "default"))) static void backward_block(const double *r, const double *rabs,
                                                                             size_t din, size_t dout, const float *d,
                                                                             const float *dprev, const float *aprev,
                                                                             size_t m, size_t cap, double *dis,
                                                                             double *tau)
{
  const double gf = surr_gamma_f((double)dout), gd = surr_gamma_d((double)(din + dout + 1)),
               tiny = (double)din * ((double)dout + 64) * 0x1p-150;
  double       gs[CK_SB], rf[CK_SB];
  float        ga[CK_SB], sa[CK_SB];
  for (size_t i = 0; i < m; i++) gs[i] = 0.0, rf[i] = 0.0, ga[i] = 0.0f, sa[i] = 0.0f;
  for (size_t j = 0; j < dout; j++) encoded_row(m, r[j], (float)rabs[j], d + j * cap, rf, sa);
  for (size_t k = 0; k < din; k++) {
    const float *a = aprev + k * cap, *o = dprev + k * cap;
    for (size_t i = 0; i < m; i++) {
      float g = o[i] * unleak(a[i]);
      gs[i] += g, ga[i] += fabsf(g);
    }
  }
  for (size_t i = 0; i < m; i++) {
    double S = sa[i];
    tau[i]   = 2.0 * (gf * S + gd * (S + ga[i]) + tiny);
    dis[i]   = fabs(gs[i] - rf[i]);
  }
}

/* Count the failures of one block (a NaN discrepancy is infinitely bad). */
static void tally(size_t s0, size_t m, const double *dis, const double *tau, long long *nf, double *worst,
                  size_t *first)
{
  for (size_t i = 0; i < m; i++) {
    double q = dis[i] / tau[i];
    if (!(dis[i] <= tau[i] && tau[i] < INFINITY)) {
      (*nf)++;
      if (s0 + i < *first) *first = s0 + i;
      if (!(q == q) || tau[i] == INFINITY) q = INFINITY;
    }
    if (q > *worst) *worst = q;
  }
}

PetscErrorCode SurrogateCheckForward_CPU(Surrogate s, float *const *A, size_t n, size_t cap)
{
  SurrogateChecks *ck   = &s->ck;
  size_t           nblk = (n + CK_SB - 1) / CK_SB;

  PetscFunctionBeginUser;
  for (int l = 0; l < s->nlayer; l++) {
    size_t       din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1], first = SIZE_MAX;
    long long    nf    = 0;
    double       worst = 0.0;
    const double *c = ck->c + ck->coff[l], *cabs = ck->cabs + ck->coff[l];
    char         what[96];
#pragma omp parallel for schedule(static) reduction(+ : nf) reduction(max : worst) reduction(min : first) if (nblk > 1)
    for (size_t blk = 0; blk < nblk; blk++) {
      size_t s0 = blk * CK_SB, m = PetscMin(CK_SB, n - s0);
      double dis[CK_SB], tau[CK_SB];
      forward_block(c, cabs, ck->cb[l], ck->babs[l], din, dout, A[l] + s0, A[l + 1] + s0, m, cap, l + 1 < s->nlayer,
                    dis, tau);
      tally(s0, m, dis, tau, &nf, &worst, &first);
    }
    if (nf) PetscCall(PetscSNPrintf(what, sizeof what, "forward layer %d sample %zu", l + 1, first));
    SurrogateChecksNote_Private(s, PETSC_FALSE, (PetscInt)nf, worst, nf ? what : NULL);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateCheckBackward_CPU(Surrogate s, int l, const float *d, const float *dprev, const float *aprev,
                                          size_t n, size_t cap)
{
  SurrogateChecks *ck = &s->ck;
  const double    *r = ck->r + ck->roff[l], *rabs = ck->rabs + ck->roff[l];
  size_t din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1], nblk = (n + CK_SB - 1) / CK_SB, first = SIZE_MAX;
  long long        nf    = 0;
  double           worst = 0.0;
  char             what[96];

  PetscFunctionBeginUser;
#pragma omp parallel for schedule(static) reduction(+ : nf) reduction(max : worst) reduction(min : first) if (nblk > 1)
  for (size_t blk = 0; blk < nblk; blk++) {
    size_t s0 = blk * CK_SB, m = PetscMin(CK_SB, n - s0);
    double dis[CK_SB], tau[CK_SB];
    backward_block(r, rabs, din, dout, d + s0, dprev + s0, aprev + s0, m, cap, dis, tau);
    tally(s0, m, dis, tau, &nf, &worst, &first);
  }
  if (nf) PetscCall(PetscSNPrintf(what, sizeof what, "backward layer %d sample %zu", l + 1, first));
  SurrogateChecksNote_Private(s, PETSC_FALSE, (PetscInt)nf, worst, nf ? what : NULL);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sum_i |x_i| y_i in 4 fixed lanes (y >= 0). */
static inline __attribute__((always_inline)) double absdot4(size_t m, const float *x, const double *y)
{
  double l[4] = {0, 0, 0, 0};
  size_t i    = 0;
  for (; i + 4 <= m; i += 4)
    for (int t = 0; t < 4; t++) l[t] += fabsf(x[i + t]) * y[i + t];
  for (; i < m; i++) l[0] += fabsf(x[i]) * y[i];
  return (l[0] + l[1]) + (l[2] + l[3]);
}

/* Per-sample sums of one block (double, index order), and this block's share
 * of the bounds' sums: RA[j] += sum_i |d_ji| aabs_i, CA[k] += sum_i dabs_i |a_ki|
 * (CA[din]: the bias column), in 4 fixed lanes per line. */
__attribute__((target_clones("avx2", "default"))) static void persample_block(size_t din, size_t dout, const float *a,
                                                                              const float *d, size_t m, size_t cap,
                                                                              double *asum, double *aabs, double *dsum,
                                                                              double *dabs, double *RA, double *CA)
{
  for (size_t i = 0; i < m; i++) asum[i] = 0.0, aabs[i] = 0.0, dsum[i] = 0.0, dabs[i] = 0.0;
  for (size_t k = 0; k < din; k++)
    for (size_t i = 0; i < m; i++) asum[i] += a[k * cap + i], aabs[i] += fabsf(a[k * cap + i]);
  for (size_t j = 0; j < dout; j++)
    for (size_t i = 0; i < m; i++) dsum[i] += d[j * cap + i], dabs[i] += fabsf(d[j * cap + i]);
  for (size_t i = 0; i < m; i++) asum[i] += 1.0, aabs[i] += 1.0;
  for (size_t j = 0; j < dout; j++) RA[j] += absdot4(m, d + j * cap, aabs);
  for (size_t k = 0; k < din; k++) CA[k] += absdot4(m, a + k * cap, dabs);
  for (size_t i = 0; i < m; i++) CA[din] += dabs[i];
}

/* Layer l's gradient references (surrogate_checks.c names them): per sample
 * asum = sum_k a_k + 1, aabs = sum_k |a_k| + 1, dsum = sum_j d_j, dabs =
 * sum_j |d_j| in double (index order); the references rowref and colref are
 * dout + din + 1 batch dot products with s->strategy, like the gradient. The
 * bounds' sums RA, CA only scale thresholds: they are plain double sums (per
 * thread, then in thread order; any order is within gamma_d(N) of the exact
 * value), handed over as partials of the strategy for the cross-rank combine.
 * The sums draw from a copy of the network's seeded atomic order, so that
 * turning the checks on changes no later reduction. */
PetscErrorCode SurrogateCheckGradRefs_CPU(Surrogate s, int l, const float *d, const float *a, size_t n, size_t cap)
{
  size_t           din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1], nb = dout + din + 1;
  red_partial_t *rowref = s->ck.gpart + s->ck.goff[l], *colref = rowref + dout, *RA = colref + din + 1, *CA = RA + dout;
  red_strategy_t   st = s->strategy;
  red_atomic_state ast = *s->order; /* a copy: the checks draw nothing from the network's order */
  double          *asum, *aabs, *dsum, *dabs, *row, *acc;
  int              nt = omp_get_max_threads();

  PetscFunctionBeginUser;
  PetscCall(Scratch(s, cap, &asum));
  aabs = asum + cap, dsum = aabs + cap, dabs = dsum + cap, row = dabs + cap;
  PetscCall(PetscCalloc1((size_t)nt * nb, &acc));
#pragma omp parallel num_threads(nt) if (n > 4096)
  {
    double *my = acc + (size_t)omp_get_thread_num() * nb;
#pragma omp for schedule(static) nowait
    for (size_t s0 = 0; s0 < n; s0 += CK_SB)
      persample_block(din, dout, a + s0, d + s0, PetscMin(CK_SB, n - s0), cap, asum + s0, aabs + s0, dsum + s0,
                      dabs + s0, my, my + dout);
  }
  for (int th = 1; th < nt; th++)
    for (size_t r = 0; r < nb; r++) acc[r] += acc[(size_t)th * nb + r];
  for (size_t r = 0; r < nb; r++) red_local(st, RED_OP_SUM, 1, &acc[r], NULL, r < dout ? &RA[r] : &CA[r - dout], &ast);
  for (size_t j = 0; j < dout; j++) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) row[i] = d[j * cap + i];
    red_local(st, RED_OP_DOT, n, row, asum, &rowref[j], &ast);
  }
  for (size_t k = 0; k < din; k++) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) row[i] = a[k * cap + i];
    red_local(st, RED_OP_DOT, n, row, dsum, &colref[k], &ast);
  }
  red_local(st, RED_OP_SUM, n, dsum, NULL, &colref[din], &ast); /* the bias column: a = 1 */
  PetscCall(PetscFree(acc));
  PetscFunctionReturn(PETSC_SUCCESS);
}
