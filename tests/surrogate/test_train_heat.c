/* tests/surrogate/test_train_heat.c: training drives the loss down on a known
 * smooth map (one explicit heat step, heatdata.h) and the trained network
 * predicts unseen stencils. Stated tolerances: after 400 steps (lr 1e-2) on 4096 samples
 * the training loss (normalized MSE) is < 1e-2 and < 1% of the first step's,
 * and the RMS prediction error on 4096 new samples is < 0.1 x the target's std. */
#include "surr_test.h"

#include <math.h>

int main(int argc, char **argv)
{
  Surrogate s;
  PetscInt  n = 4096, steps = 400;
  float    *in, *tgt, *pred, loss0 = 0, loss = 0;
  int       failures = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscMalloc3(n * HEAT_NIN, &in, n, &tgt, n, &pred));
  heat_samples(7, 0, (size_t)n, 0.2f, in, tgt);
  PetscCall(PetscOptionsSetValue(NULL, "-surrogate_lr", "1e-2")); /* the tolerance below is for this rate */
  PetscCall(heat_surrogate(PETSC_COMM_WORLD, &s));
  PetscCall(SurrogateTrain(s, n, in, tgt, &loss0));
  PetscCall(train_steps(s, steps - 1, n, in, tgt, &loss));
  printf("heat step: loss %.4e at step 1, %.4e at step %d\n", (double)loss0, (double)loss, (int)steps);
  CHECK(loss < 1e-2f && loss < 1e-2f * loss0, "training loss %.4e not below 1e-2 and 1%% of %.4e", (double)loss, (double)loss0);

  heat_samples(8, 0, (size_t)n, 0.2f, in, tgt); /* unseen data, same map */
  PetscCall(SurrogatePredict(s, n, in, pred));
  double se = 0, m = 0, var = 0;
  for (PetscInt i = 0; i < n; i++) m += tgt[i];
  m /= n;
  for (PetscInt i = 0; i < n; i++) se += (pred[i] - tgt[i]) * (pred[i] - tgt[i]), var += (tgt[i] - m) * (tgt[i] - m);
  double rel = sqrt(se / var);
  printf("heat step: RMS prediction error on unseen data %.4e x target std\n", rel);
  CHECK(rel < 0.1, "prediction error %.4e x std, expected < 0.1", rel);
  PetscCall(SurrogateDestroy(&s));
  PetscCall(PetscFree3(in, tgt, pred));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
