/* miniapp/io/runinfo.h: what makes a report one run of one clean build
 * (runinfo.c): the run's identity (a random id, its start, host and pid),
 * the machine's load average before and after it, and why the build cannot
 * give an official result (a modified source tree, a revision not known, an
 * embedded deck that is not the revision's committed one). */
#ifndef MINIAPP_RUNINFO_H
#define MINIAPP_RUNINFO_H

#include "report.h"

#include <petscsys.h>
#include <stdio.h>

/* At the start of the run, collective: rank 0 draws the id and reads the load. */
PetscErrorCode RunInfoBegin(MPI_Comm comm);
/* The report's run: block (rank 0 writes; the load after is read now). */
PetscErrorCode RunInfoWrite(MPI_Comm comm, FILE *f, PetscBool anonymize);
/* The report's run rules (docs/benchmark.md): official, official_why, modified_options, command_line, options.
 * deck is the -deck_name ("custom" when none). */
PetscErrorCode RunInfoWriteRules(MPI_Comm comm, FILE *f, const char *deck, const ReportVerdict *v);
/* Why this build's runs of deck are not official ("" when they may be). */
void           RunInfoBuildWhy(const char *deck, char *why, size_t len);
/* The report's build.deck_committed: true, false or null (no revision to compare with). */
const char    *RunInfoDeckCommitted(const char *deck);

#endif
