/* tests/surrogate/test_faults.c: the surrogate's fault sites (kernels/fault.h)
 * and its ABFT checks (SurrogateSetChecks), CPU backend, in every build:
 *   - no false alarm: 200 fault-free train steps with checks on fail no check,
 *     and give bitwise the weights and losses of the same run with checks off;
 *   - each site (gradient, weight, activation) flips exactly the bit asked
 *     for, and a flip of float bit 30 (top exponent bit) is flagged by the
 *     checks in that very step; the gradient site is also seen directly in
 *     SurrogateComputeGradient (one entry, one bit);
 *   - a flip of bit 0 of a weight changes the weights' bits against a
 *     fault-free twin trained identically (what replica comparison sees);
 *   - printed, not asserted: detection rates per site and bit (0..31) by the
 *     checks and by replica comparison after the step, and the train step's
 *     time with checks on vs off (-faults_trials T, -faults_bench_n N).
 * The atomic build runs with -atomic_order_seed 1 so that twins are exact. */
#include "surr_test.h"
#include "fault.h"

#include <math.h>

#define NB     4096
#define NSTEPS 200

static float *in, *tgt;

static PetscErrorCode make(PetscBool checks, Surrogate *s)
{
  PetscFunctionBeginUser;
  PetscCall(heat_surrogate(PETSC_COMM_WORLD, s)); /* SetFromOptions restarts the seeded atomic order */
  PetscCall(SurrogateSetChecks(*s, checks));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static uint32_t fbits(double v)
{
  float    f = (float)v;
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

typedef struct {
  fault_record rec;
  int          fired;  /* on some rank (the activation site flips on the rank that holds the entry) */
  PetscInt     nfail;
  PetscReal    worst;
  char         what[128];
  size_t       ndiff; /* weights differing from the fault-free twin after the step */
  int          sdiff; /* the whole state (weights, Adam moments) differs from the twin's */
} Trial;

/* Restore the base state, arm `spec` around one train step, and compare. */
static PetscErrorCode trial(const unsigned char *base, size_t len, const float *twin, const unsigned char *twin_state, size_t twin_len, PetscInt np, const char *spec_text, Trial *t)
{
  unsigned char *st;
  size_t         stlen;
  Surrogate  s;
  fault_spec spec;
  fault_ctx  hook;
  char       err[256];
  float     *w;

  PetscFunctionBeginUser;
  PetscCheck(!fault_parse(spec_text, &spec, err, sizeof err), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s", err);
  PetscCall(make(PETSC_TRUE, &s));
  PetscCall(SurrogateDeserialize(s, base, len, "base state"));
  PetscCall(SurrogateGetCheckResult(s, NULL, NULL, NULL, 0));
  fault_init(&hook);
  PetscCall(SurrogateSetFaults(s, &hook));
  fault_arm(&hook, &spec);
  PetscCall(SurrogateTrain(s, NB, in, tgt, NULL));
  fault_disarm(&hook);
  t->rec = *fault_get_record(&hook);
  PetscCallMPI(MPI_Allreduce(&t->rec.fired, &t->fired, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(SurrogateGetCheckResult(s, &t->nfail, &t->worst, t->what, sizeof t->what));
  PetscCall(PetscMalloc1(np, &w));
  PetscCall(SurrogateGetWeights(s, w, np));
  t->ndiff = count_diff_bits((size_t)np, w, twin);
  PetscCall(PetscFree(w));
  PetscCall(SurrogateSerialize(s, &st, &stlen)); /* rank 0 holds the bytes */
  t->sdiff = st ? (stlen != twin_len || memcmp(st, twin_state, stlen)) : 0;
  PetscCallMPI(MPI_Bcast(&t->sdiff, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  PetscCall(PetscFree(st));
  PetscCall(SurrogateDestroy(&s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Surrogate      a, b;
  PetscInt       np, nfail, trials = 4, bench_n = 32768, total_fail = 0;
  PetscReal      worst, worst_max = 0;
  float          la = 0, lb = 0, *wa, *wb, *twin, *g0, *g1;
  unsigned char *base = NULL, *tstate = NULL;
  size_t         len = 0, tlen = 0;
  int            failures = 0, same_loss = 1;
  char           what[128];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-faults_trials", &trials, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-faults_bench_n", &bench_n, NULL));
  PetscCall(opt("-atomic_order_seed", "1"));
  PetscCall(opt("-surrogate_lr", "1e-2"));
  PetscCall(PetscMalloc2(NB * HEAT_NIN, &in, NB, &tgt));
  heat_samples(7, 0, NB, 0.2f, in, tgt);
  printf("surrogate reduction: %s\n", SurrogateGetStrategyName());

  /* 1. No false alarm, and the checks change no bit. */
  PetscCall(make(PETSC_TRUE, &a));
  PetscCall(make(PETSC_FALSE, &b));
  for (int i = 0; i < NSTEPS; i++) {
    PetscCall(SurrogateTrain(a, NB, in, tgt, &la));
    PetscCall(SurrogateTrain(b, NB, in, tgt, &lb));
    same_loss &= !memcmp(&la, &lb, sizeof la);
    PetscCall(SurrogateGetCheckResult(a, &nfail, &worst, what, sizeof what));
    if (nfail && !total_fail) printf("false alarm at step %d: %s (worst %.3g)\n", i + 1, what, (double)worst);
    total_fail += nfail, worst_max = PetscMax(worst_max, worst);
  }
  PetscCall(SurrogateGetNumWeights(a, &np));
  PetscCall(PetscMalloc5(np, &wa, np, &wb, np, &twin, np, &g0, np, &g1));
  PetscCall(SurrogateGetWeights(a, wa, np));
  PetscCall(SurrogateGetWeights(b, wb, np));
  printf("fault-free: %d steps, %d checks failed, largest discrepancy/threshold %.3e, loss %.4e\n", NSTEPS, (int)total_fail, (double)worst_max, (double)la);
  CHECK(total_fail == 0, "%d false alarms in %d fault-free steps", (int)total_fail, NSTEPS);
  CHECK(worst_max > 0 && worst_max < 1, "largest discrepancy/threshold %g: expected in (0, 1)", (double)worst_max);
  CHECK(count_diff_bits((size_t)np, wa, wb) == 0 && same_loss, "checks on changed %zu weights (losses %s)", count_diff_bits((size_t)np, wa, wb), same_loss ? "equal" : "differ");
  {
    PetscBool ok_act, ok_state;
    PetscCall(SurrogateFaultSiteSupported(a, FAULT_ACTIVATION, &ok_act));
    PetscCall(SurrogateFaultSiteSupported(a, FAULT_STATE, &ok_state));
    CHECK(ok_act && !ok_state, "CPU surrogate: activation site supported %d (expected 1), state %d (expected 0)", (int)ok_act, (int)ok_state);
  }

  /* 2. The base state (20 steps in) and its fault-free next step. */
  PetscCall(SurrogateDestroy(&b));
  PetscCall(make(PETSC_TRUE, &b));
  PetscCall(train_steps(b, 20, NB, in, tgt, NULL));
  PetscCall(SurrogateSerialize(b, &base, &len));
  PetscCallMPI(MPI_Bcast(&len, sizeof len, MPI_BYTE, 0, PETSC_COMM_WORLD));
  if (!base) PetscCall(PetscMalloc1(len, &base));
  PetscCallMPI(MPI_Bcast(base, (int)len, MPI_BYTE, 0, PETSC_COMM_WORLD));
  PetscCall(SurrogateComputeGradient(b, NB, in, tgt, g0, NULL));
  PetscCall(SurrogateTrain(b, NB, in, tgt, NULL));
  PetscCall(SurrogateGetWeights(b, twin, np));
  PetscCall(SurrogateSerialize(b, &tstate, &tlen));
  PetscCall(SurrogateGetCheckResult(b, &nfail, NULL, NULL, 0));
  CHECK(nfail == 0, "%d false alarms on the base run", (int)nfail);

  { /* the gradient site seen directly: one entry, one bit */
    fault_spec spec;
    fault_ctx  hook;
    char       err[256];
    PetscCall(SurrogateDestroy(&b));
    PetscCall(make(PETSC_FALSE, &b));
    PetscCall(SurrogateDeserialize(b, base, len, "base state"));
    CHECK(!fault_parse("site=gradient,epoch=0,entry=700,bit=17", &spec, err, sizeof err), "%s", err);
    fault_init(&hook);
    PetscCall(SurrogateSetFaults(b, &hook));
    fault_arm(&hook, &spec);
    PetscCall(SurrogateComputeGradient(b, NB, in, tgt, g1, NULL));
    fault_disarm(&hook);
    PetscCall(SurrogateSetFaults(b, NULL)); /* the hook ends with this block */
    size_t   nd = count_diff_bits((size_t)np, g0, g1);
    uint32_t x0, x1;
    memcpy(&x0, &g0[700], 4), memcpy(&x1, &g1[700], 4);
    CHECK(nd == 1 && (x0 ^ x1) == 1u << 17, "gradient site: %zu entries differ, entry 700 bits %08x -> %08x (expected bit 17 only)", nd, x0, x1);
  }

  /* 3. Bit 30 (top exponent bit) at each site: fires, one bit, flagged. */
  const char *sites[3] = {"gradient", "weight", "activation"};
  const char *hi[3]    = {"site=gradient,epoch=0,entry=100,bit=30", "site=weight,epoch=0,entry=200,bit=30", "site=activation,epoch=0,entry=3000,call=2,bit=30"};
  const char *lo[3]    = {"site=gradient,epoch=0,entry=100,bit=0", "site=weight,epoch=0,entry=200,bit=0", "site=activation,epoch=0,entry=3000,call=2,bit=0"};
  for (int k = 0; k < 3; k++) {
    Trial t;
    PetscCall(trial(base, len, twin, tstate, tlen, np, hi[k], &t));
    printf("%-10s bit 30: fired %d, %.6g -> %.6g, %d checks failed (%s), worst %.3g, %zu weights differ from the twin\n", sites[k], t.rec.fired, t.rec.old_value, t.rec.new_value, (int)t.nfail, t.what,
           (double)t.worst, t.ndiff);
    CHECK(t.fired && (!t.rec.fired || (fbits(t.rec.old_value) ^ fbits(t.rec.new_value)) == 1u << 30), "%s: the record did not fire or flipped other bits", sites[k]);
    CHECK(t.nfail > 0, "%s bit 30: not flagged by the checks", sites[k]);
    CHECK(t.ndiff > 0, "%s bit 30: weights equal to the twin's", sites[k]);
    PetscCall(trial(base, len, twin, tstate, tlen, np, lo[k], &t));
    printf("%-10s bit  0: fired %d, %d checks failed, %zu weights differ from the twin, Adam state %s\n", sites[k], t.rec.fired, (int)t.nfail, t.ndiff, t.sdiff ? "differs" : "equal");
    CHECK(t.fired && (!t.rec.fired || (fbits(t.rec.old_value) ^ fbits(t.rec.new_value)) == 1u), "%s bit 0: the record did not fire or flipped other bits", sites[k]);
    if (k == 1) CHECK(t.ndiff > 0, "weight bit 0: weights equal to the fault-free twin's (replica comparison would miss it)");
  }

  /* 4. Detection rates per bit (printed): random entries, activation layers 1..L in turn. */
  printf("\ndetection rate over %d random entries per cell, after the faulty step:\n"
         "  checks (ABFT flagged it) / weights (bits differ from the fault-free twin) / state (weights or Adam moments differ)\n",
         (int)trials);
  printf("%4s %22s %22s %22s\n", "bit", sites[0], sites[1], sites[2]);
  for (int bit = 0; bit < 32; bit++) {
    int det[3] = {0, 0, 0}, rep[3] = {0, 0, 0}, sta[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
      for (int t = 0; t < trials; t++) {
        Trial tr;
        char  spec[160];
        PetscCall(PetscSNPrintf(spec, sizeof spec, "site=%s,epoch=0,entry=random,bit=%d,seed=%d%s", sites[k], bit, 1000 * t + bit + 1, k == 2 ? (t % 3 == 0 ? ",call=1" : t % 3 == 1 ? ",call=2" : ",call=3") : ""));
        PetscCall(trial(base, len, twin, tstate, tlen, np, spec, &tr));
        CHECK(tr.fired, "%s: did not fire", spec);
        det[k] += tr.nfail > 0, rep[k] += tr.ndiff > 0, sta[k] += tr.sdiff;
      }
    printf("%4d", bit);
    for (int k = 0; k < 3; k++) printf("     %4.2f / %4.2f / %4.2f", det[k] / (double)trials, rep[k] / (double)trials, sta[k] / (double)trials);
    printf("\n");
  }

  /* 5. Cost: train steps with checks on vs off, interleaved, best of 3. */
  if (bench_n > 0) {
    float    *bin, *btgt;
    double    best[2] = {1e30, 1e30};
    Surrogate c[2];
    PetscCall(PetscMalloc2((size_t)bench_n * HEAT_NIN, &bin, (size_t)bench_n, &btgt));
    heat_samples(9, 0, (size_t)bench_n, 0.2f, bin, btgt);
    for (int k = 0; k < 2; k++) {
      PetscCall(make(k ? PETSC_TRUE : PETSC_FALSE, &c[k]));
      PetscCall(SurrogateTrain(c[k], bench_n, bin, btgt, NULL)); /* warm-up: buffers, statistics */
    }
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 2; k++) {
        double t0 = MPI_Wtime();
        PetscCall(train_steps(c[k], 3, bench_n, bin, btgt, NULL));
        best[k] = PetscMin(best[k], (MPI_Wtime() - t0) / 3);
      }
    printf("\ntrain step, batch %d: checks off %.2f ms, on %.2f ms, ratio %.3f\n", (int)bench_n, 1e3 * best[0], 1e3 * best[1], best[1] / best[0]);
    for (int k = 0; k < 2; k++) PetscCall(SurrogateDestroy(&c[k]));
    PetscCall(PetscFree2(bin, btgt));
  }

  PetscCall(SurrogateDestroy(&a));
  PetscCall(SurrogateDestroy(&b));
  PetscCall(PetscFree(base));
  PetscCall(PetscFree(tstate));
  PetscCall(PetscFree5(wa, wb, twin, g0, g1));
  PetscCall(PetscFree2(in, tgt));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
