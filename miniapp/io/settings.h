/* miniapp/io/settings.h: the options whose whole effect is one of a run's
 * described settings: the "key: value" lines of the values in effect
 * (CoupledSettings: the solver's, the network's and the coupling's), which
 * a checkpoint keeps and the run file writes as its `settings` attribute.
 * Where both runs' settings are known, such an option is compared by its
 * setting's value, not as typed: a default restated (-ts_dt 1.0 where none
 * was given, -ksp_rtol 1e-10) or a value written another way is the same
 * run. Header-only, for miniapp (restart) and miniapp-compare. */
#ifndef MINIAPP_SETTINGS_H
#define MINIAPP_SETTINGS_H

#include <string.h>

/* The setting that holds option's whole effect, or NULL. */
static inline const char *described_setting(const char *option)
{
  static const char *const map[][2] = {
    {"-scenario", "scenario"},         {"-da_grid_x", "grid"},
    {"-da_grid_y", "grid"},            {"-ts_dt", "dt"},
    {"-heat_D", "heat_D"},             {"-heat_theta", "heat_theta"},
    {"-gs_Du", "gs_Du"},               {"-gs_Dv", "gs_Dv"},
    {"-gs_F", "gs_F"},                 {"-gs_k", "gs_k"},
    {"-ksp_type", "ksp"},              {"-pc_type", "ksp"},
    {"-ksp_norm_type", "ksp"},         {"-ksp_rtol", "ksp_tolerances"},
    {"-ksp_atol", "ksp_tolerances"},   {"-ksp_divtol", "ksp_tolerances"},
    {"-ksp_max_it", "ksp_tolerances"}, {"-coupling", "coupling"},
    {"-replicas", "replicas"},         {"-train_every", "train"},
    {"-train_epochs", "train"},        {"-guess", "guess"},
    {"-guess_history", "guess_history"}, {"-guess_projection", "guess_projection"},
    {"-coupling_baselines", "coupling_baselines"}, {"-surrogate_layers", "surrogate_layers"},
    {"-surrogate_lr", "surrogate_adam"}, {"-surrogate_beta1", "surrogate_adam"},
    {"-surrogate_beta2", "surrogate_adam"}, {"-surrogate_eps", "surrogate_adam"},
    {"-surrogate_weight_decay", "surrogate_adam"}, {"-surrogate_seed", "surrogate_seed"},
    {"-surrogate_checks", "surrogate_checks"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (!strcmp(option, map[i][0])) return map[i][1];
  return NULL;
}

#endif
