/* miniapp/io/report.h: the driver's input checks and output: one-line errors,
 * the options-file pre-check (optfiles.c), unused-option detection, the run
 * banner and the YAML summary and report (written through a unique temporary,
 * every write checked, then renamed; output paths are checked by the register of cli.h). */
#ifndef MINIAPP_REPORT_H
#define MINIAPP_REPORT_H

#include "coupling.h"

#include "cli.h" /* the options files read (optfiles.c) */
/* Run rules (runrules.c, docs/benchmark.md): official = the deck as its
 * file writes it, tunables aside; modified lists the options that differ. */
void           ReportSetCommandLine(int argc, char **argv);
const char    *ReportCommandLine(void);
PetscErrorCode ReportDeckRules(const char *deck, PetscBool *official, char *modified, size_t len);
PetscErrorCode ReportOptionsText(char **text); /* PetscFree it */
PetscErrorCode ReportCheckAtomicSeed(void);
PetscErrorCode ReportBanner(MPI_Comm comm, Coupled c);
/* The run's verdict, collected from the solver's and the coupled loop's checks. */
typedef struct {
  PetscReal mms_l2, mms_max; /* heat; negative when not applicable */
  PetscBool ok;
  char      why[2048];
  /* filled by ReportVerify */
  uint64_t  state_hash, weights_hash;
  char      golden_state[96], golden_weights[96];
  PetscReal repeat_mean, repeat_var; /* negative: not run */
  const char *repeat_skipped;        /* why it was not run (-repeat_check given); NULL otherwise */
  PetscInt  repeat_its_min, repeat_its_max;
} ReportVerdict;

typedef struct {
  char      path[PETSC_MAX_PATH_LEN], deck[256];
  char      golden_state[32], golden_weights[32];
  PetscInt  repeat;
  PetscBool anonymize; /* -report_anonymize: hashed host names */
} ReportOptions;
PetscErrorCode ReportSummary(MPI_Comm comm, Coupled c, const ReportVerdict *v, double seconds, const char *path);

/* The proxy-app report (-report FILE.yaml, also printed) and its checks
 * (verify.c): golden hashes (reproducible build) and the HPCG-style repeat check. */
PetscErrorCode ReportGetOptions(ReportOptions *o);
PetscErrorCode ReportVerify(Coupled c, const ReportOptions *o, ReportVerdict *v);
PetscErrorCode ReportWrite(MPI_Comm comm, Coupled c, const ReportOptions *o, const ReportVerdict *v, double seconds);

#endif
