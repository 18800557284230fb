/* miniapp/loop/coupling.h: the coupled loop. Every time step, the solver state
 * feeds the surrogate and the surrogate feeds the solver back:
 *   -coupling none     the solver alone (the surrogate is not built)
 *   -coupling guess    the surrogate learns what the two-line extrapolation
 *                      of the state misses; the Krylov initial guess is the
 *                      energy-norm best combination of the extrapolation,
 *                      Fischer's guess and the network's correction, and
 *                      the other guesses solve the same systems side by side.
 *   -coupling closure  (Gray-Scott) the surrogate learns the reaction term's
 *                      rate factor and replaces the exact one while its
 *                      error is small; checked against an exact-term run.
 * -replicas R runs the whole coupled run R times in lockstep from bit-identical
 * initial states and, after every step and every epoch, compares each replica
 * with replica 0 (metrics.h). In an atomic build each replica r replays its
 * own combination order, seeded -atomic_order_seed + r.
 * -output FILE.nc writes fields and every per-step / per-epoch series (ncout.h).
 * -checkpoint FILE / -restart FILE: bitwise checkpoint/restart (checkpoint.c). */
#ifndef MINIAPP_COUPLING_H
#define MINIAPP_COUPLING_H

#include "solver.h"
#include "surrogate.h"
#include <stdio.h>

typedef struct _p_Coupled *Coupled;

/* Wall-clock seconds (max over ranks) of each phase and the work done. */
typedef struct {
  double solve, features, predict, train, metrics, output, baselines, total;
  double train_samples, predict_points; /* global, all replicas */
  /* this process's work: not a restart's checkpointed steps; steps re-done after a rollback twice */
  PetscInt epochs, steps;
  PetscInt its;           /* Krylov iterations of all replicas in those steps */
} CoupledTimes;

PetscErrorCode CoupledCreate(MPI_Comm comm, Coupled *c);
PetscErrorCode CoupledSetFromOptions(Coupled c);
PetscErrorCode CoupledSetUp(Coupled c);
PetscErrorCode CoupledRun(Coupled c);
PetscErrorCode CoupledGetSolver(Coupled c, PetscInt replica, Solver *s);
PetscErrorCode CoupledGetSurrogate(Coupled c, PetscInt replica, Surrogate *net); /* NULL with -coupling none */
PetscErrorCode CoupledGetTimes(Coupled c, CoupledTimes *t);
/* Full-vector host<->device copies of the time loop other than its outputs' and checkpoints' (collective: the
 * most of any rank; 0 with the solver on the host). */
PetscErrorCode CoupledGetLoopCopies(Coupled c, PetscInt64 *n);
/* The bytes a rank needs at least, on the host and the device, as counted before the set-up allocated (collective:
 * the most of any rank). */
PetscErrorCode CoupledGetMemoryBound(Coupled c, double *host, double *device);
/* Krylov iterations of all replicas, and of the -coupling none baseline (-1: not run). */
PetscErrorCode CoupledGetIterations(Coupled c, PetscInt *replicas_total, PetscInt *none_total, PetscInt *fischer_total);
PetscErrorCode CoupledGetInfo(Coupled c, const char **coupling, PetscInt *replicas, PetscInt *points_global);
/* Replica and baseline verdict: in a build where both halves are
 * deterministic or reproducible, every replica must equal replica 0 bitwise. */
PetscErrorCode CoupledVerify(Coupled c, PetscBool *ok, char *why, size_t len);
PetscErrorCode CoupledWriteSummary(Coupled c, FILE *f); /* YAML lines, rank 0 */
/* the report's coupling section: guesses side by side, net time, closure */
PetscErrorCode CoupledWriteReportCoupling(Coupled c, FILE *f);
/* The run stopped early: a signal (SIGTERM, SIGUSR1, SIGXCPU) asked for a
 * checkpoint, which was written; sig = 0 when the run went to its end. */
PetscErrorCode CoupledGetStop(Coupled c, int *sig, PetscInt *step, const char **checkpoint);
/* "SIGTERM", "SIGUSR1" or "SIGXCPU". */
const char *CheckpointSignalName(int sig);
/* From the stop decision (or the end of the run) on, SIGTERM, SIGUSR1 and
 * SIGXCPU are ignored, so that the exit code stays the decided one (with -checkpoint). */
void CheckpointIgnoreSignals(void);
/* From the start of main until -checkpoint is read (CheckpointSetFromOptions),
 * SIGTERM, SIGUSR1 and SIGXCPU wait (blocked): one that arrives during start-up
 * becomes a checkpoint after the first step, not a death with none. It also
 * notes the signals the process was started with ignored, before PETSc takes them. */
void CheckpointBlockSignals(void);
/* After PetscInitialize: each signal PETSc's handler takes that is no fault
 * of the program, and each that stops the run, handled as checkpoint.c says. */
void CheckpointDefaultSignals(void);
PetscErrorCode CoupledDestroy(Coupled *c);

#endif
