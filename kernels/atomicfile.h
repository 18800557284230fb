/* kernels/atomicfile.h: replace a file so that nobody ever sees a partial
 * one, safely for concurrent writers of the same name. The data goes to a
 * unique temporary next to the target,
 *     <target>.partial-<pid>.<host>.XXXXXX      (mkstemp)
 * which afile_commit flushes, checks (every short write, ferror, fsync,
 * fclose), syncs and renames over the target; afile_discard removes it.
 * afile_begin first removes the partials of the same target left by dead
 * processes of this host (killed runs), recognized by that name pattern; a
 * process stopped by a signal that ends it and is no fault of the program
 * (SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGXCPU,
 * SIGVTALRM, SIGPROF) removes its own (the handler is installed only where
 * the signal had its default action) and ends with exit 128 + the signal's
 * number (by the signal itself, or for SIGQUIT and SIGXCPU, whose default
 * would dump core, by _exit).
 * Plain C (libc only, no PETSc): used by miniapp/ (summary, report, NetCDF,
 * miniapp-compare -o) and surrogate/ (checkpoints). Every function returns 0
 * or an errno value (or AFILE_ENOTREG); afile_strerror gives its text. */
#ifndef KERNELS_ATOMICFILE_H
#define KERNELS_ATOMICFILE_H

#include <stddef.h>
#include <stdio.h>

#define AFILE_PATH_MAX 4096
#define AFILE_ENOTREG  100001 /* the target exists and is not a regular file */
#define AFILE_EDANGLING 100002 /* the target is a symbolic link to no file */
#define AFILE_EPROGRAM  100003 /* the target is a program: executable, or an ELF or #! file */
#define AFILE_ESTREAM \
  100004 /* the target is this process's standard input, output or error (a redirection, /dev/stdout) */
#define AFILE_EPROTECTED 100005 /* the target is write-protected: a regular file without any write permission bit */

typedef struct {
  char  target[AFILE_PATH_MAX], tmp[AFILE_PATH_MAX];
  FILE *fp; /* the temporary, open for writing; NULL when begun with stream = 0 */
  int   active;
} afile;

/* Create the temporary for target. A target that is a symbolic link is
 * written through: the file it names is replaced and the link kept (a link
 * to no file is refused). A program (a file with an execute bit, an ELF
 * binary, a #! script) is never replaced: no output of a run is one. Nor is
 * the file this process's standard input, output or error is redirected to
 * (named as itself or as /dev/stdout, /dev/fd/1, ...): the stream's content
 * would be lost with the old file. Nor is a write-protected file (no write
 * bit for anyone, as chmod a-w leaves it): renaming over it needs only the
 * directory's permission, and root passes every permission check, so its
 * mode is the only sign that someone meant to keep it.
 * stream = 1: f->fp is open for writing;
 * stream = 0: the file exists, empty and closed, for a library that opens it
 * by name (NetCDF: nc_create(f->tmp, NC_CLOBBER, ...)). */
int afile_begin(afile *f, const char *target, int stream);
/* Flush, check, sync and close the temporary, then rename it over the
 * target. On failure the temporary is removed and the target is untouched.
 * An existing target that is not a regular file is never replaced. */
int afile_commit(afile *f);
/* f (begun with stream = 0, its library's file closed) stays the temporary
 * being written; a copy of what it holds now replaces the target, as
 * afile_commit does. A run that commits its records so far this way and is
 * then killed leaves them under the target's name. */
int afile_commit_copy(afile *f);
/* Install the clean-up handler now (else it comes with the first
 * temporary); prog != NULL: the handler first prints one line,
 * "<prog>: stopped by SIGxxx: ...; exit N". A signal somebody else handles
 * keeps its handler: call it again after such a handler is removed. */
void afile_handle_signals(const char *prog);
/* Close and remove the temporary (any state; a no-op when not begun). */
void afile_discard(afile *f);
/* Remove "<target>.partial-<pid>[.<this host>.XXXXXX]" files whose process
 * no longer exists; returns how many were removed. */
int afile_remove_stale(const char *target);
/* err, or ENOSPC when the file system holding path has no free block left:
 * libraries (HDF5, stdio after a lost errno) often report a full disk as
 * something else ("HDF error", "Permission denied", EIO). */
int afile_diagnose(const char *path, int err);
const char *afile_strerror(int err);

#endif
