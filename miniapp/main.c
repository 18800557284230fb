/* miniapp/main.c: the driver. Reads as its phases: set-up (options, banner),
 * run (time steps), verify (scenario checks -> VALID/INVALID), report (YAML
 * summary on stdout and, with -summary FILE, in a file written atomically).
 * Every file the run reads or writes is registered (cli.h: OutPathRegister*) and checked
 * before the run, so that no output can overwrite an input or another output.
 * Exit code: 0 VALID, 2 INVALID, 1 bad input or a failed run, 3 stopped by
 * SIGTERM/SIGUSR1/SIGXCPU after writing the -checkpoint (continue with
 * -restart); 128 + N stopped by signal N (checkpoint.c); docs/running.md
 * lists them all. */
#include "blasthreads.h"
#include "buildinfo.h"
#include "coupling.h"
#include "cli.h"
#include "report.h"
#include "spincount.h"
#include "vecred.h"

#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <unistd.h>


static const char help[] = "FPNA coupled mini-app: PETSc implicit PDE solver whose reductions obey a compile-time\n"
                           "atomic/deterministic/reproducible switch. Options (all via the PETSc options database,\n"
                           "e.g. -options_file inputs/<deck>.opts); docs/options.md explains them.\n\n";

typedef struct {
  PetscInt      threads;
  char          summary[PETSC_MAX_PATH_LEN];
  ReportOptions report;
  PetscBool help;
} Inputs;

static PetscErrorCode SetUpInputs(Inputs *in)
{
  PetscBool set;
  char      output[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  in->threads    = 0;
  in->summary[0] = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Mini-app driver", NULL);
  PetscCall(CliInt(PetscOptionsObject, "-threads",
                   "OpenMP threads per rank (0: OMP_NUM_THREADS or the runtime's default)", 0, 1024, NULL, &in->threads,
                   NULL));
  PetscCall(PetscOptionsString("-summary", "Also write the YAML summary to this file", NULL, in->summary, in->summary,
                               sizeof in->summary, &set));
  PetscOptionsEnd();
  PetscCall(PetscOptionsHasHelp(NULL, &in->help));
  if (in->threads > 0) omp_set_num_threads((int)in->threads);
  PetscCall(ReportCheckAtomicSeed());
  if (set) PetscCall(OutPathRegisterOutput("-summary", in->summary));
  PetscCall(ReportGetOptions(&in->report)); /* registers -report */
  /* -output is the coupled loop's; registered here so that it is checked with the others */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-output", output, sizeof output, &set));
  if (set) PetscCall(OutPathRegisterOutput("-output", output));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunCoupled(const Inputs *in, Coupled c, int *status)
{
  Solver        solver;
  ReportVerdict v;
  PetscBool     ok2;
  char          why2[1536];
  double        t0;
  int           sig;
  PetscInt      step;
  const char   *ckpt;

  PetscFunctionBegin;
  { /* -version: the versions, and no run (it ran the whole problem, then printed PETSc's banner after the summary) */
    PetscBool version = PETSC_FALSE;
    char      petsc[128];
    PetscCall(PetscOptionsHasName(NULL, NULL, "-version", &version));
    if (version && !in->help) {
      PetscCall(PetscGetVersion(petsc, sizeof petsc));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "miniapp %s (source revision %s): solver reduction %s, surrogate reduction %s; %s\n",
                            MINIAPP_VERSION, MINIAPP_REVISION, VecFPNACompiledStrategy(),
                            MINIAPP_SURROGATE_REDUCTION_NAME, petsc));
      *status = 0;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(CoupledSetFromOptions(c));
  if (in->help) {
    HelpFlush();
    *status = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* every module has registered its files: refuse an output that would destroy data, before any work */
  PetscCall(OutPathCheck(PETSC_COMM_WORLD));
  PetscCall(CoupledSetUp(c));
  PetscCall(OptStrictCheckUnused(PETSC_FALSE));
  PetscCall(ReportBanner(PETSC_COMM_WORLD, c));

  /* run */
  t0 = MPI_Wtime();
  PetscCall(CoupledRun(c));
  t0 = MPI_Wtime() - t0;
  PetscCall(CoupledGetStop(c, &sig, &step, &ckpt));
  if (sig) { /* a partial run: nothing to verify or summarize */
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, stderr,
                           "miniapp: %s after step %" PetscInt_FMT
                           ": checkpoint written to %s; continue with -restart %s (exit 3)\n",
                           CheckpointSignalName(sig), step, ckpt, ckpt));
    *status = 3;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* verify: the scenario's own checks on replica 0, then the replicas' promise */
  PetscCall(CoupledGetSolver(c, 0, &solver));
  PetscCall(SolverVerify(solver, &v.mms_l2, &v.mms_max, &v.ok, v.why, sizeof v.why));
  PetscCall(CoupledVerify(c, &ok2, why2, sizeof why2));
  if (why2[0]) {
    size_t n = strlen(v.why);
    PetscCall(PetscSNPrintf(v.why + n, sizeof v.why - n, "; %s", why2));
  }
  v.ok = (PetscBool)(v.ok && ok2);
  PetscCall(ReportVerify(c, &in->report, &v)); /* golden hashes, repeat check */
  PetscCall(OptStrictCheckUnused(PETSC_TRUE));

  /* report */
  PetscCall(ReportSummary(PETSC_COMM_WORLD, c, &v, t0, in->summary));
  if (in->report.path[0]) PetscCall(ReportWrite(PETSC_COMM_WORLD, c, &in->report, &v, t0));
  *status = v.ok ? 0 : 2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Set-up, run, verify, report; the coupled loop is destroyed on every path,
 * so that a failed run removes its partial output file. */
static PetscErrorCode Run(int *status)
{
  Inputs         in;
  Coupled        c = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(SetUpInputs(&in));
  PetscCall(CoupledCreate(PETSC_COMM_WORLD, &c));
  ierr = RunCoupled(&in, c, status);
  PetscCall(CoupledDestroy(&c));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* Right after PetscInitialize, before any option is judged. */
static void Started(void)
{
  HelpCaptureStdout();
  /* SIGPIPE (stdout closed early: miniapp ... | head), SIGHUP, SIGQUIT and
   * the other signals that stop a run: one line, the partial files removed,
   * exit 128 + the signal's number, or with -checkpoint on SIGTERM, SIGUSR1
   * and SIGXCPU a checkpoint and exit 3 (checkpoint.c) */
  CheckpointDefaultSignals();
  /* PETSc's vector ops call BLAS, whose own threads would fight the
   * OpenMP ones: one BLAS thread per rank unless the user says otherwise. */
  if (!getenv("OPENBLAS_NUM_THREADS")) (void)blas_threads_one();
}

/* After the run, before PETSc ends: with -checkpoint the exit code is decided (signals from here on change
 * nothing); what is left of -help's text, if a run stopped before printing it. */
static void AfterRun(void)
{
  PetscBool ck = PETSC_FALSE;
  if (!PetscInitializeCalled) return;
  (void)PetscOptionsHasName(NULL, NULL, "-checkpoint", &ck);
  if (ck) CheckpointIgnoreSignals();
  HelpFlush();
}

/* The summary on stdout is output too: a full disk behind a redirect is an error (one line, 0 returned). */
static int StdoutWritten(void)
{
  struct statvfs sv; /* stdio may have lost the failed write's errno */
  struct stat    st;
  int            pipe, full, e;

  errno = 0;
  if (fflush(stdout) != EOF && !ferror(stdout)) return 1;
  e    = errno;
  pipe = !fstat(STDOUT_FILENO, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
  full = !fstat(STDOUT_FILENO, &st) && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 7;
  if (!e) full = full || (!fstatvfs(STDOUT_FILENO, &sv) && sv.f_blocks > 0 && sv.f_bfree == 0);
  if (!e) e = pipe ? EPIPE : full ? ENOSPC : EIO;
  fprintf(stderr, "miniapp: error: writing standard output failed (%s)\n", strerror(e));
  return 0;
}

int main(int argc, char **argv)
{
  static const CliProgram prog   = {.name     = "miniapp",
                                    .help     = help,
                                    .groups   = OPTS_MINIAPP,
                                    .oom_hint = "the problem does not fit in this machine's memory; reduce "
                                                  "-da_grid_x/-da_grid_y, -replicas or -surrogate_layers, or use more "
                                                  "ranks",
                                    .started  = Started,
                                    .own_version = PETSC_TRUE};
  int            status = 1;
  PetscErrorCode ierr;

  CheckpointBlockSignals(); /* a scheduler's SIGTERM during start-up waits for -checkpoint (checkpoint.c) */
  spincount_default(argv, (void *)main); /* a short OpenMP spin on a shared machine (kernels/spincount.h) */
  ReportSetCommandLine(argc, argv); /* for the report, as given */
  HelpCapture(); /* -help: the mini-app's options printed first (help.c) */
  ierr = CliInitialize(&argc, &argv, &prog);
  if (!ierr) ierr = Run(&status);
  AfterRun();
  /* PETSc's signal handler is gone (CheckpointIgnoreSignals): nothing restores the default */
  if (CliFinalize(ierr)) status = 1;
  /* without -checkpoint PetscFinalize popped it: SIGPIPE's default would kill the check below */
  CheckpointDefaultSignals();
  if (!StdoutWritten()) status = 1;
  return status;
}
