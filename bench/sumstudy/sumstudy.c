/* bench/sumstudy/sumstudy.c: miniapp-sumstudy, the FPNA sum study. For each
 * distribution and N it draws `arrays` seeded arrays, sums each in `orders`
 * combination orders per method, and records V_s = 1 - |S / S_ref|; it writes
 * the distribution of |V_s| per (method, distribution, N) as CSV and prints
 * the fit max|V_s| = beta N^alpha. Reads as phases: options, checks, sweep,
 * output, fits. Not a test and not a timing benchmark (docs/fpna-sums.md). */
#include "sumstudy.h"

#include "atomicfile.h"
#include "pathcheck.h"
#include "reduce.h"
#include "spincount.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int, char **);

typedef struct {
  ss_summary s;
  double     sum_seconds; /* mean wall time of one sum */
  int        done;
} ss_row;

typedef struct {
  const ss_opts *o;
  int            run[SS_NMETHODS];
  int            threads;
  ss_row        *rows; /* [dist][n index][method] */
  ss_cuda       *gpu;
  FILE          *samples;
} ss_study;

static ss_row *row_at(const ss_study *st, int d, int i, int m)
{
  return &st->rows[((size_t)d * st->o->nn + i) * SS_NMETHODS + m];
}

/* ---- which methods run ---------------------------------------------------- */

/* The CUDA methods run only where a device answers. Without one they are
 * skipped with one line, or refused when nothing else was asked for. */
static int select_methods(const ss_opts *o, int run[SS_NMETHODS])
{
  int  cpu = 0, cuda = 0;
  char names[256] = "", why[200] = "this build has no CUDA support";
  for (int m = 0; m < SS_NMETHODS; m++) {
    run[m] = o->method[m];
#ifndef MINIAPP_HAVE_CUDA
    if (m >= SS_FIRST_CUDA && !o->methods_given) run[m] = 0; /* not built: not a default */
#endif
    if (!run[m]) continue;
    if (m < SS_FIRST_CUDA) cpu++;
    else
      cuda++,
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", cuda > 1 ? ", " : "", ss_method_names[m]);
  }
  if (!cuda) return 0;
#ifdef MINIAPP_HAVE_CUDA
  const char *err;
  if (ss_cuda_available(&err)) return 0;
  snprintf(why, sizeof why, "no usable CUDA device (%s)", err);
#endif
  if (!cpu) return ss_fail(1, "-methods %s: %s", names, why);
  fprintf(stderr, SS_PROG ": skipping %s: %s\n", names, why);
  for (int m = SS_FIRST_CUDA; m < SS_NMETHODS; m++) run[m] = 0;
  return 0;
}

/* ---- the sweep -------------------------------------------------------------- */

static double vs_of(double s, double ref) { return ref != 0.0 ? 1.0 - fabs(s / ref) : s == 0.0 ? 0.0 : NAN; }

/* m == SS_NMETHODS: upload x; else one sum of the uploaded array. 1 (after
 * one line) on a CUDA error; never called in a build without CUDA. */
static int gpu_call(ss_study *st, ss_method m, size_t n, const double *x, double *sum)
{
#ifdef MINIAPP_HAVE_CUDA
  int rc = m == SS_NMETHODS ? ss_cuda_upload(st->gpu, n, x) : ss_cuda_sum(st->gpu, m, sum);
  if (rc)
    return ss_fail(1, "%s failed: %s", m == SS_NMETHODS ? "CUDA upload" : ss_method_names[m], ss_cuda_strerror(rc));
  return 0;
#else
  return ss_fail(1, "%s: this build has no CUDA support", m == SS_NMETHODS ? "CUDA upload" : ss_method_names[m]);
#endif
}

/* One (distribution, N): arrays in batches of one per thread. Each thread
 * makes its array, the reference and the element orders; then the block and
 * atomic methods run on every array of the batch in turn (they use all the
 * threads, or a global seed). */
static int sweep_one(ss_study *st, ss_dist d, int in, double **data, double **scratch, double *sums, double *refs,
                     double *secs)
{
  const ss_opts *o = st->o;
  size_t         n = o->n[in];
  int            per = o->orders, nsum = o->arrays * per;
  memset(secs, 0, SS_NMETHODS * sizeof *secs);
  for (int a0 = 0; a0 < o->arrays; a0 += st->threads) {
    int nb = o->arrays - a0 < st->threads ? o->arrays - a0 : st->threads;
#pragma omp parallel num_threads(nb)
    {
      int    t = omp_get_thread_num(), a = a0 + t;
      double *x = data[t];
      ss_generate(d, o->seed, n, (uint64_t)a, x);
      refs[a] = ss_reference(o->ref, n, x);
      if (st->run[SS_ELEMENT]) {
        uint64_t as = ss_array_seed(d, o->seed, n, (uint64_t)a);
        double   t0 = omp_get_wtime();
        for (int k = 0; k < per; k++)
          sums[(size_t)SS_ELEMENT * nsum + a * per + k] = ss_sum_element(n, x, ss_order_seed(as, SS_ELEMENT, k),
                                                                         scratch[t]);
#pragma omp atomic
        secs[SS_ELEMENT] += omp_get_wtime() - t0;
      }
    }
    for (int t = 0; t < nb; t++) {
      int      a  = a0 + t;
      double  *x  = data[t];
      uint64_t as = ss_array_seed(d, o->seed, n, (uint64_t)a);
      if (st->gpu && gpu_call(st, SS_NMETHODS, n, x, NULL)) return 1;
      for (int m = SS_BLOCK; m < SS_NMETHODS; m++) {
        if (!st->run[m]) continue;
        double t0 = omp_get_wtime();
        for (int k = 0; k < per; k++) {
          double *s = &sums[(size_t)m * nsum + a * per + k];
          if (m == SS_BLOCK) *s = ss_sum_block(n, x, o->block, ss_order_seed(as, SS_BLOCK, k));
          else if (m == SS_OMP) *s = ss_sum_omp(n, x);
          else if (m == SS_OMP_BLOCK) *s = ss_sum_omp_block(n, x);
          else if (gpu_call(st, (ss_method)m, n, x, s)) return 1;
        }
        secs[m] += omp_get_wtime() - t0;
        if (m == SS_CUDA_TREE && a == 0 && sums[(size_t)m * nsum] != ss_sum_cuda_tree_cpu(n, x)) {
          return ss_fail(2, "cuda-tree at N=%zu differs from its CPU replica (ss_sum_cuda_tree_cpu): INVALID", n);
        }
      }
    }
  }
  return 0;
}

static int write_samples(ss_study *st, ss_dist d, int in, const double *sums, const double *refs)
{
  const ss_opts *o = st->o;
  int            nsum = o->arrays * o->orders;
  for (int m = 0; m < SS_NMETHODS && st->samples; m++)
    for (int j = 0; st->run[m] && j < nsum; j++)
      if (fprintf(st->samples, "%s,%s,%zu,%d,%d,%.17g,%.17g,%.17g\n", ss_method_names[m], ss_dist_names[d], o->n[in],
                  j / o->orders, j % o->orders, sums[(size_t)m * nsum + j], refs[j / o->orders],
                  vs_of(sums[(size_t)m * nsum + j], refs[j / o->orders])) < 0)
        return 1;
  return 0;
}

static int sweep(ss_study *st)
{
  const ss_opts *o    = st->o;
  size_t         nmax = o->n[o->nn - 1], nsum = (size_t)o->arrays * o->orders;
  double **data = calloc((size_t)st->threads, sizeof *data), **scratch = calloc((size_t)st->threads, sizeof *scratch);
  double        *sums = malloc(SS_NMETHODS * nsum * sizeof *sums), *refs = malloc((size_t)o->arrays * sizeof *refs);
  double        *vs = malloc(nsum * sizeof *vs), secs[SS_NMETHODS], t0 = omp_get_wtime();
  int            rc = !data || !scratch || !sums || !refs || !vs ? ss_fail(1, "out of memory") : 0;
  for (int t = 0; !rc && t < st->threads; t++) {
    data[t] = malloc(nmax * sizeof **data);
    if (st->run[SS_ELEMENT]) scratch[t] = malloc(nmax * sizeof **scratch);
    if (!data[t] || (st->run[SS_ELEMENT] && !scratch[t]))
      rc = ss_fail(1, "-n %zu: cannot allocate the arrays: use a smaller -n or -threads", nmax);
  }
  for (int d = 0; !rc && d < SS_NDISTS; d++)
    for (int in = 0; !rc && o->dist[d] && in < o->nn; in++) {
      rc = sweep_one(st, (ss_dist)d, in, data, scratch, sums, refs, secs);
      if (!rc && write_samples(st, (ss_dist)d, in, sums, refs))
        rc = ss_fail(1, "-samples %s: writing failed", o->samples);
      for (int m = 0; !rc && m < SS_NMETHODS; m++) {
        if (!st->run[m]) continue;
        ss_row *r = row_at(st, d, in, m);
        for (size_t j = 0; j < nsum; j++) vs[j] = vs_of(sums[m * nsum + j], refs[j / o->orders]);
        ss_summarize((int)nsum, vs, o->orders, sums + m * nsum, refs, &r->s);
        r->sum_seconds = secs[m] / nsum, r->done = 1;
      }
      if (!rc && isatty(2))
        fprintf(stderr, "%s N=%zu done (%.1f s)\n", ss_dist_names[d], o->n[in], omp_get_wtime() - t0);
    }
  for (int t = 0; data && scratch && t < st->threads; t++) free(data[t]), free(scratch[t]);
  free(data), free(scratch), free(sums), free(refs), free(vs);
  return rc;
}

/* ---- output ------------------------------------------------------------------ */

static void put_num(FILE *f, double v) { isnan(v) ? fputs("nan", f) : fprintf(f, "%.6g", v); }

static void write_summary(const ss_study *st, FILE *f)
{
  const ss_opts *o = st->o;
  fprintf(f, "# " SS_PROG ": V_s = 1 - |S / S_ref| over arrays x orders per (method, dist, N); docs/fpna-sums.md\n");
  fprintf(f, "# reference=%s block=%zu app_block=%d threads=%d seed=%llu arrays=%d orders=%d\n", ss_ref_names[o->ref],
          o->block, RED_BLOCK, st->threads, (unsigned long long)o->seed, o->arrays, o->orders);
  fprintf(f, "method,dist,n,arrays,orders,samples,zeros,undefined,max_abs_vs,q50_abs_vs,q90_abs_vs,q99_abs_vs,mean_abs_"
             "vs,mean_vs,spread,sum_seconds\n");
  for (int m = 0; m < SS_NMETHODS; m++)
    for (int d = 0; d < SS_NDISTS; d++)
      for (int in = 0; in < o->nn; in++) {
        const ss_row *r = row_at(st, d, in, m);
        if (!r->done) continue;
        fprintf(f, "%s,%s,%zu,%d,%d,%d,%d,%d", ss_method_names[m], ss_dist_names[d], o->n[in], o->arrays, o->orders,
                r->s.samples, r->s.zeros, r->s.undefined);
        const double v[] = {r->s.max,      r->s.q50,  r->s.q90,    r->s.q99,
                            r->s.mean_abs, r->s.mean, r->s.spread, r->sum_seconds};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) fputc(',', f), put_num(f, v[k]);
        fputc('\n', f);
      }
}

/* Fit over the N >= nmin of one (method, dist); which = 0: max, 1: median. */
static void fit_of(const ss_study *st, int m, int d, size_t nmin, int which, ss_fit *f)
{
  int     np = 0;
  double *n = malloc((size_t)st->o->nn * sizeof *n), *y = malloc((size_t)st->o->nn * sizeof *y);
  for (int in = 0; n && y && in < st->o->nn; in++) {
    const ss_row *r = row_at(st, d, in, m);
    if (!r->done || st->o->n[in] < nmin) continue;
    n[np] = (double)st->o->n[in], y[np++] = which ? r->s.q50 : r->s.max;
  }
  ss_fit_power(np, n, y, f);
  free(n), free(y);
}

static void print_yaml_num(const char *key, double v, const char *fmt)
{
  printf(", %s: ", key);
  isnan(v) ? printf("null") : printf(fmt, v);
}

static void print_fit(const ss_study *st, int m, int d, size_t nmin, const char *label)
{
  ss_fit f, fm;
  fit_of(st, m, d, nmin, 0, &f);
  fit_of(st, m, d, nmin, 1, &fm);
  printf("    %s: {points: %d", label, f.points);
  print_yaml_num("alpha", f.alpha, "%.3f");
  print_yaml_num("alpha_se", f.alpha_se, "%.3f");
  print_yaml_num("beta", f.beta, "%.3g");
  print_yaml_num("r2", f.r2, "%.3f");
  print_yaml_num("alpha_median", fm.alpha, "%.3f");
  if (f.points) printf(", n: [%.0f, %.0f]", f.nlo, f.nhi);
  printf("}\n");
}

/* A YAML double-quoted string (a path may hold ':', '#', quotes). */
static void put_str(const char *v)
{
  putchar('"');
  for (; *v; v++) {
    unsigned char c = (unsigned char)*v;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20 || c == 0x7f) printf("\\x%02x", c);
    else putchar(c);
  }
  putchar('"');
}

static void print_report(const ss_study *st, double seconds)
{
  const ss_opts *o = st->o;
  static const char *const refdesc[] = {"the correctly rounded sum (kernels/rsum.c, as the reproducible build)",
                                        "the sum in index order, left to right",
                                        "the app's deterministic sum (fixed blocks, pairwise tree)"};
  printf("sumstudy:\n");
  printf("  definition: \"V_s = 1 - |S / S_ref| per array and order; fit: least squares of log10 max|V_s| on log10 N "
         "over the N with max|V_s| > 0\"\n");
  printf("  reference: %s  # %s\n", ss_ref_names[o->ref], refdesc[o->ref]);
  printf("  distributions: [");
  for (int d = 0, k = 0; d < SS_NDISTS; d++)
    if (o->dist[d]) printf("%s%s", k++ ? ", " : "", ss_dist_names[d]);
  printf("]  # uniform on [0,1), standard normal\n  n: [");
  for (int in = 0; in < o->nn; in++) printf("%s%zu", in ? ", " : "", o->n[in]);
  printf("]\n  arrays: %d\n  orders: %d\n  block: %zu\n  threads: %d\n  seed: %llu\n  output: ", o->arrays, o->orders,
         o->block, st->threads, (unsigned long long)o->seed);
  put_str(o->out);
  printf("\n");
  printf("  seconds: %.1f\n", seconds);
  printf("fits:  # max|V_s| = beta N^alpha\n");
  for (int m = 0; m < SS_NMETHODS; m++) {
    if (!st->run[m]) continue;
    printf("  %s:\n", ss_method_names[m]);
    size_t blk = m == SS_BLOCK                                                ? o->block
               : m == SS_OMP_BLOCK || m == SS_CUDA_BLOCK || m == SS_CUDA_TREE ? RED_BLOCK
                                                                              : 0;
    for (int d = 0; d < SS_NDISTS; d++) {
      if (!o->dist[d]) continue;
      print_fit(st, m, d, 0, ss_dist_names[d]);
      if (blk) { /* where the block order can matter: 3 or more blocks */
        char label[64];
        snprintf(label, sizeof label, "%s_from_3_blocks", ss_dist_names[d]);
        print_fit(st, m, d, 2 * blk + 1, label);
      }
    }
  }
  if (st->run[SS_ELEMENT] && st->run[SS_BLOCK]) {
    printf("element_over_block:  # max|V_s| of element / of block at the largest N\n");
    for (int d = 0; d < SS_NDISTS; d++)
      if (o->dist[d]) {
        double e = row_at(st, d, o->nn - 1, SS_ELEMENT)->s.max, b = row_at(st, d, o->nn - 1, SS_BLOCK)->s.max;
        printf("  %s: ", ss_dist_names[d]);
        b > 0 ? printf("%.3g\n", e / b) : printf("null  # block max|V_s| is 0\n");
      }
  }
}

/* Each thread holds one array (two for the element method): refuse now what
 * would end in the OOM killer after minutes. */
static int check_memory(const ss_opts *o, int threads)
{
  size_t nmax = o->n[o->nn - 1];
  double need = (double)threads * (o->method[SS_ELEMENT] ? 2 : 1) * nmax * sizeof(double);
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (phys > 0 && need > 0.8 * phys)
    return ss_fail(1,
                   "-n %zu: %d thread(s) need %.1f GB of arrays, more than 80%% of the %.1f GB of memory: use a "
                   "smaller -n or -threads",
                   nmax, threads, need / 1e9, phys / 1e9);
  return 0;
}

/* -o and -samples: distinct, writable regular files (kernels/pathcheck.h). */
static int check_paths(const ss_opts *o)
{
  char     msg[1024];
  int      rc = 0;
  pathset *ps = pathset_create();
  if (!ps || pathset_add(ps, PATH_OUTPUT, "-o", o->out) ||
      (o->samples && pathset_add(ps, PATH_OUTPUT, "-samples", o->samples)))
    rc = ss_fail(1, "out of memory");
  else if (pathset_check(ps, msg, sizeof msg)) rc = ss_fail(1, "%s", msg);
  pathset_destroy(&ps);
  return rc;
}


/* ---- main ----------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  ss_opts  o;
  ss_study st = {0};
  afile    out = {0}, smp = {0};
  spincount_default(argv, (void *)main); /* the omp method opens a parallel region per sum (kernels/spincount.h) */
  int      rc = ss_parse_options(argc, argv, &o);
  if (rc) return rc == 2 ? 0 : 1;
  st.o = &o;
  if (o.threads) omp_set_num_threads(o.threads);
  omp_set_max_active_levels(1); /* the kernels' own parallel loops run serially inside ours */
  st.threads = omp_get_max_threads();

  rc = check_memory(&o, st.threads);
  if (!rc) rc = check_paths(&o);
  if (!rc) rc = select_methods(&o, st.run);
  size_t bad_n = 0;
  if (!rc && ss_check_block_replay(&bad_n))
    rc = ss_fail(2, "the block replay here differs from kernels/reduce.c's atomic replay at N=%zu: INVALID", bad_n);
#ifdef MINIAPP_HAVE_CUDA
  int grc = 0;
  for (int m = SS_FIRST_CUDA; !rc && m < SS_NMETHODS; m++)
    if (st.run[m] && !st.gpu && (grc = ss_cuda_create(o.n[o.nn - 1], &st.gpu)))
      rc = ss_fail(1, "CUDA set-up failed: %s", ss_cuda_strerror(grc));
#endif
  st.rows = calloc((size_t)SS_NDISTS * o.nn * SS_NMETHODS, sizeof *st.rows);
  if (!rc && !st.rows) rc = ss_fail(1, "out of memory");
  int e;
  if (!rc && (e = afile_begin(&out, o.out, 1))) rc = ss_fail(1, "-o %s: %s", o.out, afile_strerror(e));
  if (!rc && o.samples && (e = afile_begin(&smp, o.samples, 1)))
    rc = ss_fail(1, "-samples %s: %s", o.samples, afile_strerror(e));
  if (!rc && o.samples) {
    st.samples = smp.fp;
    fprintf(st.samples, "method,dist,n,array,order,sum,reference,vs\n");
  }

  double t0 = omp_get_wtime();
  if (!rc) rc = sweep(&st);
  double seconds = omp_get_wtime() - t0;

  if (!rc) write_summary(&st, out.fp);
  if (!rc && (e = afile_commit(&out)))
    rc = ss_fail(1, "-o %s: writing failed (%s)", o.out, afile_strerror(afile_diagnose(o.out, e)));
  if (!rc && o.samples && (e = afile_commit(&smp)))
    rc = ss_fail(1, "-samples %s: writing failed (%s)", o.samples, afile_strerror(afile_diagnose(o.samples, e)));
  afile_discard(&out), afile_discard(&smp);
  if (!rc) print_report(&st, seconds);
  if (!rc && (fflush(stdout) || ferror(stdout))) rc = ss_fail(1, "writing standard output failed");
#ifdef MINIAPP_HAVE_CUDA
  ss_cuda_destroy(&st.gpu);
#endif
  free(st.rows);
  ss_free_options(&o);
  return rc;
}
