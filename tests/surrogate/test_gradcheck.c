/* tests/surrogate/test_gradcheck.c: the backpropagated float gradient against
 * central finite differences of the loss computed in double by an independent
 * reference forward pass (same architecture, identity normalization).
 * Asserts every component within 1e-3 relative + 1e-4 of the largest. */
#include "surr_test.h"
#include "hashrng.h"

#include <math.h>

#define NIN 5
#define NOUT 2
#define NS 64
static const PetscInt widths[] = {8, 6};

/* Reference loss in double: mean over samples and outputs of (z - t)^2. */
static double ref_loss(const double *w, const float *in, const float *tgt)
{
  int    dim[4] = {NIN, 8, 6, NOUT};
  double a[16], z[16], L = 0.0;
  for (int sidx = 0; sidx < NS; sidx++) {
    for (int f = 0; f < NIN; f++) a[f] = in[sidx * NIN + f];
    size_t off = 0;
    for (int l = 0; l < 3; l++) {
      const double *W = w + off, *b = w + off + dim[l + 1] * dim[l];
      for (int j = 0; j < dim[l + 1]; j++) {
        double acc = b[j];
        for (int k = 0; k < dim[l]; k++) acc += W[j * dim[l] + k] * a[k];
        z[j] = (l < 2 && acc <= 0) ? acc * 0x1p-6 : acc;
      }
      for (int j = 0; j < dim[l + 1]; j++) a[j] = z[j];
      off += (size_t)dim[l + 1] * dim[l] + dim[l + 1];
    }
    for (int j = 0; j < NOUT; j++) L += (a[j] - tgt[sidx * NOUT + j]) * (a[j] - tgt[sidx * NOUT + j]);
  }
  return L / (NS * NOUT);
}

int main(int argc, char **argv)
{
  Surrogate s;
  PetscInt  np;
  float     in[NS * NIN], tgt[NS * NOUT], *w, *g, loss;
  double   *wd, *fd, gmax = 0, worst = 0;
  int       failures = 0, worst_i = -1;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (int i = 0; i < NS * NIN; i++) in[i] = 2.0f * rng_uniformf(11, (uint64_t)i) - 1.0f;
  for (int i = 0; i < NS * NOUT; i++) tgt[i] = rng_uniformf(12, (uint64_t)i);
  PetscCall(SurrogateCreate(PETSC_COMM_SELF, &s));
  PetscCall(SurrogateSetSizes(s, NIN, NOUT));
  PetscCall(SurrogateSetHiddenLayers(s, 2, widths));
  PetscCall(SurrogateSetFromOptions(s));
  PetscCall(SurrogateSetNormalization(s, NULL, NULL, NULL, NULL)); /* identity: the reference ignores it */
  PetscCall(SurrogateSetUp(s));
  PetscCall(SurrogateGetNumWeights(s, &np));
  PetscCall(PetscMalloc4(np, &w, np, &g, np, &wd, np, &fd));
  PetscCall(SurrogateGetWeights(s, w, np));
  PetscCall(SurrogateComputeGradient(s, NS, in, tgt, g, &loss));
  for (PetscInt i = 0; i < np; i++) wd[i] = w[i];
  double L0 = ref_loss(wd, in, tgt);
  CHECK(fabs(loss - L0) <= 1e-5 * L0, "loss %.9g vs double reference %.9g", (double)loss, L0);
  for (PetscInt i = 0; i < np; i++) {
    double h = 1e-6 * fmax(1.0, fabs(wd[i])), keep = wd[i];
    wd[i]     = keep + h;
    double Lp = ref_loss(wd, in, tgt);
    wd[i]     = keep - h;
    double Lm = ref_loss(wd, in, tgt);
    wd[i]     = keep;
    fd[i]     = (Lp - Lm) / (2 * h);
    gmax      = fmax(gmax, fabs(fd[i]));
  }
  for (PetscInt i = 0; i < np; i++) {
    double err = fabs((double)g[i] - fd[i]), tol = 1e-3 * fabs(fd[i]) + 1e-4 * gmax;
    if (err / tol > worst) worst = err / tol, worst_i = (int)i;
    if (err > tol && failures < 5) CHECK(0, "d loss/d w[%d]: backprop %.9g, finite difference %.9g", (int)i, (double)g[i], fd[i]);
  }
  printf("gradcheck: %d parameters, loss %.6g, max |grad| %.3g, worst error/tolerance %.3g at %d\n", (int)np, (double)loss, gmax, worst, worst_i);
  PetscCall(PetscFree4(w, g, wd, fd));
  PetscCall(SurrogateDestroy(&s));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
