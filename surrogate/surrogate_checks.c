/* surrogate/surrogate_checks.c: algorithm-based fault tolerance of the train
 * step (Huang and Abraham's checksum encoding, docs/faults.md): the weight
 * encodings and their exact verification, the gradient's row and column
 * checksums after the cross-rank combine, and the failure record. The
 * per-sample forward and backward-data checks of the CPU backend are in
 * checks_cpu.c. Every threshold is a rounding-error bound written next to its
 * comparison; fault-free data cannot exceed it in any build. */
#include "surrogate_impl.h"

#include <string.h>

/* Offsets of the encodings and of the gradient references (no allocation). */
PetscErrorCode SurrogateChecksLayout_Private(Surrogate s)
{
  SurrogateChecks *ck = &s->ck;

  PetscFunctionBeginUser;
  ck->ncol = ck->nrow = ck->ng = 0;
  for (int l = 0; l < s->nlayer; l++) {
    size_t din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1];
    ck->coff[l] = ck->ncol, ck->roff[l] = ck->nrow, ck->goff[l] = ck->ng;
    ck->ncol += din, ck->nrow += dout, ck->ng += 2 * (dout + din + 1);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ChecksAlloc(Surrogate s)
{
  SurrogateChecks *ck = &s->ck;

  PetscFunctionBeginUser;
  if (ck->c) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(
    PetscMalloc5(ck->ncol, &ck->c, ck->ncol, &ck->cabs, ck->nrow, &ck->r, ck->nrow, &ck->rabs, ck->nrow, &ck->rw));
  PetscCall(PetscMalloc2(ck->ng, &ck->gpart, ck->ng, &ck->gval));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateChecksDestroy_Private(Surrogate s)
{
  SurrogateChecks *ck = &s->ck;

  PetscFunctionBeginUser;
  if (ck->c) PetscCall(PetscFree5(ck->c, ck->cabs, ck->r, ck->rabs, ck->rw));
  if (ck->gpart) PetscCall(PetscFree2(ck->gpart, ck->gval));
  PetscCall(PetscFree(ck->scratch));
  ck->scap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The encodings of one layer W[dout][din], b[dout], in double with one fixed
 * order (column sums: j ascending; row sums: k ascending, then + b_j). The
 * verification runs this same function (not inlined: one machine code) on the
 * same floats, so fault-free it reproduces every bit. */
static __attribute__((noinline)) void encode_layer(const float *W, const float *b, size_t din, size_t dout, double *c,
                                                   double *cabs, double *r, double *rabs, double *rw, double *cb,
                                                   double *babs)
{
  for (size_t k = 0; k < din; k++) c[k] = 0.0, cabs[k] = 0.0;
  *cb = 0.0, *babs = 0.0;
  for (size_t j = 0; j < dout; j++) {
    const float *wj = W + j * din;
    double       rs = 0.0, ra = 0.0;
    for (size_t k = 0; k < din; k++) {
      c[k] += wj[k], cabs[k] += fabs((double)wj[k]);
      rs += wj[k], ra += fabs((double)wj[k]);
    }
    r[j] = rs, rabs[j] = ra, rw[j] = rs + b[j];
    *cb += b[j], *babs += fabs((double)b[j]);
  }
}

PetscErrorCode SurrogateChecksEncode_Private(Surrogate s)
{
  SurrogateChecks *ck = &s->ck;

  PetscFunctionBeginUser;
  PetscCall(ChecksAlloc(s));
  PetscCall(SurrogateSyncHost_Private(s));
  for (int l = 0; l < s->nlayer; l++)
    encode_layer(s->w + s->woff[l], s->w + s->boff[l], (size_t)s->dim[l], (size_t)s->dim[l + 1], ck->c + ck->coff[l],
                 ck->cabs + ck->coff[l], ck->r + ck->roff[l], ck->rabs + ck->roff[l], ck->rw + ck->roff[l], &ck->cb[l],
                 &ck->babs[l]);
  ck->encoded = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SurrogateChecksNote_Private(Surrogate s, PetscBool replicated, PetscInt nfail, double worst, const char *what)
{
  SurrogateChecks *ck = &s->ck;

  if (replicated) ck->nrep += nfail;
  else ck->nloc += nfail;
  if (!(worst <= ck->worst)) ck->worst = worst != worst ? INFINITY : worst; /* NaN counts as infinitely bad */
  if (nfail > 0 && what && !ck->what[0]) {
    if (s->size > 1 && !replicated) (void)PetscSNPrintf(ck->what, sizeof ck->what, "rank %d: %s", (int)s->rank, what);
    else (void)PetscStrncpy(ck->what, what, sizeof ck->what);
  }
}

/* Name a checksum failure the ABFT way: one failing row and one failing
 * column intersect in the corrupted entry; otherwise name the first line. */
static void locate(char *buf, size_t len, const char *kind, int layer, size_t din, long long nrowf, long long row,
                   long long ncolf, long long col)
{
  char cs[32];
  if (col == (long long)din) (void)PetscSNPrintf(cs, sizeof cs, "bias");
  else (void)PetscSNPrintf(cs, sizeof cs, "%lld", col);
  if (nrowf == 1 && ncolf == 1) (void)PetscSNPrintf(buf, len, "%s layer %d entry (%lld,%s)", kind, layer, row, cs);
  else if (nrowf > 0) (void)PetscSNPrintf(buf, len, "%s layer %d row %lld", kind, layer, row);
  else (void)PetscSNPrintf(buf, len, "%s layer %d column %s", kind, layer, cs);
}

/* Exact check: the encodings recomputed from the weights must equal the
 * stored ones bitwise (same function, same order, same data). Threshold 0;
 * it catches any flip that changes a double row or column sum, i.e. all but
 * a change below half an ulp of that sum. On a device backend the device's
 * weights are pulled first, so it is their state that is verified. */
PetscErrorCode SurrogateChecksVerifyWeights_Private(Surrogate s)
{
  SurrogateChecks *ck = &s->ck;
  double          *c, *cabs, *r, *rabs, *rw;

  PetscFunctionBeginUser;
  if (s->ops->pull) s->host_stale = PETSC_TRUE;
  PetscCall(SurrogateSyncHost_Private(s));
  PetscCall(PetscMalloc5(ck->ncol, &c, ck->ncol, &cabs, ck->nrow, &r, ck->nrow, &rabs, ck->nrow, &rw));
  for (int l = 0; l < s->nlayer; l++) {
    size_t    din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1];
    double    cb, babs;
    long long nr = 0, nc = 0, row = -1, col = -1;
    encode_layer(s->w + s->woff[l], s->w + s->boff[l], din, dout, c, cabs, r, rabs, rw, &cb, &babs);
    for (size_t j = 0; j < dout; j++)
      if (memcmp(&rw[j], &ck->rw[ck->roff[l] + j], sizeof(double))) nr++, row = row < 0 ? (long long)j : row;
    for (size_t k = 0; k < din; k++)
      if (memcmp(&c[k], &ck->c[ck->coff[l] + k], sizeof(double))) nc++, col = col < 0 ? (long long)k : col;
    if (memcmp(&cb, &ck->cb[l], sizeof(double))) nc++, col = col < 0 ? (long long)din : col;
    if (nr + nc) {
      char what[96];
      locate(what, sizeof what, "weight", l + 1, din, nr, row, nc, col);
      SurrogateChecksNote_Private(s, PETSC_TRUE, (PetscInt)(nr + nc), 0.0, what);
    }
  }
  PetscCall(PetscFree5(c, cabs, r, rabs, rw));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gradient checksums after the combine (and after the gradient fault site).
 * Layer l's gradient is the augmented G = [dW | db] (dout x (din+1)), exactly
 * sum_s d_s [a_s; 1]^T. The backend computed, for each row j and column k of
 * G (rowref, colref with s->strategy; RA, CA, which only scale thresholds, as
 * plain double sums on the CPU), all combined across ranks like the gradient:
 *   rowref_j = sum_s d_js (sum_k a_ks + 1),   RA_j = sum_s |d_js| (sum_k |a_ks| + 1),
 *   colref_k = sum_s (sum_j d_js) a_ks,       CA_k = sum_s (sum_j |d_js|) |a_ks|,
 * (a_{din,s} = 1: the bias column), so that A_jk = sum_s |d_js a_ks| sums to RA_j
 * over a row and to CA_k over a column. Per entry the float gradient g obeys
 *   |g - G| <= eg A + u_f |g|,
 * eg: the strategy's summation bound (below), u_f = 2^-24 the final rounding
 * to float. Summing the float row in double adds gamma_d(din+1) sum|g|, and
 * the reference's own error is at most er RA_j. Underflow escapes these
 * relative bounds: each float product or final rounding that lands among the
 * subnormals is off by at most 2^-150, at most ea = (products + 1) 2^-150 per
 * entry. Hence, for row j,
 *   tau_j = 2 [ (eg + er) RA_j + (u_f + gamma_d(din + 1)) sum_k |g_jk| + (din + 1) ea + N sum_k h_jk ],
 * and the same for a column with CA_k, gamma_d(dout) and dout ea. h_jk: in
 * the reproducible strategy, the rounding bound of each product, U/2 of the
 * weight's global unit (kernels/gsum.c: n U/2 <= n 2^-44 max|d_j| max|a_k|,
 * not a multiple of A; the backends leave it in the partial's d); else 0. The factor 2 covers
 * the rounding of RA, CA, sum|g| and of tau itself (relative errors below
 * 1% for every size this surrogate allows). A flip of entry (j,k) moves
 * row j and column k by the same amount: both fail when it exceeds them. */
PetscErrorCode SurrogateChecksGradient_Private(Surrogate s, int64_t N)
{
  SurrogateChecks *ck = &s->ck;
  double           eg, er, ea, worst = 0.0;
  int              maxd = 0;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCombine_Private(s, ck->ng, ck->gpart, ck->gval));
  for (int l = 0; l <= s->nlayer; l++) maxd = PetscMax(maxd, (int)s->dim[l]);
  /* eg, the gradient's summation: reproducible: the rounding to double,
   * 2^-53 A, and the references' rsum (CUDA: er below) within N 2^-80 A; the
   * gradient's own unit roundings are the h term of tau; atomic and deterministic: float sums whose
   * longest path has `depth` roundings (gamma_f(depth) A), then the rank
   * partials combined in double (gamma_d(size)). */
  if (s->strategy == RED_REPRODUCIBLE) eg = (double)N * 0x1p-80 + 0x1p-53;
  else {
#if defined(MINIAPP_HAVE_CUDA)
    if (s->device == SURROGATE_DEVICE_CUDA)
      eg = surr_gamma_f(SurrogateGradsumDepth_CUDA(s->strategy, N)) + surr_gamma_d(s->size);
    else
#endif
      eg = surr_gamma_f(SurrogateTallSkinnyDepth_CPU(s->strategy, N)) + surr_gamma_d(s->size);
  }
  /* er, the references: CPU: per-sample sums of at most maxd+1 floats in
   * double, one product, and a double reduction of N terms across `size`
   * partials (any order): gamma_d(maxd + N + size + 3). CUDA: the per-sample
   * sums are float (gamma_f(maxd + 1)) and the batch sums go through the
   * same gradsum as the gradient (eg). */
  er = surr_gamma_d((double)maxd + (double)N + s->size + 3);
  /* ea: float products of the float strategies (N per entry) and the final
   * rounding; the reproducible products are exact in double. CUDA: the
   * references' float products too. */
  ea = ((s->strategy == RED_REPRODUCIBLE ? 0.0 : (double)N) + 1.0) * 0x1p-150;
#if defined(MINIAPP_HAVE_CUDA)
  if (s->device == SURROGATE_DEVICE_CUDA) er = surr_gamma_f(maxd + 1) + eg, ea += (double)N * 0x1p-150;
#endif
  const int rep = s->strategy == RED_REPRODUCIBLE;
  for (int l = 0; l < s->nlayer; l++) {
    size_t               din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1];
    const float         *G = s->grad + s->woff[l], *gb = s->grad + s->boff[l];
    const red_partial_t *hw = s->part + s->woff[l], *hb = s->part + s->boff[l]; /* h_jk in .d (reproducible) */
    const double *rowref = ck->gval + ck->goff[l], *colref = rowref + dout, *RA = colref + din + 1, *CA = RA + dout;
    long long     nr = 0, nc = 0, row = -1, col = -1;
    for (size_t j = 0; j < dout; j++) {
      double sum = 0.0, sabs = 0.0;
      for (size_t k = 0; k < din; k++) sum += G[j * din + k], sabs += fabs((double)G[j * din + k]);
      sum += gb[j], sabs += fabs((double)gb[j]);
      double h = 0.0;
      if (rep)
        for (size_t k = 0; k <= din; k++) h += k < din ? hw[j * din + k].d : hb[j].d;
      double tau = 2.0 * ((eg + er) * RA[j] + (0x1p-24 + surr_gamma_d((double)din + 1)) * sabs +
                          ((double)din + 1) * ea + (double)N * h),
             d   = fabs(sum - rowref[j]);
      if (!(d <= tau && tau < INFINITY)) nr++, row = row < 0 ? (long long)j : row;
      if (tau > 0 || d > 0) worst = PetscMax(worst, d != d || tau != tau ? INFINITY : d / tau);
    }
    for (size_t k = 0; k <= din; k++) {
      double sum = 0.0, sabs = 0.0;
      double h = 0.0;
      for (size_t j = 0; j < dout; j++) {
        float g = k < din ? G[j * din + k] : gb[j];
        sum += g, sabs += fabs((double)g);
        if (rep) h += k < din ? hw[j * din + k].d : hb[j].d;
      }
      double tau = 2.0 * ((eg + er) * CA[k] + (0x1p-24 + surr_gamma_d((double)dout)) * sabs + (double)dout * ea +
                          (double)N * h),
             d   = fabs(sum - colref[k]);
      if (!(d <= tau && tau < INFINITY)) nc++, col = col < 0 ? (long long)k : col;
      if (tau > 0 || d > 0) worst = PetscMax(worst, d != d || tau != tau ? INFINITY : d / tau);
    }
    char what[96];
    if (nr + nc) locate(what, sizeof what, "gradient", l + 1, din, nr, row, nc, col);
    SurrogateChecksNote_Private(s, PETSC_TRUE, (PetscInt)(nr + nc), worst, nr + nc ? what : NULL);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetChecks(Surrogate s, PetscBool on)
{
  PetscFunctionBeginUser;
  s->ck.on      = on;
  s->ck.encoded = PETSC_FALSE; /* encoded from the current weights before the next step */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetCheckResult(Surrogate s, PetscInt *nfail, PetscReal *worst, char what[], size_t len)
{
  SurrogateChecks *ck = &s->ck;
  long long        loc = ck->nloc, tot;
  double           w   = ck->worst, wmax;
  PetscMPIInt      first, mine = (ck->nrep + ck->nloc) > 0 ? s->rank : s->size;
  char             buf[sizeof ck->what];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&loc, &tot, 1, MPI_LONG_LONG, MPI_SUM, s->comm));
  PetscCallMPI(MPI_Allreduce(&w, &wmax, 1, MPI_DOUBLE, MPI_MAX, s->comm));
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, s->comm));
  PetscCall(PetscStrncpy(buf, ck->what, sizeof buf));
  if (first < s->size && s->size > 1) PetscCallMPI(MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, s->comm));
  if (first == s->size) buf[0] = 0;
  if (nfail) *nfail = ck->nrep + (PetscInt)tot;
  if (worst) *worst = (PetscReal)wmax;
  if (what && len) PetscCall(PetscStrncpy(what, buf, len));
  ck->nrep = ck->nloc = 0, ck->worst = 0.0, ck->what[0] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
