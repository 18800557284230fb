/* surrogate/tallskinny_cpu.c: the tall-skinny reduction of a train step on the
 * CPU: dW[j][k] = sum_s d[j][s] a[k][s] and db[j] = sum_s d[j][s] over the
 * batch, one function per strategy (the caller picks once per layer).
 *   atomic, deterministic: float accumulation, as a GPU does it. The batch is
 *     cut into fixed chunks of SURR_CHUNK samples; a chunk's partials are
 *     fixed-order 8-lane float sums. atomic adds each chunk's partials into the
 *     result in completion order (#pragma omp atomic), or, with an atomic order
 *     seed, in a permutation drawn from (seed, step, layer); deterministic
 *     combines the chunks by a fixed pairwise tree.
 *   reproducible: the float products are exact in double; kernels/ rsum sums
 *     them order-independently and the result is rounded once to float.
 * Arrays are feature-major with row stride cap: d[dout][cap], a[din][cap]. */
#include "surrogate_impl.h"
#include "hashrng.h"

#include <stdlib.h>

#define SURR_CHUNK 1024

static inline float lane_dot(size_t m, const float *d, const float *a)
{
  float  l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i    = 0;
  for (; i + 8 <= m; i += 8)
    for (int t = 0; t < 8; t++) l[t] = surr_madd(l[t], d[i + t], a[i + t]);
  for (; i < m; i++) l[i % 8] = surr_madd(l[i % 8], d[i], a[i]);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

static inline float lane_sum(size_t m, const float *d)
{
  float  l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i    = 0;
  for (; i + 8 <= m; i += 8)
    for (int t = 0; t < 8; t++) l[t] += d[i + t];
  for (; i < m; i++) l[i % 8] += d[i];
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* out[j*din+k] (weights) then out[dout*din+j] (biases) for chunk c. */
static void chunk_partials(size_t c, size_t din, size_t dout, const float *d, const float *a, size_t n, size_t cap, float *out)
{
  size_t s0 = c * SURR_CHUNK, m = PetscMin(SURR_CHUNK, n - s0);
  for (size_t j = 0; j < dout; j++) {
    const float *dj = d + j * cap + s0;
    for (size_t k = 0; k < din; k++) out[j * din + k] = lane_dot(m, dj, a + k * cap + s0);
    out[dout * din + j] = lane_sum(m, dj);
  }
}

static void store(size_t din, size_t dout, const float *g, red_partial_t *pw, red_partial_t *pb)
{
  for (size_t i = 0; i < din * dout; i++) pw[i].d = g[i];
  for (size_t j = 0; j < dout; j++) pb[j].d = g[din * dout + j];
}

static PetscErrorCode ts_deterministic(size_t din, size_t dout, const float *d, const float *a, size_t n, size_t cap, red_partial_t *pw, red_partial_t *pb)
{
  size_t P = din * dout + dout, nc = (n + SURR_CHUNK - 1) / SURR_CHUNK;
  float *buf;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nc * P, &buf));
#pragma omp parallel for schedule(static) if (nc > 1)
  for (size_t c = 0; c < nc; c++) chunk_partials(c, din, dout, d, a, n, cap, buf + c * P);
  /* fixed pairwise tree over the chunks: level by level, left += right */
  for (size_t st = 1; st < nc; st *= 2)
    for (size_t c = 0; c + st < nc; c += 2 * st)
      for (size_t i = 0; i < P; i++) buf[c * P + i] += buf[(c + st) * P + i];
  store(din, dout, buf, pw, pb);
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ts_atomic(uint64_t key, size_t din, size_t dout, const float *d, const float *a, size_t n, size_t cap, red_partial_t *pw, red_partial_t *pb)
{
  size_t   P = din * dout + dout, nc = (n + SURR_CHUNK - 1) / SURR_CHUNK;
  float   *acc, *buf;
  uint64_t seed = red_get_atomic_order_seed();

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(P, &acc));
  if (seed == 0) {
    /* Completion order: many small dynamic chunks, each added element-wise
     * with an atomic as soon as it is done (needs >= 3 chunks to show). */
#pragma omp parallel if (nc > 1)
    {
      float *tmp = (float *)malloc(P * sizeof(float));
#pragma omp for schedule(dynamic, 1)
      for (size_t c = 0; c < nc; c++) {
        chunk_partials(c, din, dout, d, a, n, cap, tmp);
        for (size_t i = 0; i < P; i++) {
#pragma omp atomic
          acc[i] += tmp[i];
        }
      }
      free(tmp);
    }
  } else {
    /* Seeded replay: the same chunk partials added in a drawn order (the key
     * holds seed, Adam step and layer, so a resumed run replays it too). */
    size_t *perm;
    PetscCall(PetscMalloc2(nc * P, &buf, nc, &perm));
#pragma omp parallel for schedule(static) if (nc > 1)
    for (size_t c = 0; c < nc; c++) chunk_partials(c, din, dout, d, a, n, cap, buf + c * P);
    for (size_t c = 0; c < nc; c++) perm[c] = c;
    for (size_t c = nc; c > 1; c--) {
      size_t r = (size_t)(mix64(seed ^ mix64(key + c)) % c), t = perm[c - 1];
      perm[c - 1] = perm[r], perm[r] = t;
    }
    for (size_t c = 0; c < nc; c++)
      for (size_t i = 0; i < P; i++) acc[i] += buf[perm[c] * P + i];
    PetscCall(PetscFree2(buf, perm));
  }
  store(din, dout, acc, pw, pb);
  PetscCall(PetscFree(acc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void to_double(size_t rows, size_t n, size_t cap, const float *x, double *y)
{
#pragma omp parallel for schedule(static) if (rows * n > 65536)
  for (size_t r = 0; r < rows; r++)
    for (size_t i = 0; i < n; i++) y[r * cap + i] = x[r * cap + i];
}

/* Xd: [din][cap] doubles, Dd: n doubles (scratch). */
static void ts_reproducible(size_t din, size_t dout, const float *d, const float *a, size_t n, size_t cap, double *Xd, double *Dd, red_partial_t *pw, red_partial_t *pb)
{
  to_double(din, n, cap, a, Xd);
  for (size_t j = 0; j < dout; j++) {
    to_double(1, n, cap, d + j * cap, Dd);
    for (size_t k = 0; k < din; k++) red_local(RED_REPRODUCIBLE, RED_OP_DOT, n, Dd, Xd + k * cap, &pw[j * din + k]);
    red_local(RED_REPRODUCIBLE, RED_OP_SUM, n, Dd, NULL, &pb[j]);
  }
}

/* The reproducible partial is the rsum state (exact, merged across ranks);
 * the float strategies hand over their float result widened to double. */
PetscErrorCode SurrogateTallSkinny_CPU(Surrogate s, int layer, const float *d, const float *a, size_t n, size_t cap, double *Xd, double *Dd, red_partial_t *pw, red_partial_t *pb)
{
  size_t din = (size_t)s->dim[layer], dout = (size_t)s->dim[layer + 1];

  PetscFunctionBeginUser;
  switch (s->strategy) {
  case RED_REPRODUCIBLE: ts_reproducible(din, dout, d, a, n, cap, Xd, Dd, pw, pb); break;
  case RED_DETERMINISTIC: PetscCall(ts_deterministic(din, dout, d, a, n, cap, pw, pb)); break;
  default: PetscCall(ts_atomic(mix64((uint64_t)s->step) * 64 + (uint64_t)layer * 0x10001ULL, din, dout, d, a, n, cap, pw, pb)); break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Error bound of one float entry of the atomic and deterministic sums above,
 * for the ABFT threshold (surrogate_checks.c): a chunk's 8 lanes each add at
 * most SURR_CHUNK/8 = 128 products (128 roundings on the longest path, the
 * products' own included), the lane tree adds 3, and the chunk partials add
 * ceil(log2 nc) (deterministic, pairwise tree) or nc - 1 (atomic, any order)
 * for nc <= ceil(N / SURR_CHUNK) chunks: |g - exact| <= gamma_f(depth) sum|d a|. */
double SurrogateTallSkinnyDepth_CPU(red_strategy_t st, int64_t N)
{
  double nc = (double)((N + SURR_CHUNK - 1) / SURR_CHUNK), depth = 0.0;
  if (st == RED_DETERMINISTIC)
    while ((double)((int64_t)1 << (int)depth) < nc) depth += 1.0;
  else depth = nc > 1 ? nc - 1 : 0;
  return SURR_CHUNK / 8 + 3 + depth;
}
