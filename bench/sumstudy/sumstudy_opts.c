/* bench/sumstudy/sumstudy_opts.c: the command line of miniapp-sumstudy,
 * `-name value` like the rest of the project. Every bad value is one line on
 * stderr naming the option and the value, and exit 1 before any file is made. */
#include "sumstudy.h"

#include "reduce.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SS_NMAX 1000000000.0 /* 8 GB per array: the largest N accepted */

static const char usage[] =
  "usage: " SS_PROG " [options]   (docs/fpna-sums.md)\n"
  "  -n LIST            N values: integers and lo:hi:per_decade ranges, comma-separated\n"
  "                     (default 10:1e7:3, with -quick 10:1e5:3)\n"
  "  -dist LIST         uniform (on [0,1)), normal (standard); default both\n"
  "  -methods LIST      element, block, omp, omp-block, cuda-element, cuda-block,\n"
  "                     cuda-tree, cuda-cub, or all (default: all this build has)\n"
  "  -arrays K          arrays per N (default 100)\n"
  "  -orders K          combination orders per array (default 1)\n"
  "  -block B           block size of the block method (default 1024, the app's)\n"
  "  -reference R       S_ref: exact (correctly rounded, default), ordered (index\n"
  "                     order, left to right), deterministic (the app's fixed tree;\n"
  "                     with the default -block it isolates the block order)\n"
  "  -seed S            seed of the arrays and orders (default 1)\n"
  "  -threads T         OpenMP threads (default: OMP_NUM_THREADS)\n"
  "  -o FILE            summary CSV (default sumstudy.csv)\n"
  "  -samples FILE      also every V_s, one row per (method, dist, N, array, order)\n"
  "  -quick             N up to 1e5 only (seconds)\n";

int ss_fail(int rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, SS_PROG ": error: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return rc;
}

/* An integer in [lo, hi], also written as 1e7. */
static int parse_count(const char *s, double lo, double hi, double *v)
{
  char *end;
  if (!s || !*s) return 1;
  *v = strtod(s, &end);
  return *end || !isfinite(*v) || *v != floor(*v) || *v < lo || *v > hi;
}

static int cmp_size(const void *a, const void *b)
{
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

static int push_n(ss_opts *o, int *cap, double v)
{
  if (o->nn == *cap) {
    size_t *p = realloc(o->n, (size_t)(*cap = 2 * *cap + 16) * sizeof *p);
    if (!p) return 1;
    o->n = p;
  }
  o->n[o->nn++] = (size_t)v;
  return 0;
}

/* "10,100,1e3:1e5:4": items and log-spaced ranges lo:hi:per_decade (both
 * ends included, rounded to integers), sorted, duplicates dropped. */
static int parse_n(const char *list, ss_opts *o)
{
  char *copy = strdup(list), *save = NULL;
  int   cap = 0, bad = !copy || !*list;
  o->nn = 0;
  for (char *it = copy ? strtok_r(copy, ",", &save) : NULL; it && !bad; it = strtok_r(NULL, ",", &save)) {
    char  *c1 = strchr(it, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    double lo = 0, hi = 0, pd = 1;
    if (!c1) {
      if (parse_count(it, 1, SS_NMAX, &lo)) bad = ss_fail(1, "-n %s: %s is not an integer in 1..1e9", list, it);
      else if (push_n(o, &cap, lo)) bad = ss_fail(1, "-n: out of memory");
      continue;
    }
    if (!c2) {
      bad = ss_fail(1, "-n %s: the range %s needs lo:hi:per_decade", list, it);
      break;
    }
    *c1 = *c2 = '\0';
    if (parse_count(it, 1, SS_NMAX, &lo) || parse_count(c1 + 1, 1, SS_NMAX, &hi) || parse_count(c2 + 1, 1, 100, &pd) ||
        lo > hi)
      bad = ss_fail(1, "-n %s: a range is lo:hi:per_decade with 1 <= lo <= hi <= 1e9 and 1..100 points per decade",
                    list);
    for (int k = 0; !bad; k++) {
      double v = nearbyint(lo * pow(10.0, k / pd));
      if (v >= hi) v = hi;
      if (push_n(o, &cap, v)) bad = ss_fail(1, "-n: out of memory");
      if (v >= hi) break;
    }
  }
  free(copy);
  if (bad) return 1;
  if (o->nn == 0) return ss_fail(1, "-n %s: no N given", list);
  qsort(o->n, (size_t)o->nn, sizeof *o->n, cmp_size);
  int m = 0;
  for (int i = 0; i < o->nn; i++)
    if (m == 0 || o->n[i] != o->n[m - 1]) o->n[m++] = o->n[i];
  o->nn = m;
  return 0;
}

/* A comma list of names into flags[]; "all" (when allow_all) sets every one. */
static int parse_names(const char *opt, const char *list, const char *const *names, int count, int allow_all,
                       int *flags)
{
  char *copy = strdup(list ? list : ""), *save = NULL, known[256] = "";
  int   any  = 0, bad = !copy;
  for (int i = 0; i < count; i++)
    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", names[i]);
  memset(flags, 0, (size_t)count * sizeof *flags);
  for (char *it = copy ? strtok_r(copy, ",", &save) : NULL; it && !bad; it = strtok_r(NULL, ",", &save)) {
    int k = -1;
    for (int i = 0; i < count; i++)
      if (!strcmp(it, names[i])) k = i;
    if (allow_all && !strcmp(it, "all")) {
      for (int i = 0; i < count; i++) flags[i] = 1;
      any = 1;
    } else if (k < 0)
      bad = ss_fail(1, "%s %s: %s is unknown (one of %s%s)", opt, list, it, known, allow_all ? ", all" : "");
    else flags[k] = any = 1;
  }
  free(copy);
  if (!bad && !any) bad = ss_fail(1, "%s %s: no name given (one of %s)", opt, list, known);
  return bad;
}

int ss_parse_options(int argc, char **argv, ss_opts *o)
{
  const char *nlist = NULL;
  int         quick = 0;
  double      v;
  memset(o, 0, sizeof *o);
  o->arrays = 100, o->orders = 1, o->block = RED_BLOCK, o->ref = SS_REF_EXACT, o->seed = 1, o->out = "sumstudy.csv";
  for (int d = 0; d < SS_NDISTS; d++) o->dist[d] = 1;
  for (int m = 0; m < SS_NMETHODS; m++) o->method[m] = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-help") || !strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return 2;
    }
    if (!strcmp(a, "-quick")) {
      quick = 1;
      continue;
    }
    static const char *const takes[] = {"-n",         "-dist", "-methods", "-arrays", "-orders", "-block",
                                        "-reference", "-seed", "-threads", "-o",      "-samples"};
    int known = 0;
    for (size_t k = 0; k < sizeof takes / sizeof *takes; k++) known |= !strcmp(a, takes[k]);
    if (a[0] != '-') return ss_fail(1, "%s: not an option (options are -name value; -help lists them)", a);
    if (!known) return ss_fail(1, "%s: unknown option (-help lists them)", a);
    if (!val || !*val) return ss_fail(1, "%s: given without a value (-help says what it takes)", a);
    i++;
    if (!strcmp(a, "-n")) nlist = val;
    else if (!strcmp(a, "-dist")) {
      if (parse_names(a, val, ss_dist_names, SS_NDISTS, 0, o->dist)) return 1;
    } else if (!strcmp(a, "-methods")) {
      if (parse_names(a, val, ss_method_names, SS_NMETHODS, 1, o->method)) return 1;
      o->methods_given = 1;
    } else if (!strcmp(a, "-arrays")) {
      if (parse_count(val, 1, 100000, &v)) return ss_fail(1, "-arrays %s: must be an integer in 1..100000", val);
      o->arrays = (int)v;
    } else if (!strcmp(a, "-orders")) {
      if (parse_count(val, 1, 100000, &v)) return ss_fail(1, "-orders %s: must be an integer in 1..100000", val);
      o->orders = (int)v;
    } else if (!strcmp(a, "-block")) {
      if (parse_count(val, 1, 1 << 24, &v)) return ss_fail(1, "-block %s: must be an integer in 1..16777216", val);
      o->block = (size_t)v;
    } else if (!strcmp(a, "-threads")) {
      if (parse_count(val, 1, 1024, &v)) return ss_fail(1, "-threads %s: must be an integer in 1..1024", val);
      o->threads = (int)v;
    } else if (!strcmp(a, "-reference")) {
      int f[3];
      if (parse_names(a, val, ss_ref_names, 3, 0, f)) return 1;
      if (f[0] + f[1] + f[2] != 1) return ss_fail(1, "-reference %s: give one of exact, ordered, deterministic", val);
      o->ref = f[0] ? SS_REF_EXACT : f[1] ? SS_REF_ORDERED : SS_REF_DETERMINISTIC;
    } else if (!strcmp(a, "-seed")) {
      char *end;
      errno   = 0;
      o->seed = strtoull(val, &end, 0);
      if (val[0] == '-' || *end || errno) return ss_fail(1, "-seed %s: must be an integer in 0..2^64-1", val);
    } else if (!strcmp(a, "-o")) o->out = val;
    else if (!strcmp(a, "-samples")) o->samples = val;
  }
  if ((long long)o->arrays * o->orders > 10000000)
    return ss_fail(1, "-arrays %d -orders %d: at most 1e7 sums per N", o->arrays, o->orders);
  return parse_n(nlist ? nlist : quick ? "10:1e5:3" : "10:1e7:3", o);
}

void ss_free_options(ss_opts *o)
{
  free(o->n);
  o->n = NULL;
}
