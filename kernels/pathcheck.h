/* kernels/pathcheck.h: the files one run reads and writes, each named with
 * the option that names it, and the one check that no output can destroy
 * data: every output path must be non-empty, must not be (or resolve to) an
 * input or another output of the run (compared by real path -- ./a.nc and
 * a.nc match, also for files that do not exist yet -- and by device and
 * inode, so hard links match too), must not be an existing directory or
 * other non-regular file (/dev/full stays a device), must not be a program
 * (an executable, ELF or #! file), a write-protected file (no write bit) or a
 * symbolic link to no file, and its directory must take a new file (a link
 * is written through: atomicfile.h). Plain C (libc only): the driver's PETSc
 * front-end is miniapp/cli/outpath.c; miniapp-compare and surrogate-train
 * use this directly. */
#ifndef KERNELS_PATHCHECK_H
#define KERNELS_PATHCHECK_H

#include <stddef.h>

typedef enum { PATH_INPUT, PATH_OUTPUT } path_kind;

typedef struct pathset pathset;

pathset *pathset_create(void);
void     pathset_destroy(pathset **s);
/* Record that option (e.g. "-summary") names path. Returns 0 or ENOMEM. */
int      pathset_add(pathset *s, path_kind kind, const char *option, const char *path);
/* Is this exact path already recorded (as given)? For callers that walk
 * nested files. */
int      pathset_has(const pathset *s, path_kind kind, const char *path);
/* 0 when every output is safe to write; otherwise nonzero and msg holds one
 * line naming the option(s) and path(s), e.g.
 *   "-report deck.opts: is also the input -options_file deck.opts; refusing to overwrite an input" */
int      pathset_check(const pathset *s, char *msg, size_t len);

#endif
