/* tests/surrogate/test_determinism.c: each build's own promise about the bits
 * of the trained weights (batch of 16 chunks so that several partials are
 * combined in every gradient sum):
 *   reproducible: same bits for 1, 2 and 3 OpenMP threads, and with the batch's
 *                 samples given in reverse order;
 *   deterministic: reruns give the same bits;
 *   atomic: with -atomic_order_seed the same seed replays the same bits and
 *           different seeds give different bits. */
#include "surr_test.h"

#include <omp.h>

#define NB 16384
#define STEPS 4

int main(int argc, char **argv)
{
  float   *in, *tgt, *rin, *rtgt, loss;
  uint64_t h[4];
  int      failures = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscMalloc4(NB * HEAT_NIN, &in, NB, &tgt, NB * HEAT_NIN, &rin, NB, &rtgt));
  heat_samples(7, 0, NB, 0.2f, in, tgt);
  printf("surrogate reduction: %s\n", SurrogateGetStrategyName());
#if defined(MINIAPP_SURROGATE_REDUCTION_REPRODUCIBLE)
  for (int t = 1; t <= 3; t++) {
    omp_set_num_threads(t);
    PetscCall(train_hash(STEPS, NB, in, tgt, &h[t - 1], &loss));
    printf("%d threads: weights hash %016llx, loss %.9e\n", t, (unsigned long long)h[t - 1], (double)loss);
  }
  CHECK(h[0] == h[1] && h[1] == h[2], "reproducible build: weights differ between 1, 2, 3 threads");
  for (int i = 0; i < NB; i++) { /* the same multiset of samples, reversed */
    for (int f = 0; f < HEAT_NIN; f++) rin[i * HEAT_NIN + f] = in[(NB - 1 - i) * HEAT_NIN + f];
    rtgt[i] = tgt[NB - 1 - i];
  }
  omp_set_num_threads(2);
  PetscCall(train_hash(STEPS, NB, rin, rtgt, &h[3], &loss));
  printf("reversed samples: weights hash %016llx\n", (unsigned long long)h[3]);
  CHECK(h[3] == h[0], "reproducible build: weights depend on the order of the samples");
#elif defined(MINIAPP_SURROGATE_REDUCTION_DETERMINISTIC)
  omp_set_num_threads(2);
  for (int r = 0; r < 3; r++) {
    PetscCall(train_hash(STEPS, NB, in, tgt, &h[r], &loss));
    printf("run %d: weights hash %016llx, loss %.9e\n", r, (unsigned long long)h[r], (double)loss);
  }
  CHECK(h[0] == h[1] && h[1] == h[2], "deterministic build: reruns differ");
#else
  const char *seeds[3] = {"1", "1", "2"};
  for (int r = 0; r < 3; r++) {
    PetscCall(opt("-atomic_order_seed", seeds[r]));
    PetscCall(train_hash(STEPS, NB, in, tgt, &h[r], &loss));
    printf("atomic_order_seed %s: weights hash %016llx, loss %.9e\n", seeds[r], (unsigned long long)h[r], (double)loss);
  }
  CHECK(h[0] == h[1], "atomic build: the same -atomic_order_seed did not replay the same bits");
  CHECK(h[0] != h[2], "atomic build: different -atomic_order_seed values gave identical bits");
#endif
  PetscCall(PetscFree4(in, tgt, rin, rtgt));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
