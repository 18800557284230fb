/* solver/describe.c: what the solver says of itself: its parameters as
 * options (the restart keys), the summary's lines, the settings in effect,
 * and its part of a checkpoint, written or read (ckpt.h). */
#include "solver_impl.h"
#include "solver_reduction.h"
#include "vecred.h"

#include <stdlib.h>
#include <string.h>

/* v in the fewest digits that read back as v (0.08, not 0.080000000000000002) */
static const char *Shortest(double v, char b[32])
{
  for (int p = 1; p <= 17; p++) {
    snprintf(b, 32, "%.*g", p, v);
    if (strtod(b, NULL) == v) break;
  }
  return b;
}

PetscErrorCode SolverGetParameters(Solver s, char *buf, size_t len)
{
  char a[32], b[32], c[32], d[32], e[32];

  PetscFunctionBegin;
  if (!strcmp(s->scenario, "grayscott"))
    PetscCall(PetscSNPrintf(buf, len, "-gs_Du %s -gs_Dv %s -gs_F %s -gs_k %s -gs_h %s -gs_seed %" PetscInt_FMT,
                            Shortest((double)s->Du, a), Shortest((double)s->Dv, b), Shortest((double)s->F, c),
                            Shortest((double)s->k, d), Shortest((double)s->hx, e), s->gs_seed));
  else
    PetscCall(
      PetscSNPrintf(buf, len, "-heat_D %s -heat_theta %s", Shortest((double)s->D, a), Shortest((double)s->theta, b)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's part of the run summary, as YAML "key: value" lines (rank 0). */
PetscErrorCode SolverWriteSummary(Solver s, FILE *f)
{
  KSPType ksp;
  PCType  pc;
  PC      p;

  PetscFunctionBegin;
  PetscCall(KSPGetType(s->ksp, &ksp));
  PetscCall(KSPGetPC(s->ksp, &p));
  PetscCall(PCGetType(p, &pc));
  PetscCall(PetscFPrintf(s->comm, f,
                         "scenario: %s\ngrid: [%" PetscInt_FMT ", %" PetscInt_FMT "]\ncomponents: %" PetscInt_FMT "\n",
                         s->scenario, s->M, s->N, s->dof));
  PetscCall(PetscFPrintf(s->comm, f, "steps: %" PetscInt_FMT "\ndt: %.17g\nfinal_time: %.17g\n", s->step, (double)s->dt,
                         (double)s->t));
  PetscCall(PetscFPrintf(s->comm, f, "ksp_type: %s\npc_type: %s\nvec_type: %s\noperator_summation: %s\n", ksp, pc,
                         s->vectype, s->scatter ? "scatter" : "gather"));
  {
    PetscInt64 n = VecFPNADeviceCopies(); /* the most any rank made: a rank that copies more bounds the step */
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &n, 1, MPIU_INT64, MPI_MAX, s->comm));
    /* full-vector copies between host and device over the whole run (set-up, outputs and checks included) */
    PetscCall(PetscFPrintf(s->comm, f, "solver_device: %s\ndevice_vector_copies: %lld\n", s->device ? "cuda" : "cpu",
                           (long long)n));
  }
  PetscCall(PetscFPrintf(s->comm, f, "ksp_iterations_total: %" PetscInt_FMT "\nksp_iterations: [", s->its_total));
  for (PetscInt i = 0; i < s->step; i++)
    PetscCall(PetscFPrintf(s->comm, f, "%s%" PetscInt_FMT, i ? ", " : "", s->its[i]));
  PetscCall(PetscFPrintf(s->comm, f, "]\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDescribe(Solver s, char buf[], size_t len)
{
  size_t n = strlen(buf);

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf + n, len - n,
                          "scenario: %s\ngrid: %" PetscInt_FMT " x %" PetscInt_FMT "\ncomponents: %" PetscInt_FMT
                          "\nsolver_reduction: %s\ndt: %.17g\n",
                          s->scenario, s->M, s->N, s->dof, s->stock ? "stock" : red_strategy_name(SOLVER_STRATEGY),
                          (double)s->dt));
  n = strlen(buf);
  if (s->ops == &HeatScenario)
    PetscCall(PetscSNPrintf(buf + n, len - n, "heat_D: %.17g\nheat_theta: %.17g\n", (double)s->D, (double)s->theta));
  else
    PetscCall(PetscSNPrintf(buf + n, len - n, "gs_Du: %.17g\ngs_Dv: %.17g\ngs_F: %.17g\ngs_k: %.17g\n", (double)s->Du,
                            (double)s->Dv, (double)s->F, (double)s->k));
  n = strlen(buf);
  PetscCall(PetscSNPrintf(buf + n, len - n, "grid_spacing: %.17g %.17g\noperator_summation: %s\n", (double)s->hx,
                          (double)s->hy, s->scatter ? "scatter" : "gather"));
  if (s->ksp) { /* the Krylov method as configured: type, preconditioner, stopping rule */
    KSPType     kt;
    PCType      pt;
    PC          pc;
    KSPNormType nt;
    PetscReal   rtol, atol, dtol;
    PetscInt    maxit;
    PetscCall(KSPGetType(s->ksp, &kt));
    PetscCall(KSPGetPC(s->ksp, &pc));
    PetscCall(PCGetType(pc, &pt));
    PetscCall(KSPGetNormType(s->ksp, &nt));
    PetscCall(KSPGetTolerances(s->ksp, &rtol, &atol, &dtol, &maxit));
    n = strlen(buf);
    PetscCall(PetscSNPrintf(buf + n, len - n, "ksp: %s %s %s\nksp_tolerances: %.17g %.17g %.17g %" PetscInt_FMT "\n",
                            kt, pt, KSPNormTypes[nt], (double)rtol, (double)atol, (double)dtol, maxit));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  int64_t step, its_total;
  double  t, rnorm, last_r0;
} SolverClock;

/* Either direction (ckpt.h); reading checks that the step is within
 * -ts_max_steps before the iteration history it sizes is read. */
PetscErrorCode SolverCheckpoint(Solver s, Ckpt ck, const char prefix[])
{
  char        name[64];
  SolverClock k = {s->step, s->its_total, s->t, s->rnorm, s->last_r0};
  int64_t    *its;

  PetscFunctionBegin;
  PetscCall(SolverCheckSetUp(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/clock", prefix));
  PetscCall(CkptData(ck, name, &k, sizeof k));
  PetscCheck(k.step >= 0 && k.step <= s->max_steps, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "%s %s: the checkpoint is at step %lld, beyond -ts_max_steps %" PetscInt_FMT
             " (the total number of steps, counted from the start)",
             CkptOption(ck), CkptPath(ck), (long long)k.step, s->max_steps);
  PetscCall(PetscMalloc1(k.step + 1, &its));
  for (PetscInt i = 0; i < k.step && CkptIsWriting(ck); i++) its[i] = s->its[i];
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/its", prefix));
  {
    PetscErrorCode ierr = CkptData(ck, name, its, (size_t)k.step * sizeof *its);
    for (PetscInt i = 0; i < k.step && !ierr && !CkptIsWriting(ck); i++) s->its[i] = (PetscInt)its[i];
    PetscCall(PetscFree(its));
    PetscCall(ierr);
  }
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/u", prefix));
  PetscCall(CkptVec(ck, name, s->da, s->u));
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/solves", prefix)); /* a failure stays a failure after a restart */
  PetscCall(CkptData(ck, name, &s->solves, sizeof s->solves));
  {
    char rname[64];
    /* so does a state that left the scenario's bounds */
    PetscCall(PetscSNPrintf(rname, sizeof rname, "%s/range", prefix));
    PetscCall(CkptData(ck, rname, s->range, sizeof s->range));
  }
  if (!CkptIsWriting(ck)) {
    PetscCheck(SolverSolveRecordValid(&s->solves, k.step), s->comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s %s: the record %s holds counts or a failure that no run writes (a damaged or forged file)",
               CkptOption(ck), CkptPath(ck), name);
    s->step = (PetscInt)k.step, s->its_total = (PetscInt)k.its_total, s->t = k.t, s->rnorm = k.rnorm,
    s->last_r0 = k.last_r0;
    s->b_step = s->bnorm_step = -1;
    PetscCall(PetscFree(s->closure));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverGetMemoryBound(Solver s, PetscInt64 *points, PetscInt *dof, PetscInt *host_vectors,
                                    PetscInt *device_vectors)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  *points = ((PetscInt64)s->M * s->N + size - 1) / size, *dof = s->ops->dof;
  /* u, b, the monitor's two work vectors, the operator's ghosted copy, a Krylov method's three work vectors at
   * least (the fused CG's: four), the preconditioner's diagonal; the ghosted copy is the host's alone */
  *host_vectors   = 9;
  *device_vectors = s->device ? 8 : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
