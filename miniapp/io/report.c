/* miniapp/io/report.c: input checks that give one clear line, and the run's
 * banner, YAML summary and proxy-app report. Output files are written
 * through kernels/atomicfile.h (unique temporary, every write checked,
 * renamed on success), so a failed run or a full disk never leaves a
 * complete-looking file behind. (The options-file pre-check is optfiles.c.) */
#include "report.h"
#include "stream.h"
#include "machine.h"
#include "runinfo.h"
#include "cli.h"
#include "atomicfile.h"
#include "buildinfo.h"
#include "vecred.h"
#include "reduce.h"
#include "yamlfmt.h"

#include <ctype.h>
#include <sys/resource.h>
#include <time.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>


PetscErrorCode ReportCheckAtomicSeed(void)
{
  PetscInt seed = 0;

  PetscFunctionBegin;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Reductions", NULL);
  PetscCall(CliInt(PetscOptionsObject, "-atomic_order_seed",
                   "Atomic strategy: 0 = real atomics (completion order), N > 0 = replay a pseudo-random combination "
                   "order drawn from N", 0, PETSC_MAX_INT, NULL, &seed, NULL));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportBanner(MPI_Comm comm, Coupled c)
{
  PetscMPIInt size;
  const char *sc;
  PetscInt    steps;
  Solver      s;

  PetscFunctionBegin;
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(SolverGetScenario(s, &sc));
  PetscCall(SolverGetStep(s, NULL, &steps, NULL, NULL));
  PetscCall(PetscPrintf(comm,
                        "# FPNA mini-app %s | solver reduction: %s | surrogate reduction: %s | ranks %d x threads %d | "
                        "scenario %s, %" PetscInt_FMT " steps\n",
                        MINIAPP_VERSION, VecFPNACompiledStrategy(), MINIAPP_SURROGATE_REDUCTION_NAME, size,
                        omp_get_max_threads(), sc, steps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteSummary(MPI_Comm comm, FILE *f, Coupled c, const ReportVerdict *v, double seconds,
                                   const ReportOptions *o, double triad)
{
  PetscMPIInt       size;
  Solver            s;
  red_atomic_state *ord;

  PetscFunctionBegin;
  (void)o;
  (void)triad;
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCall(SolverGetAtomicOrder(s, &ord)); /* replica 0's: seed -atomic_order_seed */
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscFPrintf(comm, f, "miniapp_version: %s\nsolver_reduction: %s\nsurrogate_reduction: %s\n",
                         MINIAPP_VERSION, VecFPNACompiledStrategy(), MINIAPP_SURROGATE_REDUCTION_NAME));
  PetscCall(PetscFPrintf(comm, f, "atomic_order_seed: %llu\nmpi_ranks: %d\nomp_threads: %d\n",
                         (unsigned long long)ord->seed, size, omp_get_max_threads()));
  PetscCall(SolverWriteSummary(s, f));
  PetscCall(PetscFPrintf(comm, f, "reduction_calls: %lld\n", (long long)VecFPNAGetReductionCount()));
  PetscCall(CoupledWriteSummary(c, f));
  if (!(v->mms_l2 < 0))
    PetscCall(PetscFPrintf(comm, f, "mms_error_l2: %s\nmms_error_max: %s\n", yaml_num("%.6e", (double)v->mms_l2),
                           yaml_num("%.6e", (double)v->mms_max)));
  {
    CoupledTimes t;
    PetscCall(CoupledGetTimes(c, &t)); /* collective: max over ranks */
    /* run_seconds: the whole coupled run (solves, surrogate, observation,
     * output); solve_seconds: the Krylov solves that advance the run */
    /* hash from ReportVerify */
    PetscCall(PetscFPrintf(comm, f, "state_hash: \"0x%016llx\"\nrun_seconds: %s\nsolve_seconds: %s\n",
                           (unsigned long long)v->state_hash, yaml_num("%.6f", seconds), yaml_num("%.6f", t.solve)));
  }
  PetscCall(PetscFPrintf(comm, f, "verification_detail: %s\nverification: %s\n", yaml_str(v->why),
                         v->ok ? "VALID" : "INVALID"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Render fn once on rank 0 (with the seal line after it where seal is set),
 * print it on stdout, then write it to path through a unique temporary that
 * is renamed into place only when every byte was written. o and triad: the
 * report's options and its STREAM triad (the summary has neither). */
typedef PetscErrorCode (*YAMLWriter)(MPI_Comm, FILE *, Coupled, const ReportVerdict *, double, const ReportOptions *,
                                     double);

static PetscErrorCode WriteBoth(MPI_Comm comm, YAMLWriter fn, Coupled c, const ReportVerdict *v, double seconds,
                                const ReportOptions *o, double triad, PetscBool seal, const char *option,
                                const char *path)
{
  PetscMPIInt    rank;
  afile          af;
  char          *text = NULL, line[40] = "";
  size_t         n    = 0;
  FILE          *ms   = NULL;
  int            err  = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0 && !(ms = open_memstream(&text, &n))) err = errno;
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_MEM, "%s: cannot render the YAML (%s)", option, strerror(err));
  ierr = fn(comm, ms, c, v, seconds, o, triad);
  if (rank == 0) {
    if (fclose(ms) && !ierr) err = errno ? errno : ENOMEM;
    if (!ierr && !err && seal) yaml_seal_line(text, n, line);
    if (!ierr && !err) {
      fwrite(text, 1, n, PETSC_STDOUT);
      fputs(line, PETSC_STDOUT);
      fflush(PETSC_STDOUT);
    }
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (ierr || err) free(text);
  PetscCall(ierr);
  PetscCheck(!err, comm, PETSC_ERR_MEM, "%s: cannot render the YAML (%s)", option, strerror(err));
  if (path && path[0]) {
    if (rank == 0) err = afile_begin(&af, path, 1);
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
    if (err) free(text);
    PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "%s %s: cannot create a file there (%s)", option, path,
               afile_strerror(err));
    if (rank == 0) { /* afile_commit checks every write */
      fwrite(text, 1, n, af.fp);
      fputs(line, af.fp);
      err = afile_commit(&af);
    }
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  }
  free(text);
  PetscCheck(!err, comm, PETSC_ERR_FILE_WRITE, "%s %s: writing failed (%s)", option, path, afile_strerror(err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportSummary(MPI_Comm comm, Coupled c, const ReportVerdict *v, double seconds, const char *path)
{
  PetscFunctionBegin;
  PetscCall(WriteBoth(comm, WriteSummary, c, v, seconds, NULL, NAN, PETSC_FALSE, "-summary", path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the proxy-app report (-report) -------------------------------------- */

PetscErrorCode ReportGetOptions(ReportOptions *o)
{
  PetscBool set, gset[2];

  PetscFunctionBegin;
  PetscCall(RunInfoBegin(PETSC_COMM_WORLD)); /* the run's start: its id, time and the load before it */
  PetscCall(PetscMemzero(o, sizeof *o));
  o->repeat = 5;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Proxy-app report and verification", NULL);
  PetscCall(PetscOptionsString("-report",
                               "Write the benchmark report (YAML) to this file (auto: report-<deck>-<UTC date and "
                               "time>-<host>-<pid>.yaml, unique); it is also printed",
                               NULL, o->path, o->path, sizeof o->path, &set));
  PetscCall(PetscOptionsString("-deck_name", "Name of the benchmark deck (for the report)", NULL, o->deck, o->deck,
                               sizeof o->deck, NULL));
  PetscCall(
    PetscOptionsString("-golden_state_hash",
                       "Expected state_hash (reproducible build): any machine must match it; none clears a deck's",
                       NULL, o->golden_state, o->golden_state, sizeof o->golden_state, &gset[0]));
  PetscCall(PetscOptionsString("-golden_weights_hash",
                               "Expected weights_hash (reproducible build); none clears a deck's", NULL,
                               o->golden_weights, o->golden_weights, sizeof o->golden_weights, &gset[1]));
  PetscCall(PetscOptionsInt("-repeat_check",
                            "Repeat the last step's solve N times and report the residual variance (0: off)", NULL,
                            o->repeat, &o->repeat, NULL));
  PetscCall(PetscOptionsBool("-report_anonymize",
                             "Name the nodes in the report (and its auto file name) by a hash of their host names, "
                             "host-<12 hex digits>: the same machine gets the same name",
                             NULL, o->anonymize, &o->anonymize, NULL));
  PetscOptionsEnd();
  PetscCheck(o->repeat == 0 || (o->repeat >= 2 && o->repeat <= 64), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-repeat_check %" PetscInt_FMT ": must be 0 or in [2, 64]", o->repeat);
  for (int k = 0; k < 2; k++) {
    const char *h = k ? o->golden_weights : o->golden_state;
    size_t      n = strlen(h), i = (n > 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) ? 2 : 0;
    /* given without a value it would silently skip the check */
    PetscCheck(n || !gset[k ? 1 : 0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "%s: given without a value (needs 16 hex digits, or none)",
               k ? "-golden_weights_hash" : "-golden_state_hash");
    if (!strcmp(h, "none")) { /* said, not left out: clears a deck's hash (another grid, scripts/scaling.sh weak) */
      (k ? o->golden_weights : o->golden_state)[0] = 0;
      continue;
    }
    if (!n) continue;
    PetscCheck(n - i == 16 && strspn(h + i, "0123456789abcdefABCDEF") == 16, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "%s %s: must be 16 hex digits (e.g. 0x0123456789abcdef) or none",
               k ? "-golden_weights_hash" : "-golden_state_hash", h);
  }
  if (set && !strcmp(o->path, "auto")) { /* a new name per run, as HPCG's output files: report-<deck>-<UTC>.yaml */
    char      stamp[32], deck[64];
    time_t    now = time(NULL);
    struct tm tm;
    PetscCallMPI(MPI_Bcast(&now, sizeof now, MPI_BYTE, 0, PETSC_COMM_WORLD)); /* one name on every rank */
    (void)strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    PetscCall(PetscStrncpy(deck, o->deck[0] ? o->deck : "custom", sizeof deck));
    for (char *q = deck; *q; q++)
      if (!isalnum((unsigned char)*q) && *q != '-' && *q != '_' && *q != '.') *q = '_';
    { /* unique among simultaneous runs: rank 0's host and pid, and a counter past any existing file */
      char      host[64] = "host";
      long long pid      = (long long)getpid();
      int       k        = 0;
      if (gethostname(host, sizeof host)) PetscCall(PetscStrncpy(host, "host", sizeof host));
      host[sizeof host - 1] = 0;
      if (o->anonymize) {
        char hb[64];
        PetscCall(PetscStrncpy(host, MachineHostName(host, o->anonymize, hb, sizeof hb), sizeof host));
      }
      for (char *q = host; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '-' && *q != '.') *q = '_';
      PetscCallMPI(MPI_Bcast(host, sizeof host, MPI_CHAR, 0, PETSC_COMM_WORLD));
      PetscCallMPI(MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, PETSC_COMM_WORLD));
      do {
        if (k)
          PetscCall(PetscSNPrintf(o->path, sizeof o->path, "report-%s-%s-%s-%lld-%d.yaml", deck, stamp, host, pid, k));
        else PetscCall(PetscSNPrintf(o->path, sizeof o->path, "report-%s-%s-%s-%lld.yaml", deck, stamp, host, pid));
        k++;
      } while (!access(o->path, F_OK) && k < 1000);
      PetscCallMPI(MPI_Bcast(o->path, sizeof o->path, MPI_CHAR, 0, PETSC_COMM_WORLD));
    }
  }
  if (set) PetscCall(OutPathRegisterOutput("-report", o->path)); /* checked by main() with the others */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's rates: 8 bytes per unknown per vector pass of the run's Krylov method (SolverGetVectorPasses: 14
 * for the fused CG, 21 for PETSc's CG), null where no count is kept. */
static PetscErrorCode WriteSolverRates(MPI_Comm comm, FILE *f, Coupled c, Solver s, PetscInt its, double tpi,
                                       double unknowns)
{
  PetscInt   passes;
  char       method[64];
  PetscBool  dev;
  PetscInt64 copies;

  PetscFunctionBegin;
  PetscCall(SolverUsesDevice(s, &dev));
  PetscCall(CoupledGetLoopCopies(c, &copies));
  PetscCall(SolverGetVectorPasses(s, &passes, method, sizeof method));
  double bpu = passes > 0 ? 8.0 * passes : NAN, gbs = tpi > 0 ? bpu * unknowns / tpi / 1e9 : NAN; /* false for NaN */
  PetscCall(PetscFPrintf(comm, f,
                         "solver:\n  device: %s\n  loop_vector_copies: %lld\n  iterations_total: %" PetscInt_FMT
                         "\n  seconds_per_iteration: %s\n  krylov_method: %s\n  bytes_per_unknown_iteration: %s\n"
                         "  achieved_gbs: %s\n",
                         dev ? "cuda" : "cpu", (long long)copies, its, yaml_num("%.6e", tpi), yaml_str(method),
                         yaml_num("%.0f", bpu), yaml_num("%.3f", gbs)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteVerification(MPI_Comm comm, FILE *f, const ReportVerdict *v, PetscBool net)
{
  PetscFunctionBegin;
  PetscCall(PetscFPrintf(comm, f, "verification:\n"));
  if (!(v->mms_l2 < 0)) PetscCall(PetscFPrintf(comm, f, "  mms_error_l2: %s\n", yaml_num("%.6e", (double)v->mms_l2)));
  PetscCall(PetscFPrintf(comm, f, "  detail: %s\n  state_hash: \"0x%016llx\"\n  golden_state_hash: %s\n",
                         yaml_str(v->why), (unsigned long long)v->state_hash, yaml_str(v->golden_state)));
  if (net)
    PetscCall(PetscFPrintf(comm, f, "  weights_hash: \"0x%016llx\"\n  golden_weights_hash: %s\n",
                           (unsigned long long)v->weights_hash, yaml_str(v->golden_weights)));
  if (v->repeat_skipped) PetscCall(PetscFPrintf(comm, f, "  repeat_check: %s\n", yaml_str(v->repeat_skipped)));
  if (!(v->repeat_mean < 0))
    PetscCall(PetscFPrintf(comm, f,
                           "  repeat_residual_mean: %s\n  repeat_residual_variance: %s\n  repeat_iterations: "
                           "[%" PetscInt_FMT ", %" PetscInt_FMT "]\n",
                           yaml_num("%.6e", (double)v->repeat_mean), yaml_num("%.6e", (double)v->repeat_var),
                           v->repeat_its_min, v->repeat_its_max));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* triad: GB/s of the STREAM triad measured at the report */
static PetscErrorCode WriteReport(MPI_Comm comm, FILE *f, Coupled c, const ReportVerdict *v, double seconds,
                                  const ReportOptions *o, double triad)
{
  CoupledTimes t;
  PetscMPIInt  size;
  PetscInt     its, its_none, its_fischer, nrep, npts, steps, M, N, dof;
  const char  *mode, *sc;
  Solver       s;
  Surrogate    net;
  char         petscver[64];
  MachineInfo  mi;
  DM           da;
  double       work, fom, ups, tpi;
  const char  *deck = o->deck[0] ? o->deck : "custom";

  PetscFunctionBegin;
  PetscCall(CoupledGetTimes(c, &t));
  PetscCall(CoupledGetIterations(c, &its, &its_none, &its_fischer));
  PetscCall(CoupledGetInfo(c, &mode, &nrep, &npts));
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCall(CoupledGetSurrogate(c, 0, &net));
  PetscCall(SolverGetScenario(s, &sc));
  PetscCall(SolverGetStep(s, &steps, NULL, NULL, NULL));
  PetscCall(SolverGetDM(s, &da));
  PetscCall(DMDAGetInfo(da, NULL, &M, &N, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MachineGather(comm, o->anonymize, &mi));
  PetscCall(PetscGetVersion(petscver, sizeof petscver));
  /* rates of this process's work: after a restart, the steps and iterations it ran (the counts below are the
   * whole run's); none ran (a restart at the last step): null, not 0 */
  work = t.solve + t.features + t.predict + t.train; /* the coupled loop's own work */
  ups  = (double)npts * t.steps * nrep;
  fom  = work > 0 && t.steps > 0 ? ups / work / 1e6 : NAN;
  tpi  = t.its > 0 ? t.solve / t.its : NAN;

  /* a document of its own: stdout (banner comment, summary, report) is a YAML stream */
  PetscCall(PetscFPrintf(comm, f, "---\n# FPNA mini-app benchmark report (docs/running.md explains every key)\n"));
  PetscCall(PetscFPrintf(comm, f, "report_version: 1\ndeck: %s\n", yaml_str(deck)));
  PetscCall(RunInfoWriteRules(comm, f, deck, v));
  PetscCall(PetscFPrintf(comm, f, "date: %s\nfile: %s\n", yaml_str(mi.date), yaml_str(o->path)));
  PetscCall(RunInfoWrite(comm, f, o->anonymize));
  PetscCall(PetscFPrintf(comm, f,
                         "machine:\n  hostname: %s\n  cpu: %s\n  ranks: %d\n  ranks_per_node: %d\n  threads: %d\n  "
                         "mpi_library: %s\n",
                         yaml_str(mi.host), yaml_str(mi.cpu), size, mi.pernode, omp_get_max_threads(),
                         yaml_str(mi.mpilib)));
  PetscCall(PetscFPrintf(comm, f, "  peak_memory_mib_per_rank: {max: %s, min: %s}\n", yaml_num("%.1f", mi.mem[1]),
                         yaml_num("%.1f", -mi.mem[0])));
  PetscCall(MachineWriteFacts(comm, f, o->anonymize));
  PetscCall(MachineWriteDevice(comm, f, net, size));
  PetscCall(PetscFPrintf(comm, f, "  stream_triad_gbs: %s\n", yaml_num("%.1f", triad)));
  PetscCall(
    PetscFPrintf(comm, f,
                 "build:\n  license: BSD-2-Clause\n  version: %s\n  revision: %s\n  compiler: %s\n  flags: %s\n",
                 MINIAPP_VERSION, yaml_str(MINIAPP_REVISION), yaml_str(MINIAPP_C_COMPILER), yaml_str(MINIAPP_C_FLAGS)));
  PetscCall(PetscFPrintf(comm, f, "  solver_reduction: %s\n  surrogate_reduction: %s\n  cuda: %s\n  petsc: %s\n",
                         VecFPNACompiledStrategy(), MINIAPP_SURROGATE_REDUCTION_NAME,
                         SurrogateCUDAAvailable() >= 0 ? "built" : "not built", yaml_str(petscver)));
  PetscCall(PetscFPrintf(comm, f, "  deck_committed: %s\n", RunInfoDeckCommitted(deck)));
  PetscCall(PetscFPrintf(comm, f,
                         "problem:\n  scenario: %s\n  grid: [%" PetscInt_FMT ", %" PetscInt_FMT
                         "]\n  components: %" PetscInt_FMT "\n",
                         sc, M, N, dof));
  PetscCall(PetscFPrintf(comm, f, "  steps: %" PetscInt_FMT "\n  replicas: %" PetscInt_FMT "\n  coupling: %s\n", steps,
                         nrep, mode));
  {
    double mh, md;
    PetscCall(CoupledGetMemoryBound(c, &mh, &md));
    /* counted before the set-up allocated: the vectors and the batch (memory.c) */
    PetscCall(PetscFPrintf(comm, f, "  memory_at_least_gib_per_rank: {host: %s, device: %s}\n",
                           yaml_num("%.3f", mh / 1073741824.0), yaml_num("%.3f", md / 1073741824.0)));
  }
  PetscCall(WriteSolverRates(comm, f, c, s, its, tpi, (double)npts * dof));
  if (net) { /* a train step costs about 6 flops per weight and sample (forward 2, backward 4), inference 2 */
    PetscInt nw;
    /* nothing timed: .nan, not 0 */
    double tps = t.train > 0 ? t.train_samples / t.train : NAN,
           ips = t.predict > 0 ? t.predict_points / t.predict : NAN;
    PetscCall(SurrogateGetNumWeights(net, &nw));
    PetscCall(PetscFPrintf(comm, f,
                           "surrogate:\n  weights: %" PetscInt_FMT "\n  epochs: %" PetscInt_FMT
                           "\n  train_samples_per_s: %s\n  inference_points_per_s: %s\n",
                           nw, t.epochs, yaml_num("%.6e", tps), yaml_num("%.6e", ips)));
    PetscCall(PetscFPrintf(comm, f, "  train_gflops: %s\n  inference_gflops: %s\n",
                           yaml_num("%.3f", 6.0 * nw * tps / 1e9), yaml_num("%.3f", 2.0 * nw * ips / 1e9)));
  }
  PetscCall(PetscFPrintf(comm, f, "coupling:\n  mode: %s\n  ksp_iterations: %" PetscInt_FMT "\n", mode, its / nrep));
  if (its_none >= 0)
    PetscCall(PetscFPrintf(comm, f,
                           "  ksp_iterations_none: %" PetscInt_FMT "\n  ksp_iterations_fischer: %" PetscInt_FMT
                           "\n  iterations_saved_vs_none: %" PetscInt_FMT "\n",
                           its_none, its_fischer, its_none - its / nrep));
  PetscCall(CoupledWriteReportCoupling(c, f));
  PetscCall(PetscFPrintf(comm, f,
                         "timing: # seconds, max over ranks; PETSc log events CplSolve, CplFeatures, CplPredict, "
                         "CplTrain, CplMetrics, CplOutput\n"));
  PetscCall(PetscFPrintf(comm, f, "  total: %s\n  solve: %s\n  features: %s\n  predict: %s\n  train: %s\n",
                         yaml_num("%.6f", seconds), yaml_num("%.6f", t.solve), yaml_num("%.6f", t.features),
                         yaml_num("%.6f", t.predict), yaml_num("%.6f", t.train)));
  PetscCall(PetscFPrintf(comm, f, "  metrics: %s\n  output: %s\n  baselines: %s\n  time_per_step: %s\n",
                         yaml_num("%.6f", t.metrics), yaml_num("%.6f", t.output), yaml_num("%.6f", t.baselines),
                         yaml_num("%.6e", t.steps > 0 ? work / t.steps : NAN)));
  /* what the rates divide by */
  PetscCall(
    PetscFPrintf(comm, f, "  timed_steps: %" PetscInt_FMT "\n  timed_iterations: %" PetscInt_FMT "\n", t.steps, t.its));
  PetscCall(WriteVerification(comm, f, v, (PetscBool)(net != NULL)));
  PetscCall(PetscFPrintf(comm, f,
                         "fom:\n  value: %s\n  unit: \"Mpoint-steps/s\"\n  definition: \"grid points x time steps x "
                         "replicas / seconds of solve + features + predict + train / 1e6\"\n",
                         yaml_num("%.6f", fom)));
  PetscCall(PetscFPrintf(comm, f, "verdict: %s\n", v->ok ? "VALID" : "INVALID"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportWrite(MPI_Comm comm, Coupled c, const ReportOptions *o, const ReportVerdict *v, double seconds)
{
  Solver   s;
  Vec      u;
  PetscInt n;
  double   triad;

  PetscFunctionBegin;
  /* the triad on the run's ranks and threads at once (their sum), over arrays of the run's local vector
   * length but at least 2^22 entries: a sample is then one sweep, not thousands of short parallel loops */
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCall(SolverGetState(s, &u));
  PetscCall(VecGetLocalSize(u, &n));
  triad = stream_triad_gbs(PetscMax((size_t)n, (size_t)1 << 22), 5);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &triad, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscCall(WriteBoth(comm, WriteReport, c, v, seconds, o, triad, PETSC_TRUE, "-report", o->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}
