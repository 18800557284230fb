/* tests/surrogate/test_cuda.c: CUDA backend vs CPU backend (skipped, exit 77,
 * without a usable GPU). With the same weights, predictions must be bitwise
 * equal in every build (same fixed-order arithmetic). After 5 train steps:
 * reproducible build: weights and loss bitwise equal; other builds: relative
 * L2 difference of the weights < 1e-3 and loss within 1e-4 relative. Batches
 * of 16384 samples and of -cuda_test_big_n (default 2^22 + 4099: two bin
 * segments of the GPU's reproducible sums and a partial last chunk; 2 steps).
 * And a batch on the device (SurrogateGetDeviceBatch, PredictDevice,
 * TrainDevice; the first step fixing the normalization) against the same
 * batch on the host, on either backend: the same bits (atomic build: the
 * tolerance above). */
#include "surr_test.h"
#if defined(MINIAPP_HAVE_CUDA)
#include "couple_cuda.h" /* the test's copies to and from the device */
#endif

#include <math.h>
#include <string.h>

static PetscErrorCode make(const char *dev, Surrogate *s)
{
  PetscFunctionBeginUser;
  PetscCall(opt("-surrogate_device", dev));
  PetscCall(heat_surrogate(PETSC_COMM_SELF, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One batch of nb samples: predictions, then `steps` train steps, CPU vs CUDA. */
static PetscErrorCode compare(PetscInt nb, PetscInt steps, int *failures)
{
  Surrogate c, g;
  PetscInt  np;
  float    *in, *tgt, *pc, *pg, lc, lg;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc4(nb * HEAT_NIN, &in, nb, &tgt, nb, &pc, nb, &pg));
  heat_samples(7, 0, (size_t)nb, 0.2f, in, tgt);
  PetscCall(make("cpu", &c));
  PetscCall(make("cuda", &g));
  PetscCall(SurrogatePredict(c, nb, in, pc));
  PetscCall(SurrogatePredict(g, nb, in, pg));
  size_t dp = count_diff_bits((size_t)nb, pc, pg);
  printf("batch %d: predictions with the initial weights: %zu differ\n", (int)nb, dp);
  if (dp) printf("FAIL: batch %d: CPU and CUDA forward passes differ on %zu samples\n", (int)nb, dp), ++*failures;

  PetscCall(train_steps(c, steps, nb, in, tgt, &lc));
  PetscCall(train_steps(g, steps, nb, in, tgt, &lg));
  size_t dw  = 0;
  double rel = 0;
  PetscCall(weights_diff(c, g, &dw, &rel, &np));
  printf("batch %d, after %d steps (%s): %zu of %d weights differ, relative L2 %.3e, loss cpu %.9e cuda %.9e\n", (int)nb, (int)steps, SurrogateGetStrategyName(), dw, (int)np, rel, (double)lc, (double)lg);
#if defined(MINIAPP_SURROGATE_REDUCTION_REPRODUCIBLE)
  if (dw || lc != lg) printf("FAIL: batch %d: reproducible build: CPU and CUDA weights or loss differ\n", (int)nb), ++*failures;
  { /* the whole state: moments and the gradient sums' row exponents too (weights can agree while these differ) */
    unsigned char *bc, *bg;
    size_t         lc_, lg_;
    PetscCall(SurrogateSerialize(c, &bc, &lc_));
    PetscCall(SurrogateSerialize(g, &bg, &lg_));
    if (lc_ != lg_ || memcmp(bc, bg, lc_)) printf("FAIL: batch %d: reproducible build: CPU and CUDA checkpoints differ (moments or row exponents)\n", (int)nb), ++*failures;
    PetscCall(PetscFree(bc));
    PetscCall(PetscFree(bg));
  }
#else
  if (!(rel < 1e-3 && fabs(lc - lg) <= 1e-4 * lc)) printf("FAIL: batch %d: CPU and CUDA training differ beyond the tolerance\n", (int)nb), ++*failures;
#endif
  PetscCall(SurrogateDestroy(&c));
  PetscCall(SurrogateDestroy(&g));
  PetscCall(PetscFree4(in, tgt, pc, pg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Non-finite products: a target of +Inf in one sample makes
 * the output layer's gradient products +-Inf and NaN. The device must give
 * what the CPU gives, entry by entry: NaN, +Inf, -Inf, or the same finite
 * bits; never a finite value where the CPU has none. */
static int kind(float v) { return v != v ? 1 : v == INFINITY ? 2 : v == -INFINITY ? 3 : 0; }

static PetscErrorCode nonfinite(int *failures)
{
  Surrogate c, g;
  PetscInt  np, nb = 5000;
  float    *in, *tgt, *gc, *gg, lc, lg;
  size_t    bad = 0, special = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(nb * HEAT_NIN, &in, nb, &tgt));
  heat_samples(7, 0, (size_t)nb, 0.2f, in, tgt);
  tgt[123] = INFINITY;
  PetscCall(make("cpu", &c));
  PetscCall(make("cuda", &g));
  PetscCall(SurrogateGetNumWeights(c, &np));
  PetscCall(PetscMalloc2(np, &gc, np, &gg));
  PetscCall(SurrogateComputeGradient(c, nb, in, tgt, gc, &lc));
  PetscCall(SurrogateComputeGradient(g, nb, in, tgt, gg, &lg));
  for (PetscInt i = 0; i < np; i++) {
    special += kind(gc[i]) != 0;
    if (kind(gc[i]) != kind(gg[i])) bad++;
  }
  printf("non-finite products: %zu of %d gradient entries not finite on the CPU, %zu differ in kind on the device; loss cpu %g device %g\n", special, (int)np, bad, (double)lc, (double)lg);
  if (!special || bad || kind(lc) != kind(lg)) printf("FAIL: non-finite products: the device does not give the CPU's NaN/Inf\n"), ++*failures;
  PetscCall(PetscFree2(gc, gg));
  PetscCall(PetscFree2(in, tgt));
  PetscCall(SurrogateDestroy(&c));
  PetscCall(SurrogateDestroy(&g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(MINIAPP_HAVE_CUDA)
static PetscErrorCode resident(const char *dev, int *failures)
{
  Surrogate h, d;
  PetscInt  nb = 3001, np;
  float    *in, *tgt, *ph, *pd, lh, ld, *din, *dtgt, *dout;
  size_t    dw;
  double    rel;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc4(nb * HEAT_NIN, &in, nb, &tgt, nb, &ph, nb, &pd));
  heat_samples(11, 0, (size_t)nb, 0.2f, in, tgt);
  PetscCall(make(dev, &h));
  PetscCall(make(dev, &d));
  PetscCall(SurrogateGetDeviceBatch(d, nb, &din, &dtgt, &dout));
  if (couple_cuda_to_device(din, in, (size_t)nb * HEAT_NIN * sizeof *in) ||
      couple_cuda_to_device(dtgt, tgt, (size_t)nb * sizeof *tgt))
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "copy to the device failed");
  for (int k = 0; k < 3; k++) {
    PetscCall(SurrogateTrain(h, nb, in, tgt, &lh));
    PetscCall(SurrogateTrainDevice(d, nb, din, dtgt, &ld));
  }
  PetscCall(SurrogatePredict(h, nb, in, ph));
  PetscCall(SurrogatePredictDevice(d, nb, din, dout));
  if (couple_cuda_to_host(pd, dout, (size_t)nb * sizeof *pd)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "copy failed");
  PetscCall(weights_diff(h, d, &dw, &rel, &np));
  size_t dp = count_diff_bits((size_t)nb, ph, pd);
  printf("%s network, batch on the device: %zu of %d weights, %zu of %d predictions differ from the host batch's; loss "
         "%.9e and %.9e\n", dev, dw, (int)np, dp, (int)nb, (double)lh, (double)ld);
#if defined(MINIAPP_SURROGATE_REDUCTION_ATOMIC)
  if (!(rel < 1e-3 && fabs(lh - ld) <= 1e-4 * lh))
    printf("FAIL: %s: the device batch trains beyond the tolerance\n", dev), ++*failures;
#else
  if (dw || dp || lh != ld)
    printf("FAIL: %s: the device batch does not give the host batch's bits\n", dev), ++*failures;
#endif
  PetscCall(SurrogateDestroy(&h));
  PetscCall(SurrogateDestroy(&d));
  PetscCall(PetscFree4(in, tgt, ph, pd));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  PetscInt big = ((PetscInt)1 << 22) + 4099;
  int       failures = 0;
  PetscBool probe    = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cuda_test_probe", &probe, NULL));
  if (probe) { /* first contact (gpu-check.sh -steps device): one line, exit 1 when the device cannot be used */
    char line[512];
    int  rc = SurrogateCUDAProbe(line, sizeof line);
    printf("%s%s\n", rc ? "test_surrogate_cuda: error: " : "", line);
    PetscCall(PetscFinalize());
    return rc ? 1 : 0;
  }
  if (SurrogateCUDAAvailable() <= 0) {
    printf("skipped: %s\n", SurrogateCUDAAvailable() < 0 ? "built without CUDA" : "no usable CUDA device");
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cuda_test_big_n", &big, NULL));
  PetscCall(nonfinite(&failures));
#if defined(MINIAPP_HAVE_CUDA)
  PetscCall(resident("cuda", &failures));
  PetscCall(resident("cpu", &failures));
#endif
  PetscCall(compare(16384, 5, &failures));
  if (big > 0) PetscCall(compare(big, 2, &failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
