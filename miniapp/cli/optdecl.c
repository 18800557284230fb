/* miniapp/cli/optdecl.c: the options each program reads, by group, name and
 * type (cli_impl.h); optstrict.c judges every option given against them. */
#include "cli_impl.h"

const OptDecl opt_decl[] = {
  /* PETSc 3.18's own (sys/objects/init.c, pinit.c, options.c, device/, sf/) */
  {OPTS_PETSC, PETSC_FALSE, T_INT, "check_pointer_intensity omp_num_threads saws_port device_select"},
  {OPTS_PETSC, PETSC_FALSE, T_INTS, "debugger_ranks debugger_nodes"},
  {OPTS_PETSC, PETSC_FALSE, T_REAL, "petsc_sleep debugger_pause log_threshold malloc_view_threshold"},
  {OPTS_PETSC, PETSC_FALSE, T_BOOL,
   "checkfunctionlist fp_trap get_total_flops log_all log_sync log_view_memory malloc malloc_coalesce malloc_debug "
   "malloc_dump malloc_hbw malloc_info malloc_requested_size malloc_test memory_view mpi_return_on_error mpidump "
   "no_signal_handler noshared on_error_abort on_error_mpiabort options_left options_view options_monitor "
   "options_monitor_cancel petsc_ci petsc_ci_portable_error_output saw_options saws_options saws_port_auto_select "
   "saws_port_auto_select_silent use_gpu_aware_mpi viennacl_synchronize viewfromoptions x_virtual skip_petscrc "
   "device_view device_view_host sf_rank_order sf_unknown_input_stream sf_use_stream_aware_mpi use_nvshmem "
   "use_nvshmem_get"},
  {OPTS_PETSC, PETSC_FALSE, T_CHOICE,
   "device_enable default_device_type root_device_context_device_type root_device_context_stream_type sf_type"},
  {OPTS_PETSC, PETSC_FALSE, T_TEXT,
   "help version options_file options_file_yaml prefix_push prefix_pop history info info_exclude log log_view "
   "log_trace log_exclude log_mpe log_summary log_exclude_actions log_exclude_objects log_view_gpu_time malloc_view "
   "on_error_attach_debugger on_error_emacs start_in_debugger stop_for_debugger debug_terminal display "
   "popen_machine saws_https saws_root saws_local saws_log tmp shared_tmp not_shared_tmp citations nox nox_warning "
   "objects_dump python stack_view mpi_linear_solver_server process_view omp_view tellmycell textbelt sf_backend"},

  /* solver/ */
  {OPTS_SOLVER, PETSC_FALSE, T_INT, "da_grid_x da_grid_y weak_tile ts_max_steps gs_seed atomic_order_seed"},
  {OPTS_SOLVER, PETSC_FALSE, T_REAL, "ts_dt ksp_rtol gs_Du gs_Dv gs_F gs_k gs_h heat_D heat_theta mms_tol"},
  {OPTS_SOLVER, PETSC_FALSE, T_BOOL, "solver_stock_vec"},
  {OPTS_SOLVER, PETSC_FALSE, T_CHOICE, "scenario=heat,grayscott solver_device=cpu,cuda,auto"},
  /* ... and its PETSc objects: KSPSetFromOptions (every Krylov type, the
   * initial guesses, fpnacg), PCSetFromOptions (jacobi, bjacobi), DMSetFromOptions (DMDA) */
  {OPTS_SOLVER, PETSC_TRUE, T_INT,
   "ksp_max_it ksp_check_norm_iteration ksp_matsolve_batch_size ksp_matsolve_block_size ksp_gmres_restart "
   "ksp_lgmres_augment ksp_dgmres_eigen ksp_dgmres_max_eigen ksp_agmres_eigen ksp_agmres_maxeigen ksp_bcgsl_ell "
   "ksp_cg_gltr_max_lanczos_its ksp_cg_gltr_max_newton_its ksp_chebyshev_esteig_steps ksp_fcg_mmax "
   "ksp_fcg_nprealloc ksp_pipefcg_mmax ksp_pipefcg_nprealloc ksp_pipegcr_mmax ksp_pipegcr_nprealloc ksp_gcr_restart "
   "ksp_lcd_restart ksp_pipelcg_pipel ksp_tsirm_cgls ksp_tsirm_max_it_ls ksp_tsirm_size_ls ksp_guess_pod_size "
   "ksp_fetidp_pressure_field pc_bjacobi_blocks pc_bjacobi_local_blocks da_grid_x da_grid_y da_grid_z da_overlap "
   "da_overlap_x da_overlap_y da_overlap_z da_local_subdomains da_processors_x da_processors_y da_processors_z "
   "da_refine da_refine_x da_refine_y da_refine_z dm_bind_below dm_ds_jet_degree vec_bind_below"},
  {OPTS_SOLVER, PETSC_TRUE, T_INTS,
   "ksp_fischer_guess ksp_guess_fischer_model da_refine_hierarchy_x da_refine_hierarchy_y da_refine_hierarchy_z"},
  {OPTS_SOLVER, PETSC_TRUE, T_REAL,
   "ksp_rtol ksp_atol ksp_divtol ksp_gmres_haptol ksp_gmres_breakdown_tolerance ksp_lcd_haptol ksp_dgmres_ratio "
   "ksp_agmres_MaxRatio ksp_agmres_MinRatio ksp_bcgsl_xres ksp_cg_radius ksp_cg_gltr_eigen_tol "
   "ksp_cg_gltr_init_pert ksp_cg_gltr_newton_tol ksp_qcg_trustregionradius ksp_richardson_scale "
   "ksp_pipefgmres_shift ksp_pipelcg_lmax ksp_pipelcg_lmin ksp_tsirm_tol_ls ksp_guess_fischer_tol ksp_guess_pod_tol "
   "ksp_dynamic_tolerance_param"},
  {OPTS_SOLVER, PETSC_TRUE, T_REALS, "ksp_chebyshev_eigenvalues ksp_chebyshev_esteig"},
  {OPTS_SOLVER, PETSC_TRUE, T_BOOL,
   "ksp_initial_guess_nonzero ksp_knoll ksp_lag_norm ksp_reuse_preconditioner ksp_error_if_not_converged "
   "ksp_converged_maxits ksp_converged_use_initial_residual_norm ksp_converged_use_min_initial_residual_norm "
   "ksp_converged_reason_view_cancel ksp_diagonal_scale ksp_diagonal_scale_fix ksp_constant_null_space "
   "ksp_monitor_cancel ksp_monitor_lg_range ksp_monitor_pause_final ksp_monitor_saws ksp_saws_block "
   "ksp_use_explicittranspose ksp_test_null_space ksp_fpnacg_fuse ksp_gmres_preallocate ksp_gmres_krylov_monitor "
   "ksp_gmres_classicalgramschmidt ksp_gmres_modifiedgramschmidt ksp_fgmres_modifypcnochange ksp_fgmres_modifypcksp "
   "ksp_lgmres_constant ksp_dgmres_force ksp_dgmres_improve ksp_agmres_DeflPrecond ksp_agmres_ritz ksp_bcgsl_cxpoly "
   "ksp_bcgsl_mrpoly ksp_bcgsl_pinv ksp_cg_single_reduction ksp_chebyshev_esteig_noisy ksp_fetidp_check "
   "ksp_fetidp_fullyredundant ksp_fetidp_saddlepoint ksp_fetidp_saddlepoint_flip ksp_fetidp_pressure_all "
   "ksp_fetidp_pressure_schur ksp_lsqr_compute_standard_error ksp_lsqr_exact_mat_norm ksp_pipegcr_unroll_w "
   "ksp_pipelcg_monitor ksp_richardson_self_scale recompute_w ksp_guess_fischer_monitor ksp_guess_pod_monitor "
   "ksp_guess_pod_Ainner pc_use_amat pc_jacobi_abs pc_jacobi_fixdiagonal dm_preallocate_only"},
  {OPTS_SOLVER, PETSC_TRUE, T_CHOICE,
   "ksp_type ksp_guess_type ksp_convergence_test ksp_norm_type ksp_pc_side ksp_converged_rate_type ksp_cg_type "
   "ksp_cg_dtype ksp_fcg_truncation_type ksp_pipefcg_truncation_type ksp_pipegcr_truncation_type "
   "ksp_gmres_cgs_refinement_type pc_type pc_jacobi_type dm_vec_type dm_mat_type dm_is_coloring_type"},
  {OPTS_SOLVER, PETSC_TRUE, T_TEXT,
   "ksp_view ksp_view_pre ksp_view_mat ksp_view_pmat ksp_view_rhs ksp_view_solution ksp_view_mat_explicit "
   "ksp_view_final_residual ksp_view_preconditioned_operator_explicit ksp_view_diagonal_scale ksp_view_eigenvalues "
   "ksp_view_eigenvalues_explicit ksp_view_singularvalues ksp_compute_eigenvalues "
   "ksp_compute_eigenvalues_explicitly ksp_compute_singularvalues ksp_final_residual ksp_plot_eigenvalues "
   "ksp_plot_eigencontours ksp_plot_eigenvalues_explicitly ksp_monitor ksp_monitor_short ksp_monitor_range "
   "ksp_monitor_true_residual ksp_monitor_max ksp_monitor_solution ksp_monitor_singular_value ksp_monitor_error "
   "ksp_monitor_python ksp_converged_reason ksp_converged_rate ksp_dynamic_tolerance dm_view dm_petscds_view"},

  /* surrogate/ (SurrogateSetOptionsPrefix) */
  {OPTS_SURROGATE, PETSC_TRUE, T_INT, "surrogate_seed surrogate_device_id atomic_order_seed"},
  {OPTS_SURROGATE, PETSC_TRUE, T_INTS, "surrogate_layers"},
  {OPTS_SURROGATE, PETSC_TRUE, T_REAL,
   "surrogate_lr surrogate_beta1 surrogate_beta2 surrogate_eps surrogate_weight_decay"},
  {OPTS_SURROGATE, PETSC_TRUE, T_BOOL, "surrogate_view surrogate_checks"},
  {OPTS_SURROGATE, PETSC_TRUE, T_TEXT, "surrogate_device"},
  {OPTS_SURROGATE, PETSC_TRUE, T_CHOICE, "surrogate_cuda_kernels=tiled,gemm"},

  /* miniapp/ */
  {OPTS_DRIVER, PETSC_FALSE, T_INT,
   "threads repeat_check checkpoint_every train_every train_epochs replicas output_every guess_history "
   "closure_warmup fault_noise_window"},
  {OPTS_DRIVER, PETSC_FALSE, T_REAL,
   "closure_tol closure_drift_tol progress_interval closure_pattern_factor fault_noise_factor"},
  {OPTS_DRIVER, PETSC_FALSE, T_BOOL, "guess_projection coupling_baselines progress fault_checks report_anonymize"},
  {OPTS_DRIVER, PETSC_FALSE, T_CHOICE,
   "coupling=none,guess,closure guess=learned,combined,projection guess_learn=increment,residual "
   "fault_action=report,abort,rollback"},
  {OPTS_DRIVER, PETSC_FALSE, T_TEXT,
   "summary report deck_name golden_state_hash golden_weights_hash output checkpoint restart inject"},

  /* the tools */
  {OPTS_TRAIN, PETSC_FALSE, T_INT, "train_steps train_batch"},
  {OPTS_TRAIN, PETSC_FALSE, T_TEXT, "train_load train_save"},
  {OPTS_BENCH, PETSC_FALSE, T_INT, "bench_its bench_reps bench_n bench_steps"},
};
const size_t opt_ndecl = sizeof opt_decl / sizeof *opt_decl;
