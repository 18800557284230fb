/* surrogate/tallskinny_cpu.c: the tall-skinny reductions of a train step on
 * the CPU, dW[j][k] = sum_s d[j][s] a[k][s] and db[j] = sum_s d[j][s] over the
 * batch, for all layers at once. The batch is cut into fixed chunks of
 * SURR_CHUNK samples; the backend hands each chunk's deltas and activations to
 * SurrogateGradChunk_CPU while they are in cache, in any order and on any
 * thread, and SurrogateGradEnd_CPU combines the chunks with the strategy:
 *   atomic, deterministic: float accumulation, as a GPU does it. A chunk's
 *     partials are fixed-order 8-lane float sums (layers_cpu.c). atomic adds
 *     each chunk's partials into the result in completion order
 *     (#pragma omp atomic), or, with an atomic order seed, in a permutation
 *     drawn from (seed, step, layer); deterministic combines the chunks by a
 *     fixed pairwise tree.
 *   reproducible: the float products are exact in double; kernels/ gsum sums
 *     them order-independently under units fixed by every row's exponent
 *     (gsum_units): a row keeps the last step's exponent while this batch's
 *     row maximum (all ranks) still fits it, else it gets a new one. A chunk
 *     records its rows' maxima (left by the kernels that write the rows,
 *     layers_cpu.c, or taken here) and makes its sums under the last step's
 *     exponents while the rows are in cache (one state per weight and
 *     thread, merged exactly). End decides the exponents; the pairs of a row
 *     with a new one are made again in a second pass over the stored deltas
 *     and inputs (-log_view: SurrGradResum). The same states
 *     either way; the result is rounded once to float after the ranks merge.
 * The chunk partials of layer l sit at offset woff[l] of an nparam vector:
 * weights j * din + k, then the biases (the parameter layout). */
#include "surrogate_impl.h"
#include "hashrng.h"

#include <omp.h>
#include <string.h>

/* -log_view: the reproducible sums made again after the pass (the pairs of
 * the rows whose exponents changed; the whole step's on the first step) */
static PetscLogEvent ev_resum;

PetscErrorCode SurrogateGradBegin_CPU(Surrogate s, SurrogateGradAcc *g, size_t n)
{
  size_t P = s->nparam, nc = (n + SURR_CHUNK - 1) / SURR_CHUNK;

  PetscFunctionBeginUser;
  if (!ev_resum) PetscCall(PetscLogEventRegister("SurrGradResum", PETSC_OBJECT_CLASSID, &ev_resum));
  g->st   = s->strategy;
  g->seed = s->order->seed;
  g->nc   = nc;
  g->nth  = (size_t)omp_get_max_threads();
  if (g->st == RED_REPRODUCIBLE) {
    /* one state per weight and thread: at most 1 GiB of them (a wide network
     * then runs its gradient on fewer threads rather than run out of memory) */
    size_t most = ((size_t)1 << 30) / (P * sizeof(gsum_t));
    g->nth      = PetscMax(1, PetscMin(g->nth, most));
    if (g->ngs < g->nth * P) {
      PetscCall(PetscFree(g->gs));
      PetscCall(PetscMalloc1(g->nth * P, &g->gs));
      g->ngs = g->nth * P;
    }
    for (size_t i = 0; i < g->nth * P; i++) gsum_init(&g->gs[i]);
    g->nrow = s->nurow;
    for (int l = 0; l < s->nlayer; l++) { /* the sums in the pass unless no row has an exponent yet (the first step) */
      size_t r0 = s->urow[l], r1 = r0 + (size_t)s->dim[l + 1] + (size_t)s->dim[l];
      g->rowoff[l] = r0, g->inpass[l] = 0;
      for (size_t r = r0; r < r1; r++) g->inpass[l] |= s->uexp[r] != GSUM_ZERO && s->uexp[r] != GSUM_NONFINITE;
    }
    if (!g->ex || g->ncmax < nc * g->nrow) {
      PetscCall(PetscFree4(g->lanes, g->ex, g->rmax, g->renew));
      PetscCall(PetscMalloc4(nc * g->nrow * 8, &g->lanes, g->nrow, &g->ex, g->nrow, &g->rmax, g->nrow, &g->renew));
      g->ncmax = nc * g->nrow;
    }
  } else {
    size_t need = (g->st == RED_ATOMIC && g->seed == 0) ? P + g->nth * P : nc * P;
    if (g->nbuf < need) {
      PetscCall(PetscFree(g->buf));
      PetscCall(PetscMalloc1(need, &g->buf));
      g->nbuf = need;
    }
    /* the shared sums; then one scratch per thread */
    if (g->st == RED_ATOMIC && g->seed == 0) memset(g->buf, 0, P * sizeof(float));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

uint32_t *SurrogateGradLanes_CPU(SurrogateGradAcc *g, int l, size_t c)
{
  return g->st == RED_REPRODUCIBLE ? g->lanes + (c * g->nrow + g->rowoff[l]) * 8 : NULL;
}

void SurrogateGradNoteRows_CPU(uint32_t *lanes, size_t rows, const float *x, size_t m, size_t cap)
{
  if (!lanes) return;
  memset(lanes, 0, rows * 8 * sizeof *lanes);
  for (size_t r = 0; r < rows; r++) {
    float f = gsum_absmax(m, x + r * cap); /* the same bits as the kernels' lanes: Inf for Inf or NaN */
    memcpy(&lanes[8 * r], &f, sizeof f);
  }
}

/* Chunk c (m samples) of layer l; d = D_l, a = A_l at the chunk's first sample.
 * Called inside a parallel region (or on one thread); tid < nth. */
void SurrogateGradChunk_CPU(Surrogate s, SurrogateGradAcc *g, int l, size_t c, const float *d, const float *a, size_t m,
                            size_t cap, int tid, int known)
{
  size_t din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1], P = s->nparam, off = s->woff[l], np = dout * din + dout;

  switch (g->st) {
  case RED_REPRODUCIBLE: /* the rows' maxima (unless their kernels left them) and the sums under the last step's
                          * exponents, while the rows are in cache */
    if (!known) {
      uint32_t *ln = SurrogateGradLanes_CPU(g, l, c);
      SurrogateGradNoteRows_CPU(ln, dout, d, m, cap);
      SurrogateGradNoteRows_CPU(ln + 8 * dout, din, a, m, cap);
    }
    if (g->inpass[l]) {
      /* pairs of a row without an exponent, or past it, make wrong states here: End makes them again */
      const int32_t *ex = s->uexp + s->urow[l];
      gsum_t        *gs = g->gs + (size_t)tid * P;
      gsum_add_outer(gs + off, gs + s->boff[l], m, dout, d, cap, ex, din, a, cap, ex + dout);
    }
    break;
  case RED_ATOMIC:
    if (g->seed == 0) { /* completion order: added element-wise as soon as done */
      float *tmp = g->buf + P + (size_t)tid * P;
      SurrogateChunkPartials_CPU(din, dout, d, a, m, cap, tmp);
      for (size_t i = 0; i < np; i++) {
#pragma omp atomic
        g->buf[off + i] += tmp[i];
      }
      break;
    } /* seeded: stored, replayed in a drawn order at the end */
    /* fall through */
  default: SurrogateChunkPartials_CPU(din, dout, d, a, m, cap, g->buf + c * P + off); break;
  }
}

/* part[0..nparam): the rank's partials. The reproducible partial is the rsum
 * state (exact, merged across ranks); the float strategies hand over their
 * float result widened to double. */
/* The reproducible sums: the batch's row maxima (over the chunks, then the
 * ranks: a max is order-free) fix every row's exponent (gsum_units); the
 * sums made in the pass stand for the pairs of two rows that kept the last
 * step's; the other pairs' are made now, every chunk in any order, on any
 * thread; the thread states merge exactly. */
static PetscErrorCode GradEndReproducible(Surrogate s, SurrogateGradAcc *g, float *const *D, float *const *A, size_t n,
                                          size_t cap, red_partial_t *part)
{
  size_t   P = s->nparam, nc = g->nc, R = g->nrow;
  float   *mx = g->rmax;
  int32_t *e  = g->ex;

  PetscFunctionBeginUser;
  for (size_t r = 0; r < R; r++) { /* the largest magnitude bits of the row's lanes over the chunks */
    uint32_t b = 0;
    for (size_t c = 0; c < nc; c++)
      for (size_t t = 0; t < 8; t++) b = PetscMax(b, g->lanes[(c * R + r) * 8 + t]);
    if (b >= 0x7f800000u) b = 0x7f800000u; /* +Inf marks a non-finite value (Inf or NaN bits): no NaN here */
    memcpy(&mx[r], &b, sizeof b);
  }
  if (s->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mx, (PetscMPIInt)R, MPI_FLOAT, MPI_MAX, s->comm));
  int any = 0;
  for (int l = 0; l < s->nlayer; l++) {
    size_t         din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1], r0 = g->rowoff[l];
    unsigned char *rx = g->renew + r0, *ry = rx + dout;
    (void)SurrogateLayerUnits_Private(s, l, mx + r0, e + r0, rx);
    if (!g->inpass[l]) memset(rx, 1, dout + din); /* no sums in the pass: all made now */
    for (size_t j = 0; j < dout; j++) /* the pairs of a renewed row: their sums in the pass (if any) do not count */
      for (size_t k = 0; k <= din; k++) {
        if (!rx[j] && (k == din || !ry[k])) continue;
        size_t i = k < din ? s->woff[l] + j * din + k : s->boff[l] + j;
        for (size_t t = 0; t < g->nth; t++) gsum_init(&g->gs[t * P + i]);
        any = 1;
      }
  }
  if (any) PetscCall(PetscLogEventBegin(ev_resum, 0, 0, 0, 0));
#pragma omp parallel for schedule(static) \
  num_threads((int)g->nth) if (any && nc > 1) /* static: each thread walks its rows forward (gsum prefetches) */
  for (size_t c = 0; c < nc; c++) {
    size_t  s0 = c * SURR_CHUNK, m = PetscMin(SURR_CHUNK, n - s0);
    gsum_t *gs = g->gs + (size_t)omp_get_thread_num() * P;
    for (int l = 0; l < s->nlayer && any; l++) {
      size_t               din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1], r0 = g->rowoff[l];
      const unsigned char *rx = g->renew + r0, *ry = rx + dout;
      const int32_t       *ex = e + r0, *ey = ex + dout;
      const float         *d = D[l] + s0, *a = A[l] + s0;
      size_t               nrx = 0, nry = 0;
      for (size_t j = 0; j < dout; j++) nrx += rx[j];
      for (size_t k = 0; k < din; k++) nry += ry[k];
      if (nrx == dout) { /* the whole layer (the first step) */
        gsum_add_outer(gs + s->woff[l], gs + s->boff[l], m, dout, d, cap, ex, din, a, cap, ey);
        continue;
      }
      for (size_t j = 0; j < dout; j++) {
        /* its whole row of pairs and its bias */
        if (rx[j])
          gsum_add_outer(gs + s->woff[l] + j * din, gs + s->boff[l] + j, m, 1, d + j * cap, cap, ex + j, din, a, cap,
                         ey);
        else if (nry)
          for (size_t k = 0; k < din; k++) /* a kept delta row against a renewed input row: one pair */
            if (ry[k])
              gsum_add_outer(gs + s->woff[l] + j * din + k, NULL, m, 1, d + j * cap, cap, ex + j, 1, a + k * cap, cap,
                             ey + k);
      }
    }
  }
  if (any) PetscCall(PetscLogEventEnd(ev_resum, 0, 0, 0, 0));
  for (int l = 0; l < s->nlayer; l++) {
    size_t         din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1];
    const int32_t *ex = e + g->rowoff[l], *ey = ex + dout;
    for (size_t j = 0; j < dout; j++) for (size_t k = 0; k <= din; k++) {
      /* k == din: the bias (y = 1, exponent 1) */
        size_t i = k < din ? s->woff[l] + j * din + k : s->boff[l] + j;
        for (size_t t = 1; t < g->nth; t++) gsum_merge(&g->gs[i], &g->gs[t * P + i]);
        gsum_to_rsum(&g->gs[i], ex[j], k < din ? ey[k] : 1, &part[i].r);
        part[i].d = gsum_half_unit(ex[j], k < din ? ey[k] : 1); /* the same on every rank: the ABFT checks' bound */
      }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* part[0..nparam): the rank's partials. The reproducible partial is the rsum
 * state (exact, merged across ranks); the float strategies hand over their
 * float result widened to double. */
PetscErrorCode SurrogateGradEnd_CPU(Surrogate s, SurrogateGradAcc *g, float *const *D, float *const *A, size_t n,
                                    size_t cap, red_partial_t *part)
{
  size_t P = s->nparam, nc = g->nc;

  PetscFunctionBeginUser;
  if (g->st == RED_REPRODUCIBLE) {
    PetscCall(GradEndReproducible(s, g, D, A, n, cap, part));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (nc == 0) { /* no samples on this rank (the batch is split over ranks): empty sums */
    for (size_t i = 0; i < P; i++) part[i].d = 0.0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  float *res = g->buf;
  if (g->st == RED_DETERMINISTIC) { /* fixed pairwise tree over the chunks: level by level, left += right */
    for (size_t st = 1; st < nc; st *= 2)
      for (size_t c = 0; c + st < nc; c += 2 * st)
        for (size_t i = 0; i < P; i++) g->buf[c * P + i] += g->buf[(c + st) * P + i];
  } else if (g->seed != 0) {
    /* Seeded replay: per layer, the chunk partials added in a drawn order
     * (the key holds seed, Adam step and layer, so a resumed run replays it). */
    float  *acc;
    size_t *perm;
    PetscCall(PetscCalloc1(P, &acc));
    PetscCall(PetscMalloc1(nc, &perm));
    for (int l = 0; l < s->nlayer; l++) {
      uint64_t key = mix64((uint64_t)s->step) * 64 + (uint64_t)l * 0x10001ULL;
      size_t   off = s->woff[l], np = s->boff[l] + (size_t)s->dim[l + 1] - off;
      for (size_t c = 0; c < nc; c++) perm[c] = c;
      for (size_t c = nc; c > 1; c--) {
        size_t r = (size_t)(mix64(g->seed ^ mix64(key + c)) % c), t = perm[c - 1];
        perm[c - 1] = perm[r], perm[r] = t;
      }
      for (size_t c = 0; c < nc; c++)
        for (size_t i = 0; i < np; i++) acc[off + i] += g->buf[perm[c] * P + off + i];
    }
    memcpy(g->buf, acc, P * sizeof(float));
    PetscCall(PetscFree(acc));
    PetscCall(PetscFree(perm));
  }
  for (size_t i = 0; i < P; i++) part[i].d = res[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGradDestroy_CPU(SurrogateGradAcc *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(g->gs));
  PetscCall(PetscFree4(g->lanes, g->ex, g->rmax, g->renew));
  PetscCall(PetscFree(g->buf));
  g->ngs = g->nbuf = g->ncmax = 0;
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
