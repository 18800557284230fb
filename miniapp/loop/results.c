/* miniapp/loop/results.c: what a coupled run gives back after its loop: the
 * solvers and networks, the times and counts (the most of any rank), the
 * verdict of the replicas and baselines, the summary's and the report's
 * coupling lines, how it stopped. */
#include "coupling_impl.h"
#include "vecred.h"
#include "yamlfmt.h"

#include <math.h>
#include <string.h>

PetscErrorCode CoupledGetSolver(Coupled c, PetscInt r, Solver *s)
{
  *s = c->rep[r].solver;
  return PETSC_SUCCESS;
}

PetscErrorCode CoupledGetSurrogate(Coupled c, PetscInt r, Surrogate *net)
{
  *net = c->rep[r].net;
  return PETSC_SUCCESS;
}

PetscErrorCode CoupledGetTimes(Coupled c, CoupledTimes *t)
{
  double v[8] = {c->times.solve,   c->times.features, c->times.predict,   c->times.train,
                 c->times.metrics, c->times.output,   c->times.baselines, c->times.total};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 8, MPI_DOUBLE, MPI_MAX, c->comm));
  *t       = c->times;
  t->solve = v[0], t->features = v[1], t->predict = v[2], t->train = v[3], t->metrics = v[4], t->output = v[5],
  t->baselines = v[6], t->total = v[7];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetMemoryBound(Coupled c, double *host, double *device)
{
  PetscFunctionBegin;
  *host = c->mem_host, *device = c->mem_device;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, host, 1, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, device, 1, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetLoopCopies(Coupled c, PetscInt64 *n)
{
  PetscFunctionBegin;
  *n = c->loop_copies; /* the most any rank made: the slowest bounds the step */
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, n, 1, MPIU_INT64, MPI_MAX, c->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetIterations(Coupled c, PetscInt *total, PetscInt *none, PetscInt *fischer)
{
  PetscFunctionBegin;
  *total = 0, *none = *fischer = -1;
  for (PetscInt r = 0; r < c->nrep; r++) {
    PetscInt n;
    PetscCall(SolverGetIterations(c->rep[r].solver, &n, NULL));
    *total += n;
  }
  if (c->baselines) *none = c->tally[GUESS_NONE].its, *fischer = c->tally[GUESS_FISCHER].its;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetInfo(Coupled c, const char **coupling, PetscInt *replicas, PetscInt *points)
{
  *coupling = CouplingModeNames[c->mode], *replicas = c->nrep, *points = c->M * c->N;
  return PETSC_SUCCESS;
}

PetscErrorCode CoupledVerify(Coupled c, PetscBool *ok, char *why, size_t len)
{
  PetscBool ordered = RunOrdered(c);
  PetscInt  bad     = -1;
  size_t    n;

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  why[0] = 0;
  if (c->mode == COUPLING_CLOSURE) PetscCall(ClosureVerify(c, ok, why, len));
  {
    char nwhy[512];
    PetscCall(NetFailure(c, nwhy, sizeof nwhy));
    if (nwhy[0]) {
      n = strlen(why);
      PetscCall(PetscSNPrintf(why + n, len - n, "%s%s", n ? "; " : "", nwhy));
      *ok = PETSC_FALSE;
    }
  }
  /* the solves of the other replicas and of the exact-term run (replica 0's: SolverVerify's count) */
  PetscInt64 nother = 0;
  PetscBool  allok  = PETSC_TRUE;
  for (PetscInt r = 1; r <= c->nrep; r++) { /* replica 0's solves: SolverVerify */
    Solver     s = r < c->nrep ? c->rep[r].solver : c->exact;
    PetscBool  finite;
    char       swhy[512];
    PetscInt64 ns;
    if (!s) continue;
    PetscCall(SolverCheckStateFinite(s, &finite));
    PetscCall(SolverSolveFailure(s, swhy, sizeof swhy));
    PetscCall(SolverGetSolveCount(s, &ns));
    nother += ns;
    if (!swhy[0]) continue;
    allok = PETSC_FALSE;
    n = strlen(why);
    if (r < c->nrep)
      PetscCall(PetscSNPrintf(why + n, len - n, "%sreplica %" PetscInt_FMT ", %s", n ? "; " : "", r, swhy));
    else PetscCall(PetscSNPrintf(why + n, len - n, "%sthe exact-term run, %s", n ? "; " : "", swhy));
    *ok = PETSC_FALSE;
  }
  if (allok && nother > 0) { /* "all N solves verified" counts replica 0's: say the others were checked too */
    n = strlen(why);
    PetscCall(PetscSNPrintf(why + n, len - n, "%s%lld solves of %s verified too", n ? "; " : "", (long long)nother,
                            c->exact && c->nrep > 1 ? "the other replicas and the exact-term run"
                            : c->exact              ? "the exact-term run"
                                                    : "the other replicas"));
  }
  {
    PetscBool fok;
    char      fwhy[512];
    PetscCall(FaultsVerify(c, &fok, fwhy, sizeof fwhy));
    n = strlen(why);
    /* also a fault no detector saw */
    if (fwhy[0]) PetscCall(PetscSNPrintf(why + n, len - n, "%s%s", n ? "; " : "", fwhy));
    *ok = (PetscBool)(*ok && fok);
  }
  if (c->nrep < 2) PetscFunctionReturn(PETSC_SUCCESS);
  n = strlen(why);
  if (n) {
    PetscCall(PetscSNPrintf(why + n, len - n, "; "));
    n += 2;
  }
  for (PetscInt r = 1; r < c->nrep && bad < 0; r++)
    if (c->first_div_step[r] >= 0 || c->first_div_epoch[r] >= 0) bad = r;
  if (ordered && bad > 0) {
    *ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(why + n, len - n,
                            "replica %" PetscInt_FMT " left replica 0's bits (step %" PetscInt_FMT
                            ", epoch %" PetscInt_FMT ") in a build without atomics",
                            bad, c->first_div_step[bad], c->first_div_epoch[bad]));
  } else if (ordered)
    PetscCall(
      PetscSNPrintf(why + n, len - n, "all %" PetscInt_FMT " replicas bitwise equal at every step and epoch", c->nrep));
  else
    PetscCall(PetscSNPrintf(why + n, len - n, "atomic build: %s",
                            bad > 0 ? "replicas diverged (expected)" : "replicas stayed equal"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledWriteSummary(Coupled c, FILE *f)
{
  PetscFunctionBegin;
  PetscInt64 copies;

  PetscCall(
    PetscFPrintf(c->comm, f, "coupling: %s\nreplicas: %" PetscInt_FMT "\n", CouplingModeNames[c->mode], c->nrep));
  PetscCall(CoupledGetLoopCopies(c, &copies));
  /* the loop's own: not its outputs' and checkpoints' (the whole run's: device_vector_copies) */
  PetscCall(PetscFPrintf(c->comm, f, "device_loop_vector_copies: %lld\n", (long long)copies));
  if (c->restart_step >= 0)
    PetscCall(PetscFPrintf(c->comm, f, "restarted_from_step: %" PetscInt_FMT "\n", c->restart_step));
  if (c->rep[0].net) {
    uint64_t        h;
    SurrogateDevice d;
    PetscCall(SurrogateGetWeightsHash(c->rep[0].net, &h));
    PetscCall(SurrogateGetDevice(c->rep[0].net, &d));
    /* no epoch trained: no loss, not 0 */
    PetscCall(PetscFPrintf(c->comm, f,
                           "surrogate_device: %s\nsurrogate_weights: %" PetscInt_FMT
                           "\ntrain_epochs_total: %" PetscInt_FMT "\nfinal_loss: %s\nweights_hash: \"0x%016llx\"\n",
                           d == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", c->nweights, c->epoch,
                           yaml_num("%.9e", c->epoch ? (double)c->last_loss[0] : NAN), (unsigned long long)h));
  }
  if (c->mode == COUPLING_GUESS) PetscCall(GuessesSummary(c, f));
  if (c->mode == COUPLING_CLOSURE) PetscCall(ClosureSummary(c, f));
  PetscCall(ObserveSummary(c, f));
  PetscCall(FaultsSummary(c, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledWriteReportCoupling(Coupled c, FILE *f)
{
  PetscFunctionBegin;
  if (c->mode == COUPLING_GUESS) PetscCall(GuessesReport(c, f));
  if (c->mode == COUPLING_CLOSURE)
    PetscCall(PetscFPrintf(c->comm, f,
                           "  closure: {active_steps: %" PetscInt_FMT ", switches: %" PetscInt_FMT
                           ", drift: %.4e, drift_tol: %.3e}\n",
                           c->active_steps, c->switches, (double)c->rep[0].drift, (double)c->drift_tol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetStop(Coupled c, int *sig, PetscInt *step, const char **checkpoint)
{
  PetscFunctionBegin;
  *sig = c->stop_signal, *checkpoint = c->checkpoint;
  PetscCall(SolverGetStep(c->rep[0].solver, step, NULL, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

