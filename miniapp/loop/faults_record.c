/* miniapp/loop/faults_record.c: what the fault experiment reports (faults.c
 * runs it): its verdict on the run, its summary keys and the run file's
 * attributes (docs/faults.md). */
#include "coupling_impl.h"

#include <math.h>
#include <string.h>

/* A detected fault that was not rolled back, or rolled back to a state it had
 * already reached, makes the run INVALID. */
PetscErrorCode FaultsVerify(Coupled c, PetscBool *ok, char *why, size_t len)
{
  FaultState *f = &c->fault;

  PetscFunctionBegin;
  *ok = PETSC_TRUE, why[0] = 0;
  if (f->stale_rollback >= 0) {
    *ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(why, len,
                            "the rollback restored step %" PetscInt_FMT ", which the fault (step %" PetscInt_FMT
                            ", seen in the replicas' spread after step %" PetscInt_FMT
                            ") had reached: not removed (-checkpoint_every N keeps an older state)",
                            f->stale_rollback, f->fire_step, f->detected_step));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (f->on && f->fired && !f->detected) { /* VALID: the run's checks passed; but say what they did not see */
    PetscCall(PetscSNPrintf(why, len, "the fault injected in replica %d (%s, %s %lld) fired and no detector saw it%s",
                            f->spec.replica, fault_site_names[f->spec.site],
                            fault_site_is_solver(f->spec.site) ? "step" : "epoch", f->spec.at,
                            f->spec.replica == 0 ? " (the reported result may hold it)" : ""));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* corrected: rolled back (every detection under -fault_action rollback is, at once; the count travels in the
   * checkpoint). Not a fault the run this one continues detected without rolling back, nor one seen only at the end */
  if (!f->detected || (f->action == FAULT_ACTION_ROLLBACK && f->rollbacks > 0 && f->scenario_step < 0))
    PetscFunctionReturn(PETSC_SUCCESS);
  *ok = PETSC_FALSE;
  PetscCall(PetscSNPrintf(why, len, "a fault was detected (%s) and not corrected (-fault_action %s)%s",
                          f->first_alarm_step >= 0 ? f->alarm_what : "replicas differ", FaultActionNames[f->action],
                          c->restart_step >= 0 && f->detected_step <= c->restart_step
                            ? " in the run this one continues (the checkpoint carries its fault record)"
                            : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void Step(FILE *f, const char *key, PetscInt v)
{
  if (v >= 0) fprintf(f, "  %s: %" PetscInt_FMT "\n", key, v);
  else fprintf(f, "  %s: null\n", key);
}

PetscErrorCode FaultsSummary(Coupled c, FILE *out)
{
  FaultState *f = &c->fault;

  PetscFunctionBegin;
  if (!f->on && !f->checks && f->action == FAULT_ACTION_REPORT) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->rank) PetscFunctionReturn(PETSC_SUCCESS);
  fprintf(out, "fault:\n");
  if (f->on) {
    fprintf(out, "  site: %s\n  %s: %lld\n  replica: %d\n  fired: %s\n", fault_site_names[f->spec.site],
            fault_site_is_solver(f->spec.site) ? "step" : "epoch", f->spec.at, f->spec.replica,
            f->fired ? "true" : "false");
    if (f->fired)
      fprintf(out, "  entry: %lld\n  bit: %d\n  old_value: %.17g\n  new_value: %.17g\n", f->rec.entry, f->rec.bit,
              f->rec.old_value, f->rec.new_value);
    else
      fprintf(out, "  not_fired_because: \"the site was reached fewer than call=%lld times in that %s\"\n",
              f->spec.call, fault_site_is_solver(f->spec.site) ? "step" : "epoch");
  }
  fprintf(out, "  checks: %s\n", f->checks ? "true" : "false");
  if (f->checks) {
    fprintf(out,
            "  operator_checks: %lld\n  alarms: %" PetscInt_FMT "\n  false_alarms: %" PetscInt_FMT
            "\n  worst_check_ratio: %.3e\n",
            (long long)f->nchecks, f->alarms, f->false_alarms, (double)f->worst);
    Step(out, "detected_by_checksum_step", f->check_step);
    if (f->first_alarm_step >= 0)
      fprintf(out, "  first_alarm: {step: %" PetscInt_FMT ", replica: %" PetscInt_FMT ", check: \"%s\", ratio: %.3e}\n",
              f->first_alarm_step, f->alarm_replica, f->alarm_what, (double)f->alarm_ratio);
  }
  if (f->on && c->nrep > 1) {
    if (RunOrdered(c)) {
      Step(out, "detected_by_replicas_step", f->rep_step);
      Step(out, "detected_by_replicas_epoch", f->rep_epoch);
      fprintf(out, "  replicas_attribute_it: %s\n",
              f->fired && ((fault_site_is_solver(f->spec.site) && f->rep_step == f->spec.at) ||
                           (!fault_site_is_solver(f->spec.site) && f->rep_epoch == f->spec.at))
                ? "true"
                : "false");
    } else if (c->nrep >= 3) {
      fprintf(out, "  noise_factor: %g\n  noise_window_steps: %" PetscInt_FMT "\n", (double)f->noise_factor,
              f->noise_window);
      Step(out, "detected_above_noise_step", f->noise_step);
      Step(out, "detected_above_noise_epoch", f->noise_epoch);
      Step(out, "detected_above_noise_replica", f->noise_replica);
      { /* the first step after which the detector saw it, in the state or in the weights */
        PetscInt seen = f->noise_step >= 0 && f->noise_epoch_step >= 0 ? PetscMin(f->noise_step, f->noise_epoch_step)
                      : f->noise_step >= 0                             ? f->noise_step
                                                                       : f->noise_epoch_step;
        Step(out, "detection_latency_steps", seen >= 0 && f->fire_step >= 0 ? seen - f->fire_step : -1);
      }
      if (f->noise_step >= 0 || f->noise_epoch >= 0) fprintf(out, "  noise_ratio: %.3e\n", (double)f->noise_ratio);
      fprintf(out, "  noise_unmeasured_checks: %" PetscInt_FMT "\n", f->noise_unmeasured);
    } else
      fprintf(out, "  replicas: \"atomic build: -replicas 3 or more gives the fault-free spread to compare with\"\n");
  }
  Step(out, "detected_by_solve_check_step", f->solvecheck_step); /* an unsolved system or a non-finite value */
  /* past the detectors, rejected by the scenario's check at the end */
  Step(out, "detected_by_scenario_check_step", f->scenario_step);
  if (f->scenario_step >= 0) Step(out, "detected_by_scenario_check_replica", f->scenario_replica);
  fprintf(out, "  action: %s\n  detected: %s\n", FaultActionNames[f->action], f->detected ? "true" : "false");
  if (f->action == FAULT_ACTION_ROLLBACK) fprintf(out, "  rollbacks: %" PetscInt_FMT "\n", f->rollbacks);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The fault record as global attributes of the run file ("fault_..."):
 * what was flipped (site, step or epoch, replica, entry, bit, old and new
 * value) and what saw it. n: how many were filled (at most FAULTS_NATTRS);
 * text[] holds their values. */
PetscErrorCode FaultsAttributes(Coupled c, ncout_attr at[], char text[][64], int *n)
{
  FaultState *f = &c->fault;
  int         k = 0;

  PetscFunctionBegin;
  *n = 0;
  if (!f->on && !f->checks) PetscFunctionReturn(PETSC_SUCCESS);
#define ATTR(nm, num, ...) (PetscSNPrintf(text[k], 64, __VA_ARGS__), at[k] = (ncout_attr){nm, text[k], num}, k++)
  if (f->on) {
    ATTR("fault_site", 0, "%s", fault_site_names[f->spec.site]);
    ATTR(fault_site_is_solver(f->spec.site) ? "fault_step" : "fault_epoch", 1, "%lld", f->spec.at);
    ATTR("fault_replica", 1, "%d", f->spec.replica);
    ATTR("fault_fired", 1, "%d", (int)f->fired);
    if (f->fired) {
      ATTR("fault_entry", 1, "%lld", f->rec.entry);
      ATTR("fault_bit", 1, "%d", f->rec.bit);
      ATTR("fault_old_value", 2, "%.17g", f->rec.old_value);
      ATTR("fault_new_value", 2, "%.17g", f->rec.new_value);
    }
  }
  ATTR("fault_checks", 1, "%d", (int)f->checks);
  if (f->checks) ATTR("fault_check_alarms", 1, "%" PetscInt_FMT, f->alarms);
  ATTR("fault_detected", 1, "%d", (int)f->detected);
  ATTR("fault_scenario_check_step", 1, "%" PetscInt_FMT, f->scenario_step);
  ATTR("fault_first_detection_step", 1, "%" PetscInt_FMT, f->detected_step);
  ATTR("fault_action", 0, "%s", FaultActionNames[f->action]);
  ATTR("fault_rollbacks", 1, "%" PetscInt_FMT, f->rollbacks);
#undef ATTR
  *n = k;
  PetscFunctionReturn(PETSC_SUCCESS);
}
