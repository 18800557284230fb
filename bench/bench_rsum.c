/* bench/bench_rsum.c: the reproducible gradient accumulator's paths side by
 * side (kernels/gsum.c, gsum_add_outer: generic, AVX2, AVX-512VL; those the CPU lacks
 * fall back and are said so), in interleaved rounds in one run, on two of
 * the surrogate's shapes: a hidden layer (32 delta rows x 32 activation
 * rows) and the output layer (1 delta row x 32: gsum's pass for few rows),
 * the batch in chunks of 1024 samples, one thread. Prints ns per product
 * (best of the rounds), the ratio to the widest path, the deterministic
 * float tree's cost on the same products for comparison, and checks that
 * every path gives the same bits (it exits 1 if not). Then the same for rsum
 * (kernels/rsum.c, the solver's reproducible dot products) on the medium
 * deck's vector length, 73728 doubles: a dot (rsum_add, chunk by chunk) and
 * the CG tail's two sums (rsum_add_sumsq_dot), per path (with its lanes),
 * next to the deterministic strategy's dot. On AVX-512 CPUs, a design not
 * taken beside gsum's path: products rounded down inside the accumulating
 * FMA (floor_fma_probe), and why it was not taken: its one-sided rounding's
 * error on rows with an outlier sample, beside gsum's (floor_fma_accuracy);
 * and, on every CPU, gsum's pass with the rows in cache against from memory
 * (hot_vs_streamed). Not a test: no pass/fail on time.
 * Usage: bench_rsum [samples (262144)] [rounds (5)] */
#include "reduce.h"
#include "gsum.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t bits_of(double v)
{
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static const char *run_isa; /* what a run takes here (main reads it before any path is set by name) */
static int         run_lanes;

/* rsum's paths: a dot and the CG tail's two sums over L doubles, repeated
 * reps times a round; returns 1 if the paths' bits differ. */
static int rsum_paths(size_t rounds)
{
  const size_t L = 73728, reps = 40;
  double      *x = malloc(L * sizeof *x), *y = malloc(L * sizeof *y);
  if (!x || !y) {
    fprintf(stderr, "bench_rsum: error: out of memory\n");
    return 1;
  }
  omp_set_num_threads(1);
  for (size_t i = 0; i < L; i++)
    x[i] = sin(0.001 * (double)i) * ldexp(1.0, (int)(i % 23) - 11), y[i] = cos(0.003 * (double)i);
  const char *isa[] = {"generic", "avx2", "avx512"}, *took[3];
  int         lanes[3];
  double      bd[3] = {1e30, 1e30, 1e30}, bs[3] = {1e30, 1e30, 1e30}, det = 1e30, sink = 0.0;
  uint64_t    hash[3] = {0};
  for (size_t k = 0; k < rounds; k++) {
    for (int p = 0; p < 3; p++) {
      took[p] = rsum_set_isa(isa[p]), lanes[p] = rsum_lanes();
      rsum_t a, zz, zr;
      double t = now();
      for (size_t q = 0; q < reps; q++) {
        rsum_init(&a);
        rsum_add(&a, RED_OP_DOT, L, x, y);
      }
      t     = now() - t;
      bd[p] = t < bd[p] ? t : bd[p];
      t     = now();
      for (size_t q = 0; q < reps; q++) {
        rsum_init(&zz), rsum_init(&zr);
        rsum_add_sumsq_dot(&zz, &zr, L, x, y);
      }
      t       = now() - t;
      bs[p]   = t < bs[p] ? t : bs[p];
      hash[p] = (bits_of(rsum_value(&a)) * 31 + bits_of(rsum_value(&zz))) * 31 + bits_of(rsum_value(&zr));
    }
    double t = now();
    for (size_t q = 0; q < reps; q++) sink += red_reduce(RED_DETERMINISTIC, RED_OP_DOT, L, x, y, NULL);
    t   = now() - t;
    det = t < det ? t : det;
  }
  double vals = (double)L * reps;
  printf("rsum: %zu doubles (the medium deck's vectors), 1 thread, best of %zu interleaved rounds\n", L, rounds);
  printf("%-8s %-8s %5s %14s %20s\n", "asked", "took", "lanes", "dot ns/value", "z.z + z.r ns/value");
  for (int p = 0; p < 3; p++)
    printf("%-8s %-8s %5d %14.3f %20.3f\n", isa[p], took[p], lanes[p], 1e9 * bd[p] / vals, 1e9 * bs[p] / vals);
  printf("a run here takes the %s path with %d lanes (the widest path unless MINIAPP_RSUM_ISA names one)\n", run_isa,
         run_lanes);
  printf("%-17s %14.3f  (the deterministic strategy's dot: 8 lanes, a tree%s)\n", "deterministic", 1e9 * det / vals,
         sink == 0.1 ? " " : "");
  int same = hash[0] == hash[1] && hash[1] == hash[2];
  printf("rsum bits: %s (hash %016llx)\n", same ? "the same on every path" : "DIFFER", (unsigned long long)hash[2]);
  free(x), free(y);
  return !same;
}

/* gsum_add_outer's paths on nx delta rows x ny activation rows of n samples
 * (rows n apart), chunk by chunk; returns 1 if the paths' bits differ. */
static int outer_paths(size_t n, size_t rounds, size_t nx, const float *d, const int32_t *ex, size_t ny, const float *a,
                       const int32_t *ey, gsum_t *st)
{
  const size_t C = 1024;
  const char *isa[] = {"generic", "avx2", "avx512"}, *took[3];
  double      best[3] = {1e30, 1e30, 1e30}, tree = 1e30;
  uint64_t    hash[3] = {0};
  for (size_t k = 0; k < rounds; k++) {
    for (int p = 0; p < 3; p++) {
      took[p] = rsum_set_isa(isa[p]);
      for (size_t q = 0; q < nx * ny; q++) gsum_init(&st[q]);
      double t = now();
      for (size_t c = 0; c < n; c += C) gsum_add_outer(st, NULL, C, nx, d + c, n, ex, ny, a + c, n, ey);
      t = now() - t;
      best[p] = t < best[p] ? t : best[p];
      uint64_t h = 1469598103934665603ull;
      for (size_t q = 0; q < nx * ny; q++) {
        rsum_t   rs;
        gsum_to_rsum(&st[q], ex[q / ny], ey[q % ny], &rs);
        double   v = rsum_value(&rs);
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        h = (h ^ b) * 1099511628211ull;
      }
      hash[p] = h;
    }
    { /* the deterministic strategy's float sums of the same products: 8 lanes, pairwise over the chunks */
      double t = now();
      float *acc = calloc(nx * ny, sizeof *acc);
      for (size_t c = 0; c < n; c += C)
        for (size_t i = 0; i < nx; i++)
          for (size_t j = 0; j < ny; j++) {
            float l[8] = {0};
            for (size_t s = 0; s < C; s += 8)
              for (int u = 0; u < 8; u++) l[u] += d[i * n + c + s + u] * a[j * n + c + s + u];
            acc[i * ny + j] += ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
          }
      t = now() - t;
      tree = t < tree ? t : tree;
      free(acc);
    }
  }
  double prods = (double)n * nx * ny;
  printf("bench_rsum: %zu samples x %zu x %zu pairs, 1 thread, best of %zu interleaved rounds\n", n, nx, ny, rounds);
  printf("%-8s %-8s %12s %10s\n", "asked", "took", "ns/product", "vs widest");
  for (int p = 0; p < 3; p++)
    printf("%-8s %-8s %12.3f %10.2f\n", isa[p], took[p], 1e9 * best[p] / prods, best[p] / best[2]);
  printf("%-17s %12.3f %10.2f  (float products, 8-lane sums: the deterministic strategy's arithmetic)\n", "float tree",
         1e9 * tree / prods, tree / best[2]);
  int same = hash[0] == hash[1] && hash[1] == hash[2];
  printf("bits: %s (hash %016llx)\n", same ? "the same on every path" : "DIFFER", (unsigned long long)hash[2]);
  return !same;
}

/* Another design not taken: the sums made chunk by chunk while
 * the chunk's rows are in cache, as the float strategies make theirs, which
 * needs the units before the batch's maxima are known (a priori bounds from
 * the weights). What it could save at most: gsum's pass over the batch in
 * chunks as the train step makes it (the rows from memory) against the same
 * number of passes over one chunk (its rows in cache), on the path this CPU
 * takes. */
static void hot_vs_streamed(size_t n, size_t rounds, size_t nx, const float *d, const int32_t *ex, size_t ny,
                            const float *a, const int32_t *ey, gsum_t *st)
{
  const size_t C = 1024;
  double       bs = 1e30, bh = 1e30;
  rsum_set_isa(run_isa);
  for (size_t k = 0; k < rounds; k++) {
    for (size_t q = 0; q < nx * ny; q++) gsum_init(&st[q]);
    double t = now();
    for (size_t c = 0; c < n; c += C) gsum_add_outer(st, NULL, C, nx, d + c, n, ex, ny, a + c, n, ey);
    t  = now() - t;
    bs = t < bs ? t : bs;
    t  = now();
    for (size_t c = 0; c < n; c += C) gsum_add_outer(st, NULL, C, nx, d, n, ex, ny, a, n, ey);
    t  = now() - t;
    bh = t < bh ? t : bh;
  }
  double prods = (double)n * nx * ny;
  printf("gsum %s, %zu x %zu pairs: streamed %.3f ns/product, in cache %.3f: the rows' loads cost %.2fx\n", run_isa, nx,
         ny, 1e9 * bs / prods, 1e9 * bh / prods, bs / bh);
}

#if defined(__x86_64__)
#include <immintrin.h>
/* A design not taken: every product rounded DOWN to a unit 2^6
 * coarser (2^-45 of the pair's bound: a lane adds 64 products of a
 * 512-sample pass, and their sum must stay in one binade), so that the rounding can happen inside the accumulating FMA
 * (AVX-512's embedded rounding; CUDA's __fma_rd): floor(S + p) = S + floor(p)
 * for S on the unit grid, in any order. That saves the integer add of every
 * vector of products, at the price of other bits than gsum's and a weaker
 * bound. Same passes, widening and 4 x 4 blocks as gsum's AVX-512 path; bench
 * only. */
#define FP_SUB 512
__attribute__((target("avx512f"))) static void fp_widen(size_t m, const float *x, double *xs, int32_t e)
{
  __m512d s = _mm512_set1_pd(ldexp(1.0, -e));
  for (size_t i = 0; i < m; i += 8) _mm512_storeu_pd(xs + i, _mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), s));
}
__attribute__((target("avx512f"))) static void fp_block(int64_t *c, size_t ny, size_t m, double *const *xs,
                                                        double *const *ys)
{
  const __m512d C = _mm512_set1_pd(192.0); /* 1.5 2^7: its binade [128, 256) has ulp 2^-45; |64 products| < 64 */
  __m512d       S[4][4];
  for (int u = 0; u < 4; u++)
    for (int v = 0; v < 4; v++) S[u][v] = C;
  for (size_t i = 0; i < m; i += 8) {
    __m512d a[4];
    for (int u = 0; u < 4; u++) a[u] = _mm512_loadu_pd(xs[u] + i);
    for (int v = 0; v < 4; v++) {
      __m512d b = _mm512_loadu_pd(ys[v] + i);
      for (int u = 0; u < 4; u++)
        S[u][v] = _mm512_fmadd_round_pd(a[u], b, S[u][v], _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    }
  }
  for (int u = 0; u < 4; u++)
    for (int v = 0; v < 4; v++)
      c[u * ny + v] += _mm512_reduce_add_epi64(_mm512_sub_epi64(_mm512_castpd_si512(S[u][v]), _mm512_castpd_si512(C)));
}
/* nx, ny multiples of 4, at most 32; n a multiple of 8 */
__attribute__((target("avx512f"))) static void fp_outer(int64_t *c, size_t n, size_t nx, const float *x, size_t ldx,
                                                        const int32_t *ex, size_t ny, const float *y, size_t ldy,
                                                        const int32_t *ey)
{
  static double xs[4][FP_SUB], ys[32][FP_SUB];
  double       *xp[4], *yp[32];
  for (size_t i0 = 0; i0 < n; i0 += FP_SUB) {
    size_t m = n - i0 < FP_SUB ? n - i0 : FP_SUB;
    for (size_t q = 0; q < ny; q++) fp_widen(m, y + q * ldy + i0, ys[q], ey[q]), yp[q] = ys[q];
    for (size_t p0 = 0; p0 < nx; p0 += 4) {
      for (int u = 0; u < 4; u++) fp_widen(m, x + (p0 + u) * ldx + i0, xs[u], ex[p0 + u]), xp[u] = xs[u];
      for (size_t q = 0; q < ny; q += 4) fp_block(c + p0 * ny + q, ny, m, xp, yp + q);
    }
  }
}

/* The probe against gsum's AVX-512 path, interleaved; 1 if a sum breaks the
 * probe's own bound (n units of 2^-45 below the exact sum, none above). */
static int floor_fma_probe(size_t n, size_t rounds, size_t nx, const float *d, const int32_t *ex, size_t ny,
                           const float *a, const int32_t *ey, gsum_t *st)
{
  const size_t C = 1024;
  if (!__builtin_cpu_supports("avx512f")) {
    printf("floor-rounded FMA probe: skipped (no AVX-512 here)\n");
    return 0;
  }
  int64_t *cnt = calloc(nx * ny, sizeof *cnt);
  double   bg = 1e30, bp = 1e30;
  int      bad = 0;
  if (!cnt) return 1;
  for (size_t k = 0; k < rounds; k++) {
    rsum_set_isa("avx512");
    for (size_t q = 0; q < nx * ny; q++) gsum_init(&st[q]);
    double t = now();
    for (size_t c = 0; c < n; c += C) gsum_add_outer(st, NULL, C, nx, d + c, n, ex, ny, a + c, n, ey);
    t  = now() - t;
    bg = t < bg ? t : bg;
    memset(cnt, 0, nx * ny * sizeof *cnt);
    t = now();
    for (size_t c = 0; c < n; c += C) fp_outer(cnt, C, nx, d + c, n, ex, ny, a + c, n, ey);
    t  = now() - t;
    bp = t < bp ? t : bp;
  }
  for (size_t q = 0; q < nx * ny;
       q++) { /* gsum's sum is within n 2^-52 of the exact one: far inside the probe's n 2^-45 */
    rsum_t rs;
    gsum_to_rsum(&st[q], ex[q / ny], ey[q % ny], &rs);
    double u = ldexp(1.0, ex[q / ny] + ey[q % ny] - 45), diff = rsum_value(&rs) - (double)cnt[q] * u;
    bad |= !(diff >= -1e-3 * u && diff <= (double)n * u);
  }
  double prods = (double)n * nx * ny;
  printf("floor-rounded FMA accumulation (a design not taken: unit 2^-45, other bits): %.3f ns/product, gsum's AVX-512 "
         "path %.3f: %.2fx faster; within its bound: %s\n",
         1e9 * bp / prods, 1e9 * bg / prods, bg / bp, bad ? "NO" : "yes");
  free(cnt);
  return bad;
}

/* Why the design above was not taken, besides its bits: its rounding is
 * one-sided. A product below its unit rounds to 0 or to -1 unit by its sign,
 * so n small products of both signs move the sum by about n/2 units, where
 * gsum's rounding to nearest moves it by about sqrt(n) half units, and a
 * product far below gsum's unit by nothing. Data: 4 delta rows whose sample 3
 * is 2^10 and the rest within 2^-30 of zero, either sign (one sample far off
 * the others: the row's unit is set by it), against 4 activation rows in
 * [0, 1). Prints the larger error of the 16 pairs, gsum's and the design's,
 * over the deterministic float tree's bound (log2 n + 8) 2^-24 sum|x y| (the
 * figure users compare with); 1 if gsum's error is over its own bound,
 * n U / 2 plus the final rounding (gsum.h). */
static int floor_fma_accuracy(size_t n)
{
  const size_t C = 1024, k = 4;
  float       *x = malloc(k * n * sizeof *x), *y = malloc(k * n * sizeof *y);
  double      *xd = malloc(n * sizeof *xd), *yd = malloc(n * sizeof *yd);
  int64_t      cnt[16] = {0};
  gsum_t       st[16];
  int32_t      ex[4], ey[4];
  double       wg = 0, wf = 0;
  int          bad = 0;
  uint64_t     r = 0x9e3779b97f4a7c15ull;
  if (!x || !y || !xd || !yd) {
    free(x), free(y), free(xd), free(yd);
    return 1;
  }
  for (size_t i = 0; i < k * n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    x[i] = i % n == 3 ? 1024.0f : ldexpf((float)(r % 2000001) / 1e6f - 1.0f, -30);
    y[i] = (float)((r >> 24) % 1000001) / 1e6f;
  }
  for (size_t q = 0; q < k; q++)
    ex[q] = gsum_exponent(gsum_absmax(n, x + q * n)), ey[q] = gsum_exponent(gsum_absmax(n, y + q * n));
  rsum_set_isa("avx512");
  for (size_t q = 0; q < 16; q++) gsum_init(&st[q]);
  for (size_t c = 0; c < n; c += C) {
    gsum_add_outer(st, NULL, C, k, x + c, n, ex, k, y + c, n, ey);
    fp_outer(cnt, C, k, x + c, n, ex, k, y + c, n, ey);
  }
  for (size_t q = 0; q < 16; q++) {
    size_t u = q / 4, v = q % 4;
    rsum_t rs, ex_r;
    for (size_t i = 0; i < n; i++) xd[i] = x[u * n + i], yd[i] = y[v * n + i];
    rsum_init(&ex_r);
    rsum_add(&ex_r, RED_OP_DOT, n, xd, yd); /* exact products (floats), summed exactly, rounded once */
    double exact = rsum_value(&ex_r), asum = 0;
    for (size_t i = 0; i < n; i++) asum += fabs(xd[i] * yd[i]);
    double tree = (ceil(log2((double)n + 1)) + 8) * 0x1p-24 * asum;
    gsum_to_rsum(&st[q], ex[u], ey[v], &rs);
    double eg = fabs(rsum_value(&rs) - exact), ef = fabs((double)cnt[q] * ldexp(1.0, ex[u] + ey[v] - 45) - exact);
    wg = eg / tree > wg ? eg / tree : wg, wf = ef / tree > wf ? ef / tree : wf;
    bad |= !(eg <= (double)n * ldexp(1.0, ex[u] + ey[v] - 52) + 2 * 0x1p-52 * fabs(exact));
  }
  printf("one-sided rounding: one outlier sample per delta row, %zu samples: error / float tree bound, gsum (nearest) "
         "%.2g, floor-rounded design %.2g\n",
         n, wg, wf);
  rsum_set_isa(run_isa);
  free(x), free(y), free(xd), free(yd);
  return bad;
}
#endif

/* A decimal count in [lo, hi] and nothing else (no sign, no wrap-around). */
static int count_arg(const char *s, size_t lo, size_t hi, size_t *v)
{
  char              *end;
  unsigned long long x;
  if (*s < '0' || *s > '9') return 0;
  errno = 0;
  x     = strtoull(s, &end, 10);
  if (errno || *end || x < lo || x > hi) return 0;
  *v = (size_t)x;
  return 1;
}

int main(int argc, char **argv)
{
  const size_t nx = 32, ny = 32, C = 1024;
  run_isa = rsum_isa(), run_lanes = rsum_lanes();
  size_t       n = 262144, rounds = 5;
  if (argc > 3) {
    fprintf(stderr,
            "bench_rsum: error: usage: bench_rsum [samples, a multiple of %zu up to 2^26] [rounds, 1 to 1000]\n", C);
    return 1;
  }
  if ((argc > 1 && !count_arg(argv[1], C, (size_t)1 << 26, &n)) || n % C) {
    /* the chunk loop takes whole chunks: 4097 would have run 4096 */
    fprintf(stderr, "bench_rsum: error: samples %s: a multiple of %zu from %zu to 2^26\n", argv[1], C, C);
    return 1;
  }
  if (argc > 2 && !count_arg(argv[2], 1, 1000, &rounds)) {
    fprintf(stderr, "bench_rsum: error: rounds %s: an integer from 1 to 1000\n", argv[2]);
    return 1;
  }
  float             *d = malloc(nx * n * sizeof *d), *a = malloc(ny * n * sizeof *a);
  gsum_t            *st = malloc(nx * ny * sizeof *st);
  int32_t            ex[32], ey[32];
  unsigned long long r = 88172645463325252ull;
  if (!d || !a || !st) {
    fprintf(stderr, "bench_rsum: error: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < nx * n; i++) { /* deltas: signs, magnitudes 2^-12..2^-4; activations in [0, 1) */
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    d[i] = ldexpf((float)(r % 2000001) / 1e6f - 1.0f, (int)(r >> 40) % 9 - 12);
  }
  for (size_t i = 0; i < ny * n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    a[i] = (float)(r % 1000001) / 1e6f;
  }
  /* the global exponents: a pass the train step makes anyway */
  for (size_t i = 0; i < nx; i++) ex[i] = gsum_exponent(gsum_absmax(n, d + i * n));
  for (size_t j = 0; j < ny; j++) ey[j] = gsum_exponent(gsum_absmax(n, a + j * n));
  int bad = outer_paths(n, rounds, nx, d, ex, ny, a, ey, st); /* a hidden layer */
  /* the output layer: one delta row (gsum's pass for few rows) */
  bad |= outer_paths(n, rounds, 1, d, ex, ny, a, ey, st);
  hot_vs_streamed(n, rounds, nx, d, ex, ny, a, ey, st);
#if defined(__x86_64__)
  bad |= floor_fma_probe(n, rounds, nx, d, ex, ny, a, ey, st);
  if (__builtin_cpu_supports("avx512f")) bad |= floor_fma_accuracy(n);
#endif
  free(d), free(a), free(st);
  return rsum_paths(rounds) || bad;
}
