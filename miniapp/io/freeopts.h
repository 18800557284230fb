/* miniapp/io/freeopts.h: the options that steer none of a run's arithmetic,
 * in one table with where each may change: in a benchmark deck's run that
 * stays official (FREE_DECK, docs/benchmark.md), between two compared runs
 * (FREE_COMPARE, miniapp-compare), across a restart (FREE_RESTART). PETSc's
 * diagnostics (logging, viewers, monitors, the options files, debuggers) are
 * free everywhere. Every other option steers the arithmetic. Header-only,
 * for miniapp and miniapp-compare. */
#ifndef MINIAPP_FREEOPTS_H
#define MINIAPP_FREEOPTS_H

#include <string.h>

enum { FREE_DECK = 1, FREE_COMPARE = 2, FREE_RESTART = 4, FREE_ALL = 7 };

/* Is option name (with its dash) free where `use` (one FREE_*) says? A row
 * ending in '*' holds every option starting with it. */
static inline int option_free(const char *name, unsigned use)
{
  enum { D = FREE_DECK, C = FREE_COMPARE, R = FREE_RESTART, ALL = FREE_ALL };
  static const struct {
    const char *name;
    unsigned    where;
  } rows[] = {
    /* where and how the run executes */
    {"-threads", ALL}, {"-surrogate_device", ALL}, {"-solver_device", ALL}, {"-surrogate_device_id", ALL},
    {"-surrogate_cuda_kernels", ALL},
    {"-surrogate_view", ALL}, {"-no_signal_handler", ALL}, {"-skip_petscrc", ALL}, {"-help", ALL},
    {"-history", ALL}, {"-fp_trap", C | R}, {"-version", C | R},
    {"-ksp_fpnacg_fuse", D | C}, /* the fused CG's passes: the same bits either way */
    /* what it writes and from what it continues */
    {"-output", ALL}, {"-output_every", ALL}, {"-summary", ALL}, {"-report", ALL}, {"-report_anonymize", ALL},
    {"-progress", ALL}, {"-progress_interval", ALL}, {"-checkpoint", ALL}, {"-checkpoint_every", ALL},
    {"-restart", ALL},
    /* what it checks, and how it is named */
    {"-deck_name", C | R}, {"-golden_state_hash", C | R}, {"-golden_weights_hash", C | R}, {"-repeat_check", C | R},
    {"-mms_tol", C | R}, {"-closure_drift_tol", C | R}, {"-closure_pattern_factor", C | R},
    {"-fault_action", C | R}, {"-fault_noise_factor", C | R}, {"-fault_noise_window", C | R}, {"-fault_*", C},
    /* how long, how many, which order and which fault: what a comparison varies */
    {"-ts_max_steps", C | R}, {"-replicas", C}, {"-atomic_order_seed", C}, {"-inject", C},
    /* PETSc's diagnostics: they only print or write what happened */
    {"-log*", ALL}, {"-info*", ALL}, {"-malloc*", ALL}, {"-memory*", ALL}, {"-on_error*", ALL},
    {"-options_*", ALL}, {"-debugger*", ALL}, {"-start_in_debugger*", ALL}, {"-stop_for_debugger*", ALL},
    {"-check_pointer*", ALL}, {"-objects*", ALL}, {"-viewer*", ALL}, {"-display*", ALL},
  };
  size_t n = strlen(name);

  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    size_t m = strlen(rows[k].name);
    if (!(rows[k].where & use)) continue;
    if (rows[k].name[m - 1] == '*' ? !strncmp(name, rows[k].name, m - 1) : !strcmp(name, rows[k].name)) return 1;
  }
  return strstr(name, "_view") || strstr(name, "_monitor") || (n > 17 && !strcmp(name + n - 17, "_converged_reason")) ||
         (n > 15 && !strcmp(name + n - 15, "_converged_rate"));
}

#endif
