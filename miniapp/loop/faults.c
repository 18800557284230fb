/* miniapp/loop/faults.c: the fault experiment of the coupled run (-inject,
 * -fault_checks, -fault_action, -fault_noise_factor; docs/faults.md): arming
 * the bit flip, the detectors (checksums; replicas, bitwise in ordered builds
 * and against the rounding noise in the atomic build) and the response. The
 * sites are in solver/ and surrogate/, the checks' thresholds with them. */
#include "coupling_impl.h"
#include "optrange.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const FaultActionNames[] = {"report", "abort", "rollback"};

PetscErrorCode FaultsSetFromOptions(Coupled c)
{
  FaultState *f = &c->fault;
  char        spec[512] = "";
  PetscInt    action    = FAULT_ACTION_REPORT;
  PetscBool   set;

  PetscFunctionBegin;
  f->noise_factor = 10, f->noise_window = 10;
  f->fire_step = f->noise_replica = f->stale_rollback = f->scenario_step = f->scenario_replica = f->noise_epoch_step =
    -1;
  f->check_step = f->check_epoch = f->rep_step = f->rep_epoch = f->noise_step = f->noise_epoch = f->first_alarm_step =
    f->detected_step = f->solvecheck_step = -1;
  PetscOptionsBegin(c->comm, NULL, "Fault injection and detection", NULL);
  PetscCall(PetscOptionsString("-inject",
                               "Flip one bit once: "
                               "site=state|iterate|operator|gradient|weight|activation,step=N|epoch=N[,replica=R][,"
                               "entry=E|random][,bit=B|random][,call=K][,seed=S]",
                               NULL, spec, spec, sizeof spec, &set));
  PetscCall(PetscOptionsBool("-fault_checks",
                             "Algorithm-based checksums on every operator product and surrogate train step", NULL,
                             f->checks, &f->checks, NULL));
  PetscCall(PetscOptionsEList("-fault_action",
                              "On a detected fault: report (the run is INVALID), abort, or rollback (re-do from the "
                              "last -checkpoint)",
                              NULL, FaultActionNames, 3, FaultActionNames[action], &action, NULL));
  PetscCall(CliReal(PetscOptionsObject, "-fault_noise_factor",
                    "Atomic build: a replica is faulty where its distance to its nearest other replica exceeds this "
                    "times the fault-free replicas' (1 .. 1e6)", 1, 1e6, 0, "a larger factor calls no fault a fault",
                    &f->noise_factor, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-fault_noise_window",
                   "Atomic build: steps after the fault's in which the replicas are judged (1 .. 1000)", 1, 1000, NULL,
                   &f->noise_window, NULL));
  PetscOptionsEnd();
  f->action = (FaultAction)action;
  if (set) {
    char err[256];
    PetscCheck(fault_parse(spec, &f->spec, err, sizeof err) == 0, c->comm, PETSC_ERR_ARG_WRONG, "%s", err);
    f->on = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What is wrong with the -inject spec for this run of nsteps steps (its
 * replicas, vectors, network; supported: the surrogate's device has the
 * site), in one line; NULL if nothing. */
static const char *InjectProblem(Coupled c, PetscInt nsteps, PetscBool supported, char *msg, size_t len)
{
  const fault_spec *sp = &c->fault.spec;
  const char       *site = fault_site_names[sp->site];
  long long         n    = (long long)c->M * c->N * c->dof, epochs = (long long)nsteps * c->train_epochs;

  if (sp->replica >= c->nrep)
    return opt_say(msg, len, "-inject: replica=%d, but the run has %" PetscInt_FMT " replica(s) (0..%" PetscInt_FMT ")",
               sp->replica, c->nrep, c->nrep - 1);
  if (fault_site_is_solver(sp->site)) {
    if (sp->at > nsteps)
      return opt_say(msg, len, "-inject: step=%lld, but the run has %" PetscInt_FMT " steps", sp->at, nsteps);
    if (sp->entry >= n)
      return opt_say(msg, len, "-inject: entry=%lld, but the solver's vectors have %lld entries (0..%lld)", sp->entry, n,
                 n - 1);
    return NULL;
  }
  if (!c->rep[0].net) return opt_say(msg, len, "-inject: site=%s needs a surrogate (-coupling guess or closure)", site);
  if (!supported) return opt_say(msg, len, "-inject: site=%s is not available on the surrogate's device (CPU only)", site);
  /* it never fired, and the run said so only as 'reached fewer than call=1 times' */
  if (sp->at >= epochs)
    return opt_say(msg, len,
               "-inject: epoch=%lld, but the run trains at most %lld epochs (%" PetscInt_FMT
               " steps x -train_epochs %" PetscInt_FMT ")",
               sp->at, epochs, nsteps, c->train_epochs);
  if (sp->site != FAULT_ACTIVATION && sp->entry >= c->nweights)
    return opt_say(msg, len, "-inject: entry=%lld, but the network has %" PetscInt_FMT " parameters (0..%" PetscInt_FMT ")",
               sp->entry, c->nweights, c->nweights - 1);
  return NULL;
}

/* After the set-up: the spec against the run's sizes. */
PetscErrorCode FaultsSetUp(Coupled c)
{
  FaultState *f = &c->fault;
  PetscInt    nsteps;
  PetscBool   supported = PETSC_FALSE;
  char        msg[512];
  const char *bad;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < c->nrep; r++) {
    if (f->checks) PetscCall(SolverSetChecks(c->rep[r].solver, PETSC_TRUE));
    if (f->checks && c->rep[r].net) PetscCall(SurrogateSetChecks(c->rep[r].net, PETSC_TRUE));
  }
  /* the last good state is the last step */
  if (f->action == FAULT_ACTION_ROLLBACK && !c->checkpoint_every) c->checkpoint_every = 1;
  if (!f->on) PetscFunctionReturn(PETSC_SUCCESS);
  fault_init(&f->hook);
  for (PetscInt r = 0; r < c->nrep; r++) { /* the sites get a hook only in a run that injects */
    PetscCall(SolverSetFaults(c->rep[r].solver, &f->hook));
    if (c->rep[r].net) PetscCall(SurrogateSetFaults(c->rep[r].net, &f->hook));
  }
  if (f->spec.replica < 0) f->spec.replica = (int)c->nrep - 1;
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, NULL, NULL));
  if (!fault_site_is_solver(f->spec.site) && c->rep[0].net)
    PetscCall(SurrogateFaultSiteSupported(c->rep[0].net, (int)f->spec.site, &supported));
  bad = InjectProblem(c, nsteps, supported, msg, sizeof msg);
  PetscCheck(!bad, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s", bad);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Arm before replica r's solve of the step that produces state `step`, or
 * before its train step of epoch `epoch` (-1 for the other); returns whether
 * it armed, so that the caller collects. */
PetscErrorCode FaultsArm(Coupled c, PetscInt r, PetscInt step, PetscInt epoch, PetscBool *armed)
{
  FaultState *f = &c->fault;

  PetscFunctionBegin;
  *armed = PETSC_FALSE;
  if (!f->on || f->done || r != f->spec.replica) PetscFunctionReturn(PETSC_SUCCESS);
  if (fault_site_is_solver(f->spec.site) ? step != f->spec.at : epoch != f->spec.at) PetscFunctionReturn(PETSC_SUCCESS);
  fault_arm(&f->hook, &f->spec);
  *armed = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After an armed solve or train step: every rank learns what was flipped. */
PetscErrorCode FaultsCollect(Coupled c)
{
  FaultState  *f = &c->fault;
  PetscMPIInt  owner, me;
  fault_record rec = *fault_get_record(&f->hook);

  PetscFunctionBegin;
  fault_disarm(&f->hook);
  f->done = PETSC_TRUE; /* once: a rollback re-does the step without it (a transient fault) */
  me      = rec.fired ? c->rank : c->size;
  PetscCallMPI(MPI_Allreduce(&me, &owner, 1, MPI_INT, MPI_MIN, c->comm));
  if (owner < c->size) PetscCallMPI(MPI_Bcast(&rec, sizeof rec, MPI_BYTE, owner, c->comm));
  PetscCheck(rec.nentries == 0 || rec.entry < rec.nentries, c->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-inject: entry=%lld, but site %s has %lld entries (0..%lld)", rec.entry, fault_site_names[rec.site],
             rec.nentries, rec.nentries - 1);
  f->rec   = rec;
  f->fired = (PetscBool)(owner < c->size);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Atomic build: each replica's distance to its nearest other replica,
 * m[r] = min_s ||x_r - x_s|| / max(||x_r||, ||x_s||), over the states
 * (weights: the surrogate's parameters, fetched by ObserveEpoch). A
 * non-finite distance counts as infinitely far. */
static PetscErrorCode Nearest(Coupled c, PetscBool weights, double m[])
{
  PetscInt nr = c->nrep;
  double  *d2, *a2;

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(nr * nr, &d2, nr, &a2));
  if (weights) {
    for (PetscInt r = 0; r < nr; r++)
      for (PetscInt i = 0; i < c->nweights; i++) {
        double x = c->rep[r].w32[i];
        a2[r] += x * x;
        for (PetscInt s = r + 1; s < nr; s++) d2[r * nr + s] += (x - c->rep[s].w32[i]) * (x - c->rep[s].w32[i]);
      }
  } else {
    Vec u[MAX_REPLICAS];
    for (PetscInt r = 0; r < nr; r++) PetscCall(SolverGetState(c->rep[r].solver, &u[r]));
    /* each pair once (StateDiff: on the device where the states are); the last replica's norm against replica 0 */
    for (PetscInt r = 0; r < nr; r++)
      for (PetscInt s = r + 1; s < nr || (s == nr && r == nr - 1); s++) {
        metrics_acc acc;
        PetscCall(StateDiff(u[r], u[s % nr], &acc));
        if (s < nr) d2[r * nr + s] = acc.sum_d2;
        a2[r] = acc.sum_a2;
      }
    /* a threshold's input: any order will do */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d2, (PetscMPIInt)(nr * nr), MPI_DOUBLE, MPI_SUM, c->comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, a2, (PetscMPIInt)nr, MPI_DOUBLE, MPI_SUM, c->comm));
  }
  for (PetscInt r = 0; r < nr; r++) m[r] = PETSC_INFINITY;
  for (PetscInt r = 0; r < nr; r++)
    for (PetscInt s = r + 1; s < nr; s++) {
      double den = PetscMax(a2[r], a2[s]), d = sqrt(den > 0 ? d2[r * nr + s] / den : d2[r * nr + s]);
      if (!isfinite(d)) continue; /* NaN or Inf: as far as can be */
      m[r] = PetscMin(m[r], d), m[s] = PetscMin(m[s], d);
    }
  PetscCall(PetscFree2(d2, a2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The replica farthest from its nearest neighbour, if it stands out: its
 * distance is not finite, or more than -fault_noise_factor times the noise
 * (the smallest nearest-neighbour distance: two fault-free replicas). A
 * noise of 0 (two replicas bitwise equal) measures nothing: no verdict. */
static PetscInt Outlier(Coupled c, const double m[], double *ratio, PetscBool *unmeasured)
{
  PetscInt far = 0;
  double   noise = PETSC_INFINITY;

  *unmeasured = PETSC_FALSE;
  for (PetscInt r = 0; r < c->nrep; r++) {
    noise = PetscMin(noise, m[r]);
    if (m[r] > m[far]) far = r;
  }
  *ratio = noise > 0 ? m[far] / noise : PETSC_INFINITY;
  if (!isfinite(m[far]) && isfinite(noise)) return far; /* a replica no other is near: non-finite */
  if (!(noise > 0) || !isfinite(noise)) {
    *unmeasured = PETSC_TRUE;
    return -1;
  }
  return m[far] > c->fault.noise_factor * noise ? far : -1;
}

/* Atomic build, after the step that produced state `step`: within
 * -fault_noise_window steps of the one in which the fault fired, is a
 * replica (any one: the reference too) out of the fault-free spread, in its
 * state or, if the step trained, in its weights? Beyond the window the
 * replicas' own divergence would be judged, not the fault. */
static PetscErrorCode NoiseDetector(Coupled c, PetscInt step, PetscInt epoch0, PetscBool *hit)
{
  FaultState *f = &c->fault;
  double      m[MAX_REPLICAS], ratio;
  PetscBool   unmeasured;
  PetscInt    o;

  PetscFunctionBegin;
  *hit = PETSC_FALSE; /* a detection in this call (a re-done step after a rollback is judged afresh) */
  if (f->fire_step < 0) f->fire_step = step;
  if (step >= f->fire_step + f->noise_window) PetscFunctionReturn(PETSC_SUCCESS);
  if (f->noise_step < 0) {
    PetscCall(Nearest(c, PETSC_FALSE, m));
    o = Outlier(c, m, &ratio, &unmeasured);
    if (o >= 0) f->noise_step = step, f->noise_ratio = ratio, f->noise_replica = o, *hit = PETSC_TRUE;
    f->noise_unmeasured += unmeasured;
  }
  if (c->rep[0].net && c->epoch > epoch0 && f->noise_epoch < 0) {
    PetscCall(Nearest(c, PETSC_TRUE, m));
    o = Outlier(c, m, &ratio, &unmeasured);
    if (o >= 0) {
      f->noise_epoch = c->epoch - 1, f->noise_epoch_step = step, *hit = PETSC_TRUE;
      if (f->noise_replica < 0) f->noise_replica = o, f->noise_ratio = ratio;
    }
    f->noise_unmeasured += unmeasured;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One more rollback, at most 10 a run: a fault that persists ends it (why:
 * the failed step's reason, or NULL for a fault that is detected again). */
static PetscErrorCode Rollback(FaultState *f, MPI_Comm comm, PetscInt step, const char *why, PetscBool *rollback)
{
  char again[256];

  PetscFunctionBegin;
  if (why) PetscCall(PetscSNPrintf(again, sizeof again, "step %" PetscInt_FMT " still fails: %s", step, why));
  else PetscCall(PetscSNPrintf(again, sizeof again, "the fault persists (step %" PetscInt_FMT ")", step));
  PetscCheck(f->rollbacks < 10, comm, PETSC_ERR_FP, "-fault_action rollback: 10 rollbacks and %s", again);
  f->rollbacks++;
  *rollback = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the step that produced state `step` (and its training): the checks'
 * alarms, the replicas' verdict, and what to do. *rollback: restore the last
 * checkpoint and re-do. */
PetscErrorCode FaultsAfterStep(Coupled c, PetscInt step, PetscInt epoch0, PetscBool *rollback)
{
  FaultState *f = &c->fault;
  PetscBool   alarm = PETSC_FALSE, detected = PETSC_FALSE, noise_hit = PETSC_FALSE;
  PetscInt    fr    = f->on ? f->spec.replica : -1;

  PetscFunctionBegin;
  *rollback = PETSC_FALSE;
  if (f->checks)
    for (PetscInt r = 0; r < c->nrep; r++) {
      PetscInt  n, nfail, snfail = 0;
      PetscReal worst, sworst = 0;
      char      what[128] = "";
      PetscCall(SolverGetCheckResult(c->rep[r].solver, &n, &nfail, &worst));
      f->nchecks += n;
      if (c->rep[r].net) PetscCall(SurrogateGetCheckResult(c->rep[r].net, &snfail, &sworst, what, sizeof what));
      f->worst = PetscMax(f->worst, PetscMax(worst, sworst));
      if (!nfail && !snfail) continue;
      alarm = PETSC_TRUE;
      f->alarms += nfail + snfail;
      if (!(f->fired && r == fr)) f->false_alarms += nfail + snfail; /* not where (or before) the fault is */
      if (f->first_alarm_step < 0) {
        f->first_alarm_step = step, f->alarm_replica = r, f->alarm_ratio = PetscMax(worst, sworst);
        PetscCall(PetscStrncpy(f->alarm_what, nfail ? "operator checksum" : what, sizeof f->alarm_what));
      }
      if (f->fired && r == fr && f->check_step < 0) {
        f->check_step = step, f->check_ratio = PetscMax(worst, sworst);
        if (snfail) f->check_epoch = c->epoch - 1; /* the step's last epoch at the latest */
      }
    }
  if (f->fired && fr >= 0) {
    if (RunOrdered(c)) { /* any difference is a fault */
      if (f->rep_step < 0 && c->first_div_step[fr] >= 0) f->rep_step = c->first_div_step[fr];
      if (f->rep_epoch < 0 && c->first_div_epoch[fr] >= 0) f->rep_epoch = c->first_div_epoch[fr];
      if (fr == 0 && c->nrep > 1 && f->rep_step < 0) /* the reference itself: every other replica leaves it */
        for (PetscInt r = 1; r < c->nrep; r++)
          if (c->first_div_step[r] >= 0) f->rep_step = c->first_div_step[r];
    /* atomic: out of the fault-free replicas' spread */
    } else if (c->nrep >= 3) PetscCall(NoiseDetector(c, step, epoch0, &noise_hit));
    if (RunOrdered(c)) /* this step's record (a rollback restores the earlier one) */
      for (PetscInt r = fr ? fr : 1; r < (fr ? fr + 1 : c->nrep); r++)
        detected = (PetscBool)(detected || c->first_div_step[r] == step ||
                               (c->first_div_epoch[r] >= epoch0 && c->first_div_epoch[r] < c->epoch));
    else detected = noise_hit;
  }
  if (RunOrdered(c) && !f->fired) /* no fault injected, yet replicas differ: a fault of the machine, or a bug */
    for (PetscInt r = 1; r < c->nrep; r++)
      if (c->first_div_step[r] == step) detected = PETSC_TRUE;
  detected = (PetscBool)(detected || alarm);
  if (!detected) PetscFunctionReturn(PETSC_SUCCESS);
  if (!f->detected) f->detected_step = step;
  f->detected = PETSC_TRUE;
  if (f->action == FAULT_ACTION_ABORT)
    SETERRQ(c->comm, PETSC_ERR_FP, "-fault_action abort: fault detected in step %" PetscInt_FMT " (%s%s)", step,
            alarm ? "checksum alarm: " : "replicas differ", alarm ? f->alarm_what : "");
  if (f->action == FAULT_ACTION_ROLLBACK) PetscCall(Rollback(f, c->comm, step, NULL, rollback));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An unsolved step or a non-finite state (coupling.c) is a detected fault
 * (whether injected or not): with -fault_action rollback it is re-done from
 * the last checkpoint; otherwise the caller stops the run, INVALID. */
PetscErrorCode FaultsFailedStep(Coupled c, PetscInt step, const char *why, PetscBool *rollback)
{
  FaultState *f = &c->fault;

  PetscFunctionBegin;
  *rollback = PETSC_FALSE;
  /* no fault experiment: the solver's verdict says it */
  if (!f->on && !f->checks && f->action == FAULT_ACTION_REPORT) PetscFunctionReturn(PETSC_SUCCESS);
  if (!f->detected) f->detected_step = step;
  f->detected = PETSC_TRUE;
  if (f->solvecheck_step < 0) f->solvecheck_step = step;
  if (f->first_alarm_step < 0) {
    f->first_alarm_step = step, f->alarm_replica = -1, f->alarm_ratio = NAN;
    PetscCall(PetscStrncpy(f->alarm_what, "unsolved step or non-finite state", sizeof f->alarm_what));
  }
  if (f->action == FAULT_ACTION_ROLLBACK) PetscCall(Rollback(f, c->comm, step, why, rollback));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a rollback to the state of step `restored`: the atomic build's
 * detector may judge a fault steps after the one it fired in (its replicas
 * leave the fault-free spread later), so the last checkpoint, written after
 * a step that looked good, can already hold it. Then the fault was not
 * removed (the re-done steps are not judged again): noted for the verdict. */
PetscErrorCode FaultsRolledBack(Coupled c, PetscInt restored)
{
  FaultState *f = &c->fault;

  PetscFunctionBegin;
  if (f->fire_step >= 0 && restored >= f->fire_step && f->stale_rollback < 0) f->stale_rollback = restored;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the last step, in a fault experiment: the scenario's own check
 * (Gray-Scott's bounds, heat's MMS error) on every replica. A fault that went
 * past the run's detectors and left a state this check rejects is detected
 * here, at the run's end, so that the fault record says so (the verdict of
 * replica 0 is INVALID anyway); the first failing replica is recorded. */
PetscErrorCode FaultsScenarioCheck(Coupled c)
{
  FaultState *f = &c->fault;
  PetscInt    step;

  PetscFunctionBegin;
  /* no fault: a failed check is the verdict's, not a detection */
  if (!f->on || !f->fired) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SolverGetStep(c->rep[0].solver, &step, NULL, NULL, NULL));
  for (PetscInt r = 0; r < c->nrep && f->scenario_step < 0; r++) {
    PetscBool ok;
    char      why[256];
    PetscCall(SolverCheckScenario(c->rep[r].solver, &ok, why, sizeof why));
    if (ok) continue;
    f->scenario_step = step, f->scenario_replica = r;
    if (f->detected) break; /* a detector saw it first: the verdict names that one */
    f->detected_step = step, f->detected = PETSC_TRUE;
    if (f->first_alarm_step < 0) {
      f->first_alarm_step = step, f->alarm_replica = r, f->alarm_ratio = NAN;
      /* its finding is in the verdict already */
      if (r == 0)
        PetscCall(PetscStrncpy(f->alarm_what, "the scenario's check after the last step", sizeof f->alarm_what));
      else
        PetscCall(PetscSNPrintf(f->alarm_what, sizeof f->alarm_what,
                                "the scenario's check after the last step, replica %" PetscInt_FMT ": %s", r, why));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
