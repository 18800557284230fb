/* kernels/pathcheck.c: registry of a run's input and output paths and the
 * check that no output destroys data (see pathcheck.h). libc only. */
#define _DEFAULT_SOURCE
#include "pathcheck.h"
#include "atomicfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  path_kind kind;
  char     *option, *path;
} entry;

struct pathset {
  entry *e;
  int    n, cap;
};

pathset *pathset_create(void) { return calloc(1, sizeof(pathset)); }

void pathset_destroy(pathset **s)
{
  if (!s || !*s) return;
  for (int i = 0; i < (*s)->n; i++) free((*s)->e[i].option), free((*s)->e[i].path);
  free((*s)->e), free(*s);
  *s = NULL;
}

int pathset_has(const pathset *s, path_kind kind, const char *path)
{
  for (int i = 0; i < s->n; i++)
    if (s->e[i].kind == kind && !strcmp(s->e[i].path, path)) return 1;
  return 0;
}

int pathset_add(pathset *s, path_kind kind, const char *option, const char *path)
{
  for (int i = 0; i < s->n; i++) /* the same registration twice is one */
    if (s->e[i].kind == kind && !strcmp(s->e[i].option, option) && !strcmp(s->e[i].path, path)) return 0;
  if (s->n == s->cap) {
    int    cap = s->cap ? 2 * s->cap : 16;
    entry *e   = realloc(s->e, (size_t)cap * sizeof *e);
    if (!e) return ENOMEM;
    s->e = e, s->cap = cap;
  }
  entry *e = &s->e[s->n];
  e->kind = kind, e->option = strdup(option), e->path = strdup(path);
  if (!e->option || !e->path) {
    free(e->option), free(e->path);
    return ENOMEM;
  }
  s->n++;
  return 0;
}

/* Where path is or would be: its real path when it exists, else the real
 * path of its directory plus its last component, else the text as given. */
typedef struct {
  char        canon[PATH_MAX + NAME_MAX + 2];
  struct stat st;
  int         exists;
} where;

static void locate(const char *path, where *w)
{
  char        dir[PATH_MAX], real[PATH_MAX];
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;

  w->exists = !stat(path, &w->st);
  if (realpath(path, real)) {
    snprintf(w->canon, sizeof w->canon, "%s", real);
    return;
  }
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  if (base[0] && strcmp(base, ".") && strcmp(base, "..") && realpath(dir, real))
    snprintf(w->canon, sizeof w->canon, "%s/%s", strcmp(real, "/") ? real : "", base);
  else snprintf(w->canon, sizeof w->canon, "%s", path);
}

static int same(const where *a, const where *b)
{
  if (a->exists && b->exists && a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino) return 1;
  return !strcmp(a->canon, b->canon);
}

static const char *type_name(mode_t m)
{
  return S_ISCHR(m)  ? "a character device"
       : S_ISBLK(m)  ? "a block device"
       : S_ISFIFO(m) ? "a FIFO"
       : S_ISSOCK(m) ? "a socket"
                     : "not a regular file";
}

int pathset_check(const pathset *s, char *msg, size_t len)
{
  where *w = calloc((size_t)s->n + 1, sizeof *w);
  int    bad = 0;

  if (!w) return snprintf(msg, len, "out of memory checking the output paths"), ENOMEM;
  for (int i = 0; i < s->n; i++) locate(s->e[i].path, &w[i]);
  for (int i = 0; i < s->n && !bad; i++) {
    const entry *o = &s->e[i];
    if (o->kind != PATH_OUTPUT) continue;
    if (!o->path[0]) {
      snprintf(msg, len, "%s: needs a file name (got an empty string)", o->option);
      bad = EINVAL;
      break;
    }
    for (int j = 0; j < s->n && !bad; j++) {
      const entry *x = &s->e[j];
      if (j == i || (x->kind == PATH_OUTPUT && j > i) || !x->path[0] || !same(&w[i], &w[j])) continue;
      if (x->kind == PATH_INPUT)
        snprintf(msg, len, "%s %s: is the input %s %s; refusing to overwrite an input", o->option, o->path, x->option,
                 x->path);
      else
        snprintf(msg, len, "%s %s and %s %s name the same file; give each output its own name", x->option, x->path,
                 o->option, o->path);
      bad = EEXIST;
    }
    if (bad) break;
    if (w[i].exists && S_ISDIR(w[i].st.st_mode)) {
      snprintf(msg, len, "%s %s: is a directory; name a file", o->option, o->path);
      bad = EISDIR;
    } else if (w[i].exists && !S_ISREG(w[i].st.st_mode)) {
      snprintf(msg, len, "%s %s: is %s; refusing to replace it with a regular file", o->option, o->path,
               type_name(w[i].st.st_mode));
      bad = AFILE_ENOTREG;
    } else { /* the directory must take a new file: make (and drop) the real temporary */
      afile probe;
      int   e = afile_begin(&probe, o->path, 0);
      if (e == AFILE_EPROGRAM || e == AFILE_EDANGLING || e == AFILE_ESTREAM || e == AFILE_EPROTECTED) {
        /* what the path is, not where */
        snprintf(msg, len, "%s %s: %s", o->option, o->path, afile_strerror(e));
        bad = e;
      } else if (e) {
        snprintf(msg, len, "%s %s: cannot create a file there (%s)", o->option, o->path, afile_strerror(e));
        bad = e;
      } else afile_discard(&probe);
    }
  }
  free(w);
  if (!bad && len) msg[0] = 0;
  return bad;
}
