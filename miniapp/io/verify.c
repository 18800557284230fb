/* miniapp/io/verify.c: the report's checks of a finished run: its golden
 * hashes (reproducible build: any machine must give them) and the HPCG-style
 * repeat of the last step's solve, whose residuals must agree. */
#include "report.h"
#include "vecred.h"
#include "reduce.h"

#include <stdlib.h>
#include <string.h>

/* "match", "MISMATCH", "not set" or "not applicable (...)" for one golden hash. */
static PetscErrorCode GoldenCheck(const char *expected, uint64_t actual, PetscBool applicable, const char *why_na,
                                  char *status, size_t len, PetscBool *ok)
{
  PetscFunctionBegin;
  if (!expected[0]) PetscCall(PetscStrncpy(status, "not set", len));
  else if (!applicable) PetscCall(PetscSNPrintf(status, len, "not applicable (%s)", why_na));
  else {
    unsigned long long e = strtoull(expected + ((expected[1] == 'x' || expected[1] == 'X') ? 2 : 0), NULL, 16);
    PetscCall(PetscStrncpy(status, e == actual ? "match" : "MISMATCH", len));
    if (e != actual) *ok = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportVerify(Coupled c, const ReportOptions *o, ReportVerdict *v)
{
  Solver    s;
  Surrogate net;
  PetscBool repro = (PetscBool)(!strcmp(VecFPNACompiledStrategy(), "reproducible") &&
                                !strcmp(MINIAPP_SURROGATE_REDUCTION_NAME, "reproducible"));
  PetscBool ok    = PETSC_TRUE;
  PetscBool last;
  char      na[64];

  PetscFunctionBegin;
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCall(CoupledGetSurrogate(c, 0, &net));
  PetscCall(SolverStateHash(s, &v->state_hash));
  v->weights_hash = 0;
  if (net) PetscCall(SurrogateGetWeightsHash(net, &v->weights_hash));
  PetscCall(PetscSNPrintf(na, sizeof na, "%s/%s build", VecFPNACompiledStrategy(), MINIAPP_SURROGATE_REDUCTION_NAME));
  {
    PetscBool stock;
    PetscCall(SolverUsesStockVectors(s, &stock));
    if (stock && repro) { /* the hashes are of the switch's arithmetic; stock PETSc reductions are outside it */
      repro = PETSC_FALSE;
      PetscCall(PetscStrncpy(na, "-solver_stock_vec: PETSc's own reductions", sizeof na));
    }
  }
  PetscCall(GoldenCheck(o->golden_state, v->state_hash, repro, na, v->golden_state, sizeof v->golden_state, &ok));
  PetscCall(GoldenCheck(o->golden_weights, v->weights_hash, (PetscBool)(repro && net), net ? na : "no surrogate",
                        v->golden_weights, sizeof v->golden_weights, &ok));
  if (!strncmp(v->golden_state, "not applicable", 14) || !strncmp(v->golden_weights, "not applicable", 14)) {
    /* a hash given and not checked: say it in the verdict's detail too */
    size_t      n  = strlen(v->why);
    const char *na = !strncmp(v->golden_state, "not applicable", 14) ? v->golden_state : v->golden_weights;
    PetscCall(
      PetscSNPrintf(v->why + n, sizeof v->why - n, "; golden hashes %s, verified by the scenario's own checks", na));
  }
  if (!ok) {
    size_t n = strlen(v->why);
    PetscCall(PetscSNPrintf(v->why + n, sizeof v->why - n, "; golden hash MISMATCH (state %s, weights %s)",
                            v->golden_state, v->golden_weights));
    v->ok = PETSC_FALSE;
  }
  /* HPCG-style repeat: the variance of the repeated residuals, relative to the mean squared */
  v->repeat_mean = v->repeat_var = -1;
  PetscCall(SolverHasLastSystem(s, &last)); /* none after a restart at the last step */
  /* in the report */
  v->repeat_skipped = !o->repeat ? NULL
                    : !last      ? "not run: this run solved no step (-ts_max_steps 0, or a restart at the last step)"
                    : !v->ok     ? "not run: the run is INVALID already"
                                 : NULL;
  /* a run already INVALID (a step unsolved, a NaN): its last system tells nothing more, and re-solving it costs up
   * to 5 failed solves */
  if (o->repeat && last && v->ok) {
    PetscInt nfailed;
    PetscCall(SolverRepeatCheck(s, o->repeat, &v->repeat_mean, &v->repeat_var, &v->repeat_its_min, &v->repeat_its_max,
                                &nfailed));
    if (nfailed) {
      size_t n = strlen(v->why);
      PetscCall(PetscSNPrintf(v->why + n, sizeof v->why - n,
                              "; %" PetscInt_FMT " of %" PetscInt_FMT " repeated solves did not converge", nfailed,
                              o->repeat));
      v->ok = PETSC_FALSE;
    } else if (strcmp(VecFPNACompiledStrategy(), "atomic") &&
               !(v->repeat_var <= 1e-6 * v->repeat_mean * v->repeat_mean)) {
      /* NaN fails too. Not in the atomic build: there every repeat reduces in another order, and a method whose
       * path depends on it (BiCGStab: 94 to 99 iterations) ends anywhere below its tolerance; each must converge */
      size_t n = strlen(v->why);
      PetscCall(PetscSNPrintf(v->why + n, sizeof v->why - n,
                              "; repeated solves vary (relative residual variance %.3e >= 1e-6)",
                              (double)(v->repeat_var / (v->repeat_mean * v->repeat_mean))));
      v->ok = PETSC_FALSE;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
