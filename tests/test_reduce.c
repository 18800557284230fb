/* tests/test_reduce.c: unit tests of kernels/reduce.h, all three strategies.
 * Accuracy is checked against an exact reference (a Shewchuk expansion) on
 * hard data; reproducibility bitwise over thread counts, shuffles and splits;
 * determinism bitwise run to run; the seeded atomic order must change bits. */
#include "reduce.h"
#include "reduce_impl.h"
#include "hashrng.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      failures++;                                          \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);          \
      printf(__VA_ARGS__);                                 \
      printf("\n");                                        \
    }                                                      \
  } while (0)

/* Exact reference: the values are added into a nonoverlapping expansion with
 * error-free two-sums (Shewchuk 1997); the expansion is then summed from the
 * smallest component up, which is within one rounding of the exact sum. */
typedef struct {
  int     n;
  double *e;
} expansion;

static void exp_add(expansion *x, double b)
{
  int m = 0;
  for (int i = 0; i < x->n; i++) {
    double a = x->e[i], s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
    if (err != 0.0) x->e[m++] = err;
    b = s;
  }
  if (b != 0.0) x->e[m++] = b;
  x->n = m;
}

static double exact_sum(red_op_t op, size_t n, const double *x, const double *y)
{
  expansion ex = {0, malloc(4096 * sizeof(double))};
  for (size_t i = 0; i < n; i++) {
    double a = x[i], b = op == RED_OP_DOT ? y[i] : x[i], p = a * b, perr = fma(a, b, -p);
    if (op == RED_OP_SUM) exp_add(&ex, a);
    else if (op == RED_OP_ASUM) exp_add(&ex, fabs(a));
    else { /* the kernels sum the rounded products: so does the reference */
      (void)perr;
      exp_add(&ex, p);
    }
  }
  double s = 0.0;
  for (int i = 0; i < ex.n; i++) s += ex.e[i];
  free(ex.e);
  return s;
}

static double abs_sum(red_op_t op, size_t n, const double *x, const double *y)
{
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += fabs(op == RED_OP_DOT ? x[i] * y[i] : op == RED_OP_SUMSQ ? x[i] * x[i] : x[i]);
  return s;
}

static double max_abs(red_op_t op, size_t n, const double *x, const double *y)
{
  double m = 0.0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(op == RED_OP_DOT ? x[i] * y[i] : op == RED_OP_SUMSQ ? x[i] * x[i] : x[i]));
  return m;
}

static uint64_t bits(double v)
{
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

enum { DATA_UNIFORM, DATA_WIDE, DATA_CANCEL, NDATA };
static const char *data_name[] = {"uniform", "wide-range", "cancellation"};

/* Fill x (and y) with a hard data set of length n from stream seed. */
static void make_data(int kind, size_t n, uint64_t seed, double *x, double *y)
{
  for (size_t i = 0; i < n; i++) {
    double u = rng_uniform(seed, 2 * i), w = rng_uniform(seed, 2 * i + 1);
    switch (kind) {
    case DATA_UNIFORM: x[i] = u, y[i] = w; break;
    case DATA_WIDE: /* signs mixed, magnitudes over 2^-40 .. 2^40 */
      x[i] = (2 * u - 1) * ldexp(1.0, (int)(w * 80) - 40), y[i] = ldexp(1.0 + u, (int)(u * 20) - 10);
      break;
    default: /* pairs +-big cancel exactly, leaving small values */
      if (i % 2 == 0) x[i] = ldexp(1.0 + u, 30);
      else x[i] = -x[i - 1] + ldexp(w, -20);
      y[i] = 1.0 + 0x1p-30 * u;
    }
  }
  /* shuffle so that the cancelling partners are far apart */
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(mix64(seed + i) % i);
    double t = x[i - 1];
    x[i - 1] = x[j], x[j] = t;
    t = y[i - 1], y[i - 1] = y[j], y[j] = t;
  }
}

static void test_accuracy(size_t n)
{
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int kind = 0; kind < NDATA; kind++) {
    make_data(kind, n, 42 + kind, x, y);
    for (int op = 0; op < 4; op++) {
      double ref = exact_sum(op, n, x, y), as = abs_sum(op, n, x, y), mx = max_abs(op, n, x, y);
      double tree = (ceil(log2((double)n + 1)) + 8) * DBL_EPSILON / 2 * as; /* pairwise + 8 lanes */
      for (int s = 0; s < 3; s++) {
        double r = red_reduce(s, op, n, x, y), err = fabs(r - ref);
        double bound = s == RED_REPRODUCIBLE ? 2 * DBL_EPSILON * fabs(ref) + n * 0x1p-80 * mx : s == RED_DETERMINISTIC ? tree : n * DBL_EPSILON * as;
        CHECK(err <= bound, "%s n=%zu %s op=%d: |%.17g - %.17g| = %g > bound %g", red_strategy_name(s), n, data_name[kind], op, r, ref, err, bound);
        if (s == RED_REPRODUCIBLE) CHECK(err <= tree || err == 0, "reproducible worse than the tree bound on %s", data_name[kind]);
      }
    }
  }
  free(x), free(y);
}

/* Reproducible: same bits for threads 1..4, a shuffled copy, and any split
 * into pieces combined in any order. Deterministic: same bits on reruns. */
static void test_bitwise(size_t n)
{
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *xs = malloc(n * sizeof *xs), *ys = malloc(n * sizeof *ys);
  for (int kind = 0; kind < NDATA; kind++) {
    make_data(kind, n, 7 + kind, x, y);
    memcpy(xs, x, n * sizeof *x), memcpy(ys, y, n * sizeof *y);
    for (size_t i = n; i > 1; i--) { /* a different shuffle of the same pairs */
      size_t j = (size_t)(mix64(1234 + i) % i);
      double t = xs[i - 1];
      xs[i - 1] = xs[j], xs[j] = t, t = ys[i - 1], ys[i - 1] = ys[j], ys[j] = t;
    }
    for (int op = 0; op < 4; op++) {
      omp_set_num_threads(1);
      double r1 = red_reduce(RED_REPRODUCIBLE, op, n, x, y), d1 = red_reduce(RED_DETERMINISTIC, op, n, x, y);
      for (int t = 2; t <= 4; t++) {
        omp_set_num_threads(t);
        double r = red_reduce(RED_REPRODUCIBLE, op, n, x, y), d = red_reduce(RED_DETERMINISTIC, op, n, x, y);
        CHECK(bits(r) == bits(r1), "reproducible %s op=%d threads=%d: %.17g != %.17g", data_name[kind], op, t, r, r1);
        CHECK(bits(d) == bits(d1), "deterministic %s op=%d threads=%d: %.17g != %.17g", data_name[kind], op, t, d, d1);
        CHECK(bits(red_reduce(RED_DETERMINISTIC, op, n, x, y)) == bits(d), "deterministic rerun differs");
      }
      double rs = red_reduce(RED_REPRODUCIBLE, op, n, xs, ys);
      CHECK(bits(rs) == bits(r1), "reproducible %s op=%d shuffled: %.17g != %.17g", data_name[kind], op, rs, r1);
      /* split into 7 uneven pieces ("ranks"), partials combined in reverse */
      red_partial_t p[7];
      size_t        cut[8] = {0, 1, n / 9, n / 3, n / 3 + 5, n / 2, n > 3 ? n - 3 : n, n};
      for (int k = 1; k < 8; k++) cut[k] = cut[k] < cut[k - 1] ? cut[k - 1] : cut[k] > n ? n : cut[k];
      for (int k = 0; k < 7; k++) red_local(RED_REPRODUCIBLE, op, cut[k + 1] - cut[k], x + cut[k], y + cut[k], &p[6 - k]);
      double rp = red_combine(RED_REPRODUCIBLE, 7, p);
      CHECK(bits(rp) == bits(r1), "reproducible %s op=%d split: %.17g != %.17g", data_name[kind], op, rp, r1);
    }
  }
  omp_set_num_threads(2);
  free(x), free(y), free(xs), free(ys);
}

static void test_atomic_seed(size_t n)
{
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  make_data(DATA_WIDE, n, 99, x, y);
  double r[8];
  int    distinct = 0;
  for (int s = 0; s < 8; s++) {
    red_set_atomic_order_seed(1000 + s);
    r[s] = red_reduce(RED_ATOMIC, RED_OP_SUM, n, x, y);
    int seen = 0;
    for (int t = 0; t < s; t++) seen |= bits(r[t]) == bits(r[s]);
    distinct += !seen;
  }
  CHECK(distinct >= 2, "atomic: 8 seeds gave %d distinct results; expected differing bits", distinct);
  red_set_atomic_order_seed(1003);
  CHECK(bits(red_reduce(RED_ATOMIC, RED_OP_SUM, n, x, y)) == bits(r[3]), "atomic: the same seed must replay the same bits");
  printf("atomic seeded order: %d distinct sums out of 8 seeds (n=%zu)\n", distinct, n);
  red_set_atomic_order_seed(0);
  free(x), free(y);
}

static void test_mdot_special(void)
{
  enum { N = 5000 };
  static double x[N], y0[N], y1[N];
  make_data(DATA_WIDE, N, 5, x, y0);
  make_data(DATA_UNIFORM, N, 6, y1, y1);
  const double *ys[2] = {y0, y1};
  for (int s = 0; s < 3; s++) {
    red_partial_t p[2];
    red_local_mdot(s, N, x, 2, ys, p);
    for (int j = 0; j < 2; j++) {
      red_partial_t q;
      red_local(s, RED_OP_DOT, N, x, ys[j], &q);
      if (s != RED_ATOMIC) CHECK(bits(red_combine(s, 1, &p[j])) == bits(red_combine(s, 1, &q)), "%s mdot[%d] != dot", red_strategy_name(s), j);
    }
    CHECK(red_reduce(s, RED_OP_SUM, 0, x, NULL) == 0.0, "%s empty sum", red_strategy_name(s));
    double one[3] = {1.5, INFINITY, -2.0}, nan3[3] = {1.0, NAN, INFINITY}, inf2[2] = {INFINITY, -INFINITY};
    CHECK(red_reduce(s, RED_OP_SUM, 1, one, NULL) == 1.5, "%s single value", red_strategy_name(s));
    CHECK(isinf(red_reduce(s, RED_OP_SUM, 3, one, NULL)), "%s Inf must propagate", red_strategy_name(s));
    CHECK(isnan(red_reduce(s, RED_OP_SUM, 3, nan3, NULL)), "%s NaN must propagate", red_strategy_name(s));
    CHECK(isnan(red_reduce(s, RED_OP_SUM, 2, inf2, NULL)), "%s Inf-Inf must be NaN", red_strategy_name(s));
    double tiny[3] = {0x1p-1074, 0x1p-1074, DBL_MIN}, huge[2] = {DBL_MAX / 2, DBL_MAX / 4};
    CHECK(red_reduce(s, RED_OP_SUM, 3, tiny, NULL) == DBL_MIN + 0x1p-1073, "%s subnormal sum", red_strategy_name(s));
    CHECK(red_reduce(s, RED_OP_SUM, 2, huge, NULL) == 0.75 * DBL_MAX, "%s near-overflow sum", red_strategy_name(s));
  }
}

/* The reproducible sum is the correctly rounded exact sum, for either sign,
 * when every value is a multiple of the lowest kept unit: values m * 2^-80
 * with |v| < 2^39 (the top bin is then 0, the kept units 2^0, 2^-40, 2^-80),
 * so the exact sum S (in units of 2^-80, |S| < 2^127 for n <= 256) is held in
 * an __int128. Checked without trusting any conversion: R = r * 2^80 is an
 * integer, and |S - R| must be at most half an ulp of r (ties: r even). */
typedef __int128 i128;
static int correctly_rounded(i128 S, double r)
{
  if (S == 0) return r == 0.0 && !signbit(r);
  i128 R = (i128)ldexp(r, 80), D = S - R;
  int  e;
  (void)frexp(r, &e);
  int ue = e - 53 + 80; /* ulp(r) = 2^(e-53), in units of 2^-80: 2^ue */
  if (ue <= 0) return D == 0; /* r would be exact: below the unit */
  i128 half = (i128)1 << (ue - 1), ad = D < 0 ? -D : D;
  if (ad < half) return 1;
  if (ad > half) return 0;
  return ((int64_t)(R >> ue) & 1) == 0; /* a tie: r must be even */
}

static void test_exact_rounding(void)
{
  enum { N = 256, TRIALS = 4000 };
  static double v[N];
  int          bad = 0, negative = 0;
  /* the cases that were wrong: a small remainder of either sign */
  const double c1[3] = {1, -1, -1e-20}, c2[3] = {1e6, -1e6, -1e-6}, c3[3] = {3, -3, -M_PI / 1000};
  for (int sg = -1; sg <= 1; sg += 2) {
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; k++) a[k] = c1[k] * (k == 2 ? -sg : 1), b[k] = c2[k] * (k == 2 ? -sg : 1), c[k] = c3[k] * (k == 2 ? -sg : 1);
    double ea = ldexp(nearbyint(ldexp(a[2], 80)), -80); /* 1e-20 has bits below the kept unit 2^-80 */
    CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, a, NULL) == ea, "reproducible {1, -1, %g} = %.17g, not %.17g", a[2], red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, a, NULL), ea);
    CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, b, NULL) == b[2], "reproducible {1e6, -1e6, %g} = %.17g", b[2], red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, b, NULL));
    CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, c, NULL) == c[2], "reproducible {3, -3, %g} = %.17g", c[2], red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, c, NULL));
  }
  /* random: cancelling pairs, wide exponents, a remainder of either sign */
  for (int t = 0; t < TRIALS; t++) {
    i128   S = 0;
    size_t n = 2 + (size_t)(rng_uniform(100, (uint64_t)t) * (N - 2));
    for (size_t i = 0; i < n; i++) {
      uint64_t k    = (uint64_t)t * N + i;
      int      ex   = (int)(rng_uniform(101, k) * 118) - 79; /* value in [2^(ex-1), 2^ex), ex <= 38 */
      int      cap  = ex + 80 < 53 ? ex + 80 : 53;                   /* significant bits, none below 2^-80 */
      int      mb   = 1 + (int)(rng_uniform(102, k) * cap);
      int64_t  m    = (int64_t)(rng_uniform(103, k) * ldexp(1.0, mb - 1)) | ((int64_t)1 << (mb - 1));
      double   x    = ldexp((double)m, ex - mb);
      if (rng_uniform(104, k) < 0.5) x = -x;
      if (i % 2 == 1 && rng_uniform(105, k) < 0.7) x = -v[i - 1]; /* cancellation */
      v[i] = x;
      S += (i128)ldexp(x, 80);
    }
    double r = red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, n, v, NULL);
    negative += S < 0;
    if (!correctly_rounded(S, r)) {
      bad++;
      if (bad <= 3) printf("  trial %d: n=%zu, not the correctly rounded exact sum: %.17g\n", t, n, r);
    }
  }
  CHECK(bad == 0, "reproducible sum not correctly rounded in %d of %d trials (%d with a negative sum)", bad, TRIALS, negative);
  /* subnormal results: multiples of 2^-1074 with either sign, exact */
  double sub[4] = {0x1p-1074 * 12345, -0x1p-1074 * 70000, 0x1p-1060, -0x1p-1060};
  CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 4, sub, NULL) == 0x1p-1074 * (12345.0 - 70000.0), "subnormal sum of either sign");
  printf("reproducible exact rounding: %d random trials (%d with a negative sum) correctly rounded\n", TRIALS, negative);
}

/* Scatter-add: a 1-D face loop (flux to both cells) on shuffled faces. */
static void test_scatter(void)
{
  enum { NC = 20000 };
  size_t   nf = NC - 1, nk = 2 * nf;
  int64_t *tg = malloc(nk * sizeof *tg), *tg2 = malloc(nk * sizeof *tg2);
  double  *val = malloc(nk * sizeof *val), *val2 = malloc(nk * sizeof *val2), y[3][NC], yref[NC];
  for (size_t f = 0; f < nf; f++) {
    double flux = (2 * rng_uniform(3, f) - 1) * ldexp(1.0, (int)(rng_uniform(4, f) * 60) - 30);
    tg[2 * f] = (int64_t)f, val[2 * f] = flux, tg[2 * f + 1] = (int64_t)f + 1, val[2 * f + 1] = -flux;
  }
  for (size_t k = 0; k < nk; k++) { /* the same contributions, reversed */
    tg2[k] = tg[nk - 1 - k], val2[k] = val[nk - 1 - k];
  }
  scatter_plan *p, *p2;
  CHECK(scatter_plan_create(NC, nk, tg, &p) == 0 && scatter_plan_create(NC, nk, tg2, &p2) == 0, "plan");
  int64_t bad = NC;
  scatter_plan *pb;
  CHECK(scatter_plan_create(NC, 1, &bad, &pb) != 0 && pb == NULL, "out-of-range target must be rejected");
  for (int c = 0; c < NC; c++) { /* reference: each cell exactly */
    double v[3] = {1.0, c > 0 ? val[2 * (c - 1) + 1] : 0.0, c < NC - 1 ? val[2 * c] : 0.0};
    yref[c] = exact_sum(RED_OP_SUM, 3, v, NULL);
  }
  for (int s = 0; s < 3; s++) {
    double a[NC], b[NC];
    for (int c = 0; c < NC; c++) y[s][c] = 1.0, a[c] = 1.0, b[c] = 1.0;
    scatter_add(s, p, val, y[s]);
    scatter_add(s, p, val, a);
    scatter_add(s, p2, val2, b);
    int bad_err = 0, diff_rerun = 0, diff_order = 0;
    for (int c = 0; c < NC; c++) {
      bad_err += fabs(y[s][c] - yref[c]) > 4 * DBL_EPSILON * (1.0 + fabs(val[2 * (c ? c - 1 : 0)]) + fabs(val[2 * c < (int)nk ? 2 * c : 0]));
      diff_rerun += bits(a[c]) != bits(y[s][c]);
      diff_order += bits(b[c]) != bits(y[s][c]);
    }
    CHECK(bad_err == 0, "scatter %s: %d cells off the exact value", red_strategy_name(s), bad_err);
    if (s != RED_ATOMIC) CHECK(diff_rerun == 0, "scatter %s: rerun differs in %d cells", red_strategy_name(s), diff_rerun);
    if (s == RED_REPRODUCIBLE) CHECK(diff_order == 0, "scatter reproducible: reversed contribution order changed %d cells", diff_order);
    if (s == RED_DETERMINISTIC) CHECK(diff_order > 0, "scatter deterministic: reversing the index order should change some bits");
  }
  scatter_plan_destroy(&p), scatter_plan_destroy(&p2);
  free(tg), free(tg2), free(val), free(val2);
}

/* gsum_add_outer (the global-unit sums of the reproducible gradient): every
 * pair's state must equal a scalar model written independently (rint instead
 * of the magic constants, __int128 sums), whatever the ISA path
 * (MINIAPP_RSUM_ISA), the chunking and the order of the chunks; on rows over
 * many binades, subnormal floats, zeros of both signs, a zero row, Inf and
 * NaN, and rows whose maximum sits at another sample than the other row's. */
static float outer_value(uint64_t seed, size_t r, size_t i)
{
  uint64_t h = mix64(seed ^ mix64(r * 1000003u + i));
  int      kind = (int)(r % 8);
  double   u = (double)(h >> 11) * 0x1p-53 - 0.5;
  switch (kind) {
  case 0: return (float)u;                                              /* plain */
  case 1: return (float)ldexp(u, (int)(h % 250) - 125);                 /* wide range */
  case 2: return i == 3 ? 1e30f : (float)ldexp(u, -60);                 /* one big value, the rest far below */
  case 3: return i == 5 ? 1e-30f : (float)ldexp(u, 60);                 /* ... and its mirror */
  case 4: return (h & 1) ? -0.0f : (float)ldexp(u, -140);               /* subnormals and -0 */
  case 5: return 0.0f;                                                  /* a zero row */
  case 6: return i == 9 ? (r % 16 < 8 ? INFINITY : NAN) : (float)u;     /* non-finite */
  default: return (float)(u * ((h >> 3) % 3 == 0 ? 1e6 : 1e-6));        /* two magnitudes */
  }
}

/* The model: q = rint(v 2^51) of each scaled product v = x y 2^-(ex+ey),
 * summed in __int128. */
static void gsum_model(size_t n, const float *x, const float *y, int32_t ex, int32_t ey, gsum_t *g)
{
  gsum_init(g);
  if (ex == GSUM_NONFINITE || ey == GSUM_NONFINITE) {
    for (size_t i = 0; i < n; i++) {
      double v = (double)x[i] * (y ? (double)y[i] : 1.0);
      if (!isfinite(v)) g->special = g->nonfinite ? g->special + v : v, g->nonfinite = 1;
    }
    return;
  }
  if (ex == GSUM_ZERO || ey == GSUM_ZERO) return;
  for (size_t i = 0; i < n; i++) {
    double v  = ldexp((double)x[i] * (y ? (double)y[i] : 1.0), -(ex + ey));
    g->c += (__int128)rint(ldexp(v, 51));
  }
}

static int gsum_same(const gsum_t *a, const gsum_t *b)
{
  if (a->nonfinite || b->nonfinite) return a->nonfinite && b->nonfinite && (isnan(a->special) ? isnan(b->special) != 0 : bits(a->special) == bits(b->special));
  return a->c == b->c;
}

static void test_outer(void)
{
  size_t sizes[] = {1, 7, 255, 256, 257, 1000, 1031};
  int    pairs = 0, bad = 0, badsplit = 0, offmax = 0;
  for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
    size_t   n = sizes[t], nx = 11, ny = t % 2 ? 37 : 13, ld = n + 5, cut[] = {0, n / 3, n - n / 4, n}; /* 37 + the bias: two groups of y rows */
    float   *x = malloc(nx * ld * sizeof *x), *y = malloc(ny * ld * sizeof *y);
    gsum_t  *r = malloc(nx * (ny + 1) * sizeof *r), *r2 = malloc(nx * (ny + 1) * sizeof *r2), ref;
    int32_t *ex = malloc(nx * sizeof *ex), *ey = malloc(ny * sizeof *ey);
    for (size_t p = 0; p < nx; p++) {
      for (size_t i = 0; i < n; i++) x[p * ld + i] = outer_value(1, p, i);
      ex[p] = gsum_exponent(gsum_absmax(n, x + p * ld));
    }
    for (size_t q = 0; q < ny; q++) {
      for (size_t i = 0; i < n; i++) y[q * ld + i] = outer_value(2, q + 3, i);
      ey[q] = gsum_exponent(gsum_absmax(n, y + q * ld));
    }
    for (size_t k = 0; k < nx * (ny + 1); k++) gsum_init(&r[k]), gsum_init(&r2[k]);
    gsum_add_outer(r, r + nx * ny, n, nx, x, ld, ex, ny, y, ld, ey);
    for (int c = 2; c >= 0; c--) /* three pieces, last first */
      gsum_add_outer(r2, r2 + nx * ny, cut[c + 1] - cut[c], nx, x + cut[c], ld, ex, ny, y + cut[c], ld, ey);
    for (size_t p = 0; p < nx; p++)
      for (size_t q = 0; q <= ny; q++) {
        const gsum_t *a = q < ny ? &r[p * ny + q] : &r[nx * ny + p], *a2 = q < ny ? &r2[p * ny + q] : &r2[nx * ny + p];
        gsum_model(n, x + p * ld, q < ny ? y + q * ld : NULL, ex[p], q < ny ? ey[q] : 1, &ref);
        if (!gsum_same(a, &ref) && bad++ < 3) printf("  outer n=%zu pair (%zu,%zu): state differs from the model\n", n, p, q);
        if (!gsum_same(a, a2)) badsplit++;
        if (q < ny && !ref.nonfinite) { /* a pair whose rows peak at different samples: the bound exceeds every product */
          double bp = 0;
          for (size_t i = 0; i < n; i++) bp = fmax(bp, fabs((double)x[p * ld + i] * y[q * ld + i]));
          if (bp > 0 && ldexp(bp, 4) < (double)gsum_absmax(n, x + p * ld) * gsum_absmax(n, y + q * ld)) offmax++;
        }
        pairs++;
      }
    free(x), free(y), free(r), free(r2), free(ex), free(ey);
  }
  CHECK(bad == 0, "gsum_add_outer: %d of %d pair states differ from the model", bad, pairs);
  CHECK(badsplit == 0, "gsum_add_outer: %d of %d pair states depend on the chunking", badsplit, pairs);
  CHECK(offmax > 0, "gsum_add_outer: the data must include pairs whose bound is far above their largest product");
  printf("gsum_add_outer (%s path): %d pairs (%d with the bound 16x above every product), states equal to the model and to three pieces in reverse: %s\n", rsum_isa(), pairs, offmax,
         bad || badsplit ? "no" : "yes");
  { /* MINIAPP_RSUM_ISA names the path under test (kernels_reduce_isa_*): it must be the one taken, where the CPU has it */
    const char *want = getenv("MINIAPP_RSUM_ISA");
    if (want && strcmp(want, rsum_isa()) && !(!strcmp(want, "avx512") && !__builtin_cpu_supports("avx512vl")) && !(!strcmp(want, "avx2") && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))))
      CHECK(0, "MINIAPP_RSUM_ISA=%s, but gsum_add_outer took the %s path", want, rsum_isa());
  }
}

/* The global-unit sums' accuracy on the hard data sets (as floats), n up to
 * 2^24 + 3: |value - exact| <= n 2^(ex+ey-52) + 2 eps |exact|, i.e. n 2^-50
 * max|x| max|y| plus the final rounding; and, where the bound is not far
 * above the products (gradients), orders of magnitude below the float tree's
 * error bound (log2 n + 8) 2^-24 sum |x y|, the deterministic strategy's. */
static void test_outer_accuracy(size_t n)
{
  double *xd = malloc(n * sizeof *xd), *yd = malloc(n * sizeof *yd);
  float  *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int kind = 0; kind <= NDATA; kind++) {
    if (kind < NDATA) make_data(kind, n, 77 + kind, xd, yd);
    else /* floats over 2^-120 .. 2^20: most products have bits below the unit */
      for (size_t i = 0; i < n; i++) {
        double u = rng_uniform(91, 2 * i), w = rng_uniform(91, 2 * i + 1);
        xd[i] = (2 * u - 1) * ldexp(1.0, (int)(w * 140) - 120), yd[i] = 1.0 + w;
      }
    for (size_t i = 0; i < n; i++) x[i] = (float)xd[i], y[i] = (float)yd[i], xd[i] = x[i], yd[i] = y[i];
    int32_t ex = gsum_exponent(gsum_absmax(n, x)), ey = gsum_exponent(gsum_absmax(n, y));
    gsum_t  g;
    rsum_t  rs;
    gsum_init(&g);
    for (size_t c = 0; c < n; c += 1024) gsum_add_outer(&g, NULL, n - c < 1024 ? n - c : 1024, 1, x + c, n, &ex, 1, y + c, n, &ey);
    gsum_to_rsum(&g, ex, ey, &rs);
    double v = rsum_value(&rs), ref = exact_sum(RED_OP_DOT, n, xd, yd), err = fabs(v - ref);
    double bound = (double)n * ldexp(1.0, ex + ey - 52) + 2 * DBL_EPSILON * fabs(ref);
    double tree  = (ceil(log2((double)n + 1)) + 8) * 0x1p-24 * abs_sum(RED_OP_DOT, n, xd, yd);
    CHECK(err <= bound, "gsum n=%zu %s: |%.17g - %.17g| = %g > bound %g", n, kind < NDATA ? data_name[kind] : "float-wide", v, ref, err, bound);
    CHECK(err <= 1e-6 * tree, "gsum n=%zu %s: error %g is not 6 orders of magnitude below the float tree's bound %g", n, kind < NDATA ? data_name[kind] : "float-wide", err, tree);
    if (n > 1000000) printf("gsum n=%zu %s: error %.3g, bound %.3g, float tree bound %.3g\n", n, kind < NDATA ? data_name[kind] : "float-wide", err, bound, tree);
  }
  free(xd), free(yd), free(x), free(y);
}

/* ---- fused passes: red_cg_tail and red_dot_blocks against their unfused
 * order (element-wise steps, then red_local), bitwise, for every strategy
 * (atomic: seeded, and real atomics on one thread), 1-3 threads, odd sizes,
 * w aliasing z as in CG, and full and periodic diagonals. */
typedef struct {
  const double *x;
  double       *y;
} produce_ctx;

static const double *produce(void *ctx, size_t i0, size_t m, double *xs) /* y_i = 3 x_i - i, block by block; x from scratch in odd blocks */
{
  produce_ctx *c = ctx;
  for (size_t i = i0; i < i0 + m; i++) c->y[i] = 3 * c->x[i] - (double)i;
  if ((i0 / RED_BLOCK) % 2 == 0) return c->x + i0;
  memcpy(xs, c->x + i0, m * sizeof *xs);
  return xs;
}

static int same_partial(red_strategy_t s, const red_partial_t *a, const red_partial_t *b)
{
  return bits(red_combine(s, 1, a)) == bits(red_combine(s, 1, b));
}

static void test_fused(size_t n, int kind)
{
  double *v = malloc(12 * n * sizeof *v), *x0 = v, *p = v + n, *r0 = v + 2 * n, *w0 = v + 3 * n, *d = v + 4 * n, *x = v + 5 * n, *r = v + 6 * n, *z = v + 7 * n,
         *xf = v + 8 * n, *rf = v + 9 * n, *zf = v + 10 * n, *y = v + 11 * n;
  const double a = 0.7853981633974483;
  make_data(kind, n, 41, x0, p);
  make_data(kind, n, 43, r0, w0);
  for (size_t i = 0; i < n; i++) d[i] = i % 5 ? 1.0 / (1.0 + (double)(i % 7)) : 0x1p26; /* big and small summands: the grouping shows in the bits */
  for (int k = 0; k < 4; k++) {
    red_strategy_t s    = k == 3 ? RED_REPRODUCIBLE : k == 2 ? RED_DETERMINISTIC : RED_ATOMIC;
    uint64_t       seed = k == 0 ? 0 : 5; /* k 0: real atomics (one thread only: a fixed order) */
    for (int t = 1; t <= 3; t++) {
      if (k == 0 && t > 1) continue;
      omp_set_num_threads(t);
      for (int v = 0; v < 6; v++) {
        const int     alias = v % 2;
        const size_t  dp    = (size_t)(v / 2); /* 0: a full diagonal; 1, 2: periodic */
        red_partial_t zz, zr, uzz, uzr;
        red_atomic_state st0, st1, st2;
        memcpy(x, x0, n * sizeof *x), memcpy(r, r0, n * sizeof *r), memcpy(z, w0, n * sizeof *z);
        memcpy(xf, x0, n * sizeof *x), memcpy(rf, r0, n * sizeof *r), memcpy(zf, w0, n * sizeof *z);
        const double *w = alias ? z : w0, *wf = alias ? zf : w0;
        red_set_atomic_order_seed(seed);
        for (size_t i = 0; i < n; i++) { /* the unfused order: AXPY, AXPY, Jacobi, norm, dot */
          double ri = -a * w[i] + r[i];
          x[i] = a * p[i] + x[i], r[i] = ri, z[i] = ri * d[dp ? i % dp : i];
        }
        red_local(s, RED_OP_SUMSQ, n, z, NULL, &uzz);
        red_local(s, RED_OP_DOT, n, z, r, &uzr);
        red_get_atomic_order_state(&st0);
        red_set_atomic_order_seed(seed);
        red_cg_tail(s, n, a, xf, p, rf, wf, d, dp, zf, &zz, &zr);
        red_get_atomic_order_state(&st1);
        CHECK(!memcmp(x, xf, n * sizeof *x) && !memcmp(r, rf, n * sizeof *r) && !memcmp(z, zf, n * sizeof *z), "red_cg_tail %s n=%zu threads=%d alias=%d period %zu: vectors differ from the unfused steps", red_strategy_name(s), n, t, alias, dp);
        CHECK(same_partial(s, &zz, &uzz) && same_partial(s, &zr, &uzr), "red_cg_tail %s seed %llu n=%zu threads=%d alias=%d period %zu: partials differ from red_local's", red_strategy_name(s), (unsigned long long)seed, n, t, alias, dp);
        CHECK(st0.calls == st1.calls, "red_cg_tail %s: %llu seeded draws, red_local %llu", red_strategy_name(s), (unsigned long long)st1.calls, (unsigned long long)st0.calls);
        /* red_dot_blocks: y produced in blocks, x.y formed in the same pass */
        produce_ctx c = {x0, y};
        red_partial_t pf, pu;
        memset(y, 0, n * sizeof *y);
        red_set_atomic_order_seed(seed);
        red_dot_blocks(s, n, produce, &c, x0, y, &pf);
        red_get_atomic_order_state(&st2);
        red_set_atomic_order_seed(seed);
        red_local(s, RED_OP_DOT, n, x0, y, &pu);
        red_get_atomic_order_state(&st1);
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= bits(y[i]) == bits(3 * x0[i] - (double)i);
        CHECK(ok, "red_dot_blocks n=%zu: a block was not produced", n);
        CHECK(same_partial(s, &pf, &pu) && st1.calls == st2.calls, "red_dot_blocks %s seed %llu n=%zu threads=%d: %.17g, red_local %.17g", red_strategy_name(s), (unsigned long long)seed, n, t, red_combine(s, 1, &pf), red_combine(s, 1, &pu));
      }
    }
  }
  red_set_atomic_order_seed(0);
  omp_set_num_threads(omp_get_num_procs());
  free(v);
}

/* rsum_add_sumsq_dot (the CG tail's two sums in one pass) against two
 * rsum_add calls, with a NaN in r, an Inf in z, and a z whose square
 * overflows while z r does not: each sum keeps its own non-finite handling. */
static void test_sumsq_dot(void)
{
  enum { N = 3000 };
  static double z[N], r[N];
  for (int c = 0; c < 4; c++) {
    for (size_t i = 0; i < N; i++) z[i] = rng_uniform(7, i) - 0.5, r[i] = ldexp(rng_uniform(8, i), (int)(i % 40) - 20);
    if (c == 1) r[1500] = NAN;
    if (c == 2) z[2999] = INFINITY;
    if (c == 3) z[17] = 1e200, r[17] = 1e-200;
    rsum_t a, b, a1, b1;
    rsum_init(&a), rsum_init(&b), rsum_init(&a1), rsum_init(&b1);
    rsum_add_sumsq_dot(&a, &b, N, z, r);
    rsum_add(&a1, RED_OP_SUMSQ, N, z, NULL);
    rsum_add(&b1, RED_OP_DOT, N, z, r);
    double va = rsum_value(&a), vb = rsum_value(&b), wa = rsum_value(&a1), wb = rsum_value(&b1);
    CHECK((bits(va) == bits(wa) || (isnan(va) && isnan(wa))) && (bits(vb) == bits(wb) || (isnan(vb) && isnan(wb))), "rsum_add_sumsq_dot case %d: %.17g %.17g, rsum_add %.17g %.17g", c, va, vb, wa, wb);
    if (c == 1) CHECK(isfinite(va) && isnan(vb), "a NaN in r must leave z.z finite and make z.r NaN");
    if (c == 3) CHECK(isinf(va) && isfinite(vb), "an overflowing z^2 must make z.z Inf and leave z.r finite");
  }
}

/* rsum's state against its definition, on every vector path the CPU has:
 * with T the smallest bin whose range holds the largest |v| (max |v| <
 * 2^((T+1)W - 1)), every value v is split by the cascade q_j = rint(r 2^-jW),
 * r -= q_j 2^jW for j = T, T-1, T-2 (ties to even), and bin k counts the
 * sum of q_(T-k). The model is scalar and written apart from the kernels;
 * the state must match it bit for bit, whatever the path, the chunking into
 * threads and the tail lengths. Data sets: the hard ones above, and values
 * near the overflow and subnormal ranges (the kernels' scaled branch). */
static void rsum_model(size_t n, const double *v, rsum_t *m)
{
  rsum_init(m);
  double mx = 0.0;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) { /* the bins then do not matter: rsum_value is the non-finite values' sum */
      m->special   = m->nonfinite ? m->special + v[i] : v[i];
      m->nonfinite = 1;
    } else mx = fmax(mx, fabs(v[i]));
  if (m->nonfinite || mx == 0.0) return;
  int T = -40;
  while (!(mx < ldexp(1.0, (T + 1) * RSUM_W - 1))) T++;
  m->top = T;
  for (size_t i = 0; i < n; i++) {
    double r = v[i];
    for (int k = 0; k < RSUM_FOLD; k++) { /* in units of bin j: exact scalings, no overflow near DBL_MAX */
      int    j = T - k;
      double s = ldexp(r, -j * RSUM_W), q = nearbyint(s);
      r = ldexp(s - q, j * RSUM_W);
      m->bin[k] += (__int128)q;
    }
  }
}

static int rsum_same(const rsum_t *a, const rsum_t *b)
{
  if (a->nonfinite || b->nonfinite)
    return a->nonfinite == b->nonfinite && (bits(a->special) == bits(b->special) || (isnan(a->special) && isnan(b->special)));
  if (a->top != b->top) return 0;
  for (int k = 0; k < RSUM_FOLD; k++)
    if (a->bin[k] != b->bin[k]) return 0;
  return 1;
}

static void test_rsum_model(void)
{
  const char *isa[] = {"generic", "avx2", "avx512"};
  size_t      sizes[] = {0, 1, 3, 5, 1023, 1029, 4099, 70001};
  enum { NMAX = 70001, NKIND = NDATA + 5 };
  double *x = malloc(NMAX * sizeof *x), *y = malloc(NMAX * sizeof *y), *v = malloc(NMAX * sizeof *v);
  float  *fx = malloc(NMAX * sizeof *fx), *fy = malloc(NMAX * sizeof *fy);
  int     cases = 0, paths = 0;
  for (int p = 0; p < 3; p++) {
    if (p > 0 && !strcmp(rsum_set_isa(isa[p]), rsum_set_isa(isa[p - 1]))) continue; /* the CPU lacks it */
    rsum_set_isa(isa[p]), paths++;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
      for (int kind = 0; kind < NKIND; kind++) {
        size_t n = sizes[si];
        make_data(kind < NDATA ? kind : DATA_WIDE, n, 90 + kind, x, y);
        for (size_t i = 0; i < n; i++) fx[i] = (float)x[i], fy[i] = (float)y[i]; /* float products stay far from both edges */
        for (size_t i = 0; kind >= NDATA && i < n; i++) {
          switch (kind - NDATA) {
          case 0: x[i] = ldexp(x[i], 950); break;                   /* products near 2^1000: the scaled branch */
          case 1: x[i] = ldexp(x[i], -1010); break;                 /* tiny and subnormal */
          case 2: x[i] = ldexp(x[i], i % 2 ? 940 : -1000); break;   /* both */
          case 3: x[i] = i % 3 ? ldexp(x[i], 980) : DBL_MAX; break; /* sums near DBL_MAX (overflowing squares) */
          default: x[i] = i % 1000 == 7 ? (i % 2 ? NAN : -INFINITY) : x[i]; /* NaN and -Inf among finite values */
          }
        }
        for (int op = 0; op < 4; op++) {
          for (size_t i = 0; i < n; i++) v[i] = red_elem(op, x, y, i);
          rsum_t a, m;
          rsum_init(&a);
          rsum_add(&a, op, n, x, op == RED_OP_DOT ? y : NULL);
          rsum_model(n, v, &m);
          CHECK(rsum_same(&a, &m), "rsum_add (%s path) n=%zu set %d op %d: state differs from the model", rsum_isa(), n, kind, op);
          cases++;
        }
        rsum_t a, b, m;
        rsum_init(&a), rsum_init(&b);
        rsum_add_sumsq_dot(&a, &b, n, x, y);
        for (size_t i = 0; i < n; i++) v[i] = x[i] * x[i];
        rsum_model(n, v, &m);
        CHECK(rsum_same(&a, &m), "rsum_add_sumsq_dot z.z (%s path) n=%zu set %d: state differs from the model", rsum_isa(), n, kind);
        for (size_t i = 0; i < n; i++) v[i] = x[i] * y[i];
        rsum_model(n, v, &m);
        CHECK(rsum_same(&b, &m), "rsum_add_sumsq_dot z.r (%s path) n=%zu set %d: state differs from the model", rsum_isa(), n, kind);
        for (size_t i = 0; i < n; i++) v[i] = (double)fx[i] * fy[i];
        rsum_init(&a);
        rsum_add_fdot(&a, n, fx, fy);
        rsum_model(n, v, &m);
        CHECK(rsum_same(&a, &m), "rsum_add_fdot (%s path) n=%zu set %d: state differs from the model", rsum_isa(), n, kind);
        cases += 3;
      }
  }
  rsum_set_isa(getenv("MINIAPP_RSUM_ISA"));
  printf("rsum against its scalar model: %d cases on %d vector path(s)\n", cases, paths);
  free(x), free(y), free(v), free(fx), free(fy);
}

int main(void)
{
  size_t sizes[] = {1, 7, 1000, 1025, 65537, 300001};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) test_accuracy(sizes[i]);
  test_bitwise(1);
  test_bitwise(1031);
  test_bitwise(200003);
  test_atomic_seed(100000);
  test_mdot_special();
  test_exact_rounding();
  test_scatter();
  size_t fsizes[] = {1, 7, 1024, 1031, 8 * 1024 + 5, 200003};
  for (size_t i = 0; i < sizeof fsizes / sizeof *fsizes; i++) test_fused(fsizes[i], DATA_UNIFORM), test_fused(fsizes[i], DATA_WIDE);
  test_sumsq_dot();
  test_rsum_model();
  test_outer();
  test_outer_accuracy(1000);
  test_outer_accuracy(65537);
  test_outer_accuracy(((size_t)1 << 24) + 3);
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
