/* miniapp/loop/coupling_impl.h: the coupled loop's private state, shared by the
 * files that each do one of its jobs:
 *   coupling.c          options, set-up, the step's phases, results
 *   features.c          what the surrogate sees and learns (features, targets)
 *   batch.c             where the surrogate's batch lives: on the host or on the device
 *   guesses.c           the initial guesses and the side-by-side comparison
 *   closure.c           the learned closure: gate, fallback, drift, pattern
 *   observe.c           per-step / per-epoch replica metrics and records
 *   coupling_output.c   the NetCDF file of the run
 *   checkpoint.c        checkpoint/restart
 *   restart_keys.c      what a restart must agree on; the settings in effect
 *   faults.c            fault injection, detection and response */
#ifndef MINIAPP_COUPLING_IMPL_H
#define MINIAPP_COUPLING_IMPL_H

#include "coupling.h"
#include "metrics.h"
#include "ncout.h"
#include "reduce.h"
#include "fault.h"
#include "vecred.h"

typedef enum { COUPLING_NONE, COUPLING_GUESS, COUPLING_CLOSURE } CouplingMode;
extern const char *const CouplingModeNames[];

/* The initial guesses (ncout_guess_names gives their names, same order). */
typedef enum {
  GUESS_NONE,
  GUESS_EXTRAPOLATION,
  GUESS_FISCHER,
  GUESS_LEARNED,
  GUESS_COMBINED,
  GUESS_PROJECTION,
  GUESS_NKINDS
} GuessKind;

#define MAX_REPLICAS 64

typedef struct {
  Solver           solver;
  Surrogate        net;
  red_atomic_state order;
  GuessSpace       space;             /* guess: past increments of this replica */
  Vec              prev, d, z, x0, w; /* u^{n-1}; d^n = u^n - u^{n-1}; learned correction; guess; work */
  Vec              xp, rp;            /* -guess_learn residual: the projection's guess and its residual b - A xp */
  PetscBool        have_d, have_z;    /* d^n exists (step >= 1); z predicted this step */
  PetscReal        su, sd, se, sz;    /* RMS of u^n, d^n, the last correction; the output scale */
  PetscScalar     *q, *qexact;        /* closure: learned and exact factor per point */
  float           *feat, *out, *target, *w32;
  /* the batch on the device (batch.c; NULL: on the host, in feat, out, target) */
  float           *dfeat, *dout, *dtarget;
  int             *dflag;             /* the finite test's device flag */
  PetscBool        batch_placed;      /* BatchSetUp has chosen */
  PetscBool        trained, closure_on;
  PetscInt         its;
  PetscReal        rnorm, r0, inc_err, extrap_err, closure_err, drift;
} Replica;

typedef enum { FAULT_ACTION_REPORT, FAULT_ACTION_ABORT, FAULT_ACTION_ROLLBACK } FaultAction;
extern const char *const FaultActionNames[];

/* The fault experiment (faults.c): what was injected, what saw it. Steps
 * and epochs are -1 until something happens. */
typedef struct {
  PetscBool    on, checks, done, fired, detected;
  PetscInt     detected_step;                    /* the step after which it was first detected */
  PetscInt     solvecheck_step;                  /* an unsolved step or a non-finite value (FaultsFailedStep) */
  fault_spec   spec;
  fault_ctx    hook;                             /* what the sites see: armed only around the targeted step or epoch */
  fault_record rec;
  FaultAction  action;
  PetscReal    noise_factor;
  PetscInt64   nchecks;
  PetscInt     alarms, false_alarms, rollbacks;
  PetscReal    worst;                            /* largest check ratio seen */
  PetscInt     first_alarm_step, alarm_replica;  /* the first checksum alarm */
  PetscReal    alarm_ratio;
  char         alarm_what[128];
  PetscInt     check_step, check_epoch;          /* alarm on the faulty replica after the flip */
  PetscReal    check_ratio;
  PetscInt     rep_step, rep_epoch;              /* ordered builds: its first differing step/epoch */
  PetscInt     noise_step, noise_epoch;          /* atomic: first out of the fault-free spread */
  PetscInt     noise_epoch_step;                 /* the step whose training showed noise_epoch */
  PetscReal    noise_ratio;                      /* its nearest-neighbour distance / the noise */
  PetscInt     noise_window, fire_step;          /* judged in steps [fire_step, fire_step + window) */
  PetscInt     noise_replica, noise_unmeasured;  /* the outlier; checks with no noise to compare with */
  PetscInt     stale_rollback; /* a rollback restored the state of this step, which the fault had reached (-1: none) */
  /* the scenario's own check after the last step failed (FaultsScenarioCheck) */
  PetscInt     scenario_step, scenario_replica;
} FaultState;

/* Per-guess tallies over the run (replica 0's systems). */
typedef struct {
  PetscInt its, its_step;   /* total; this step (-1: not run) */
  double   seconds;         /* forming the guess + the solve */
  double   log_r0;          /* sum of log10(start residual) */
  PetscInt nr0;
  double   r0_step;
} GuessTally;

struct _p_Coupled {
  MPI_Comm     comm;
  PetscMPIInt  rank, size;
  CouplingMode mode;
  PetscInt     nrep, train_every, train_epochs, output_every;
  double       churn_scale; /* the churn's scale this step: replica 0's RMS prediction error (largest over outputs) */
  float       *churn_out;       /* [npts * n_out]: a replica's predictions on replica 0's inputs */
  PetscBool    progress;        /* -progress: a line on stderr every few seconds */
  double       progress_at;     /* when it was last shown (0: never) */
  PetscReal    progress_every;  /* -progress_interval seconds */
  PetscInt     progress_step;   /* the step last shown */
  char         output[PETSC_MAX_PATH_LEN];
  Replica      rep[MAX_REPLICAS];
  /* guess */
  GuessKind    guess;           /* what drives the run: learned or combined */
  PetscInt     history;         /* increments kept for the combined guess */
  PetscBool    projection, baselines;
  PetscBool    learn_residual;  /* -guess_learn residual: the network corrects the projection's guess */
  KSP          ksp_plain;       /* side-by-side solves of replica 0's systems */
  Vec          xtrial;
  GuessTally   tally[GUESS_NKINDS];
  red_atomic_state base_order;
  /* closure */
  PetscInt     warmup, switches, last_switch, active_steps;
  PetscReal    closure_tol, drift_tol, pattern_factor;
  Solver       exact;           /* the exact-term run the closure is checked against */
  PetscReal    pattern[2][2];   /* [closure, exact][std of v, RMS wavenumber] at the end */
  PetscReal    drift_max;
  /* geometry of the local features */
  PetscInt     dof, n_in, n_out, npts, xs, ys, xm, ym, M, N;
  PetscBool    periodic;
  PetscInt64   coupling_copies; /* full-vector host<->device copies made by features.c's phases (not the solver's) */
  PetscInt     nweights;
  /* record */
  PetscInt     epoch, first_div_step[MAX_REPLICAS], first_div_epoch[MAX_REPLICAS];
  struct {
    int64_t step, epoch, replica; /* the first non-finite value of a network (step -1: none) */
    char    what[32];
  } netfail;
  metrics_t    last_state[MAX_REPLICAS], last_weights[MAX_REPLICAS];
#define CHURN_NLEVELS 3
  double       last_churn[CHURN_NLEVELS][MAX_REPLICAS]; /* churn at 10%, 50%, 100% of the error scale (observe.c) */
  double      *rel_hist;        /* [(nsteps + 1) * nrep]: rel_l2 against replica 0 per step (NaN: not run here) */
  float        last_loss[MAX_REPLICAS];
  double       inc_err_sum[2];  /* learned, extrapolated increment error, summed over steps (replica 0) */
  PetscInt     inc_err_n[2];
  /* checkpoint/restart */
  char         checkpoint[PETSC_MAX_PATH_LEN], restart[PETSC_MAX_PATH_LEN];
  PetscInt     checkpoint_every, restart_step; /* restart_step -1: a fresh run */
  int          stop_signal;     /* the run stopped after a checkpoint on this signal */
  PetscBool    commit_output;   /* -checkpoint_every given: its checkpoints commit the -output file first (not the
                                 * every-step ones of -fault_action rollback, which would copy it every step) */
  FaultState   fault;
  ncout       *nc;
  VecScatter   tozero;
  Vec          natural, seq;
  CoupledTimes times;
  /* full-vector host<->device copies (VecFPNADeviceCopies) of the time loop, and of its outputs and checkpoints */
  PetscInt64   loop_copies, copies_aside;
  double       mem_host, mem_device; /* bytes a rank needs at least (memory.c) */
  PetscLogEvent ev_solve, ev_feat, ev_pred, ev_train, ev_metrics, ev_out, ev_base;
};

/* An output's or a checkpoint's host<->device copies inside the loop: set
 * aside, not the loop's (device_loop_vector_copies). */
#define CALL_ASIDE(c, call) \
  do { \
    PetscInt64 k_ = VecFPNADeviceCopies(); \
    PetscCall(call); \
    (c)->copies_aside += VecFPNADeviceCopies() - k_; \
  } while (0)

/* memory.c: the bound of what the run needs, checked against the node and the device before anything is allocated */
PetscErrorCode MemoryCheck(Coupled c);

/* step.c: one time step as its phases */
/* guess or closure, solve */
PetscErrorCode StepReplicas(Coupled c, PetscInt step, PetscBool *train, PetscBool *predicted);
PetscErrorCode StepObserve(Coupled c, PetscInt step, PetscBool predicted); /* metrics, the run file's record */
PetscErrorCode StepTrain(Coupled c, PetscInt step);                        /* the epochs, each observed */

/* recovery.c: what follows a failed phase */
typedef enum { STEP_ON, STEP_REDO, STEP_STOP } StepVerdict; /* go on; roll back and re-do; stop INVALID */
PetscErrorCode RecoveryStart(Coupled c, PetscInt *first, PetscInt nsteps);
PetscErrorCode RecoveryJudge(Coupled c, PetscInt step, PetscInt epoch0, PetscBool final, StepVerdict *v);
/* *step: the loop index that re-does the step after the checkpoint */
PetscErrorCode RecoveryRollback(Coupled   c, PetscInt *step);
PetscErrorCode RecoveryFailed(Coupled c, PetscBool *failed, char *why, size_t len);

/* features.c */
PetscErrorCode FeaturesSetUp(Coupled c, Replica *p);
PetscErrorCode FeaturesGuess(Coupled c, Replica *p);           /* d^n, scales, stencils of u^n/su and d^n/sd */
PetscErrorCode FeaturesClosure(Coupled c, Replica *p);         /* (u, v) per point, exact factor */
PetscErrorCode FeaturesPredict(Coupled c, Replica *p, PetscInt step);
PetscErrorCode FeaturesCorrection(Coupled c, Replica *p);      /* z = sd * prediction, as a Vec */
PetscErrorCode FeaturesGuessTarget(Coupled c, Replica *p);     /* after the solve: target, increment error, history */
PetscErrorCode FeaturesTrain(Coupled c, Replica *p, float *loss); /* one epoch on (features, target) */
PetscErrorCode FeaturesClosureFactor(Coupled c, Replica *p);   /* closure: q = the predictions, on the host */
PetscErrorCode FeaturesClosureTarget(Coupled c, Replica *p);   /* closure: target = the exact factor */

/* batch.c: the batch on the device, on one rank with the solver's vectors there (else on the host) */
PetscErrorCode BatchSetUp(Coupled c, Replica *p);              /* chooses, once; p->dfeat NULL: the host */
PetscErrorCode BatchDestroy(Replica *p);
/* the device twins of features.c's loops (kernels/couple_cuda.h): the rows' columns off.. from v's stencils */
PetscErrorCode BatchStencils(Coupled c, Replica *p, Vec v, PetscReal is, PetscInt nst, PetscInt off);
PetscErrorCode BatchTarget(Coupled c, Replica *p, Vec a, Vec b, PetscReal s); /* b may be NULL */
PetscErrorCode BatchCorrection(Coupled c, Replica *p);         /* z = sz out */
PetscErrorCode BatchNonFinite(Coupled c, Replica *p, int *bad); /* of the predictions */
/* host copies of the device batch's features, predictions, target (each if asked) */
PetscErrorCode BatchToHost(Coupled c, Replica *p, PetscBool feat, PetscBool out, PetscBool target);
PetscErrorCode BatchTargetToDevice(Coupled c, Replica *p);
/* The comparison of a and b (metrics.h) merged into *acc on the device, *done; not done where one is on the host */
PetscErrorCode BatchDiff(Vec a, Vec b, diff_acc *acc, PetscBool *done);
/* observe.c: the comparison of a with b (metrics.h) over this rank's entries, on the device where both are */
PetscErrorCode StateDiff(Vec a, Vec b, metrics_acc *acc);

/* restart_keys.c: the halves the run uses (the network's only where there is one) */
PetscBool RunOrdered(Coupled c);    /* none adds in completion order */
PetscBool RunLayoutFree(Coupled c); /* all reproducible, through the switch: the bits do not depend on the layout */

/* guesses.c */
PetscErrorCode GuessesSetUp(Coupled c);
PetscErrorCode GuessForm(Coupled c, Replica *p, GuessKind kind, Vec x0);
PetscErrorCode GuessesCompare(Coupled c);                     /* replica 0, before its solve */
PetscErrorCode GuessesRecordMain(Coupled c, double seconds);
PetscErrorCode GuessesSummary(Coupled c, FILE *f);
PetscErrorCode GuessesReport(Coupled c, FILE *f);
PetscErrorCode GuessesDestroy(Coupled c);

/* closure.c */
PetscErrorCode ClosureSetUp(Coupled c);
PetscErrorCode ClosureBeforeSolve(Coupled c, Replica *p, PetscInt step, PetscBool *train, PetscBool *predicted);
PetscErrorCode ClosureAfterStep(Coupled c);                   /* the exact-term run's step and the drift */
PetscErrorCode ClosureVerify(Coupled c, PetscBool *ok, char *why, size_t len);
PetscErrorCode ClosureSummary(Coupled c, FILE *f);

/* observe.c */
PetscErrorCode ObserveStep(Coupled c, PetscInt step, PetscBool predicted, ncout_step_rec rec[]); /* rec: per replica */
PetscErrorCode ObserveEpoch(Coupled c, PetscInt step, ncout_epoch_rec rec[]);
PetscErrorCode ObserveSummary(Coupled c, FILE *f);
PetscErrorCode CheckFinite(Coupled c, PetscInt r, const char *what, PetscInt step, PetscInt n, const float *x);
PetscErrorCode CheckFiniteFlag(Coupled c, PetscInt r, const char *what, PetscInt step, int bad); /* bad: this rank's */
PetscErrorCode NetFailure(Coupled c, char *why, size_t len);

/* coupling_output.c */
PetscErrorCode OutputCreate(Coupled c);
PetscErrorCode OutputStep(Coupled c, PetscInt step, const ncout_step_rec *rec);
PetscErrorCode OutputEpoch(Coupled c, PetscInt step, const ncout_epoch_rec *rec);
PetscErrorCode OutputFinish(Coupled c);
PetscErrorCode OutputCommit(Coupled c);
PetscErrorCode OutputDestroy(Coupled c);

/* checkpoint.c */
PetscErrorCode CheckpointSetFromOptions(Coupled c);
/* rules.c: the rules between options, checked once all are read (the end of CoupledSetFromOptions). */
PetscErrorCode CoupledCheckRules(Coupled c);
PetscErrorCode CheckpointWrite(Coupled c);
PetscErrorCode CheckpointWriteLast(Coupled c, PetscBool failed); /* at the end of the run */
PetscErrorCode CheckpointRestore(Coupled c);                   /* after the set-up, before the output is created */
PetscErrorCode CheckpointSignalled(Coupled c, int *sig);
PetscErrorCode CheckpointAfterStep(Coupled c, PetscInt step, PetscInt nsteps); /* stop signal, -checkpoint_every */
PetscErrorCode CheckpointAtEnd(Coupled c);                     /* the run file, then the last checkpoint */
PetscErrorCode CheckpointRollback(Coupled c);                  /* back to the last -checkpoint written */

/* restart_keys.c: what a restart must agree on, as length-prefixed (key, value) pairs in a growing buffer
 * (PetscFree b) */
typedef struct {
  char  *b;
  size_t n, cap;
} RestartKeys;
PetscErrorCode CoupledSettings(Coupled c, char desc[], size_t len); /* "key: value" lines of the settings in effect */
/* the run's step, settings in effect and options as given */
PetscErrorCode RestartKeysBuild(Coupled      c, RestartKeys *k);
PetscErrorCode RestartKeysCompare(Coupled c, const char *option, const char *path, const RestartKeys *mine,
                                  const char *theirs, size_t tn);
void           RestartKeysFind(const char *b, size_t n, const char *key, const char **val, size_t *vlen, int *found);

/* faults.c */
PetscErrorCode FaultsSetFromOptions(Coupled c);
PetscErrorCode FaultsSetUp(Coupled c);
PetscErrorCode FaultsArm(Coupled c, PetscInt r, PetscInt step, PetscInt epoch, PetscBool *armed);
PetscErrorCode FaultsCollect(Coupled c);
PetscErrorCode FaultsAfterStep(Coupled c, PetscInt step, PetscInt epoch0, PetscBool *rollback);
PetscErrorCode FaultsFailedStep(Coupled c, PetscInt step, const char *why, PetscBool *rollback);
PetscErrorCode FaultsVerify(Coupled c, PetscBool *ok, char *why, size_t len);
PetscErrorCode FaultsRolledBack(Coupled c, PetscInt restored);
PetscErrorCode FaultsScenarioCheck(Coupled c);
PetscErrorCode FaultsSummary(Coupled c, FILE *f);
#define FAULTS_NATTRS 16
PetscErrorCode FaultsAttributes(Coupled c, ncout_attr at[], char text[][64], int *n);

#endif
