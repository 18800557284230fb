/* tests/test_reduce.c: unit tests of kernels/reduce.h, all three strategies.
 * Accuracy is checked against an exact reference (a Shewchuk expansion) on
 * hard data; reproducibility bitwise over thread counts, shuffles and splits;
 * determinism bitwise run to run; the seeded atomic order must change bits.
 * The reproducible accumulators' vector paths against scalar models of their
 * definitions: test_reduce_paths.c. */
#include "reduce_testdata.h"

static void test_accuracy(size_t n)
{
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int kind = 0; kind < NDATA; kind++) {
    make_data(kind, n, 42 + kind, x, y);
    for (int op = 0; op < 4; op++) {
      double ref = exact_sum(op, n, x, y), as = abs_sum(op, n, x, y), mx = max_abs(op, n, x, y);
      double tree = (ceil(log2((double)n + 1)) + 8) * DBL_EPSILON / 2 * as; /* pairwise + 8 lanes */
      for (int s = 0; s < 3; s++) {
        double r = red_reduce(s, op, n, x, y, NULL), err = fabs(r - ref);
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
      double r1 = red_reduce(RED_REPRODUCIBLE, op, n, x, y, NULL), d1 = red_reduce(RED_DETERMINISTIC, op, n, x, y, NULL);
      for (int t = 2; t <= 4; t++) {
        omp_set_num_threads(t);
        double r = red_reduce(RED_REPRODUCIBLE, op, n, x, y, NULL), d = red_reduce(RED_DETERMINISTIC, op, n, x, y, NULL);
        CHECK(bits(r) == bits(r1), "reproducible %s op=%d threads=%d: %.17g != %.17g", data_name[kind], op, t, r, r1);
        CHECK(bits(d) == bits(d1), "deterministic %s op=%d threads=%d: %.17g != %.17g", data_name[kind], op, t, d, d1);
        CHECK(bits(red_reduce(RED_DETERMINISTIC, op, n, x, y, NULL)) == bits(d), "deterministic rerun differs");
      }
      double rs = red_reduce(RED_REPRODUCIBLE, op, n, xs, ys, NULL);
      CHECK(bits(rs) == bits(r1), "reproducible %s op=%d shuffled: %.17g != %.17g", data_name[kind], op, rs, r1);
      /* split into 7 uneven pieces ("ranks"), partials combined in reverse */
      red_partial_t p[7];
      size_t        cut[8] = {0, 1, n / 9, n / 3, n / 3 + 5, n / 2, n > 3 ? n - 3 : n, n};
      for (int k = 1; k < 8; k++) cut[k] = cut[k] < cut[k - 1] ? cut[k - 1] : cut[k] > n ? n : cut[k];
      for (int k = 0; k < 7; k++) red_local(RED_REPRODUCIBLE, op, cut[k + 1] - cut[k], x + cut[k], y + cut[k], &p[6 - k], NULL);
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
    red_atomic_state ord = {1000 + (uint64_t)s, 0};
    r[s] = red_reduce(RED_ATOMIC, RED_OP_SUM, n, x, y, &ord);
    int seen = 0;
    for (int t = 0; t < s; t++) seen |= bits(r[t]) == bits(r[s]);
    distinct += !seen;
  }
  CHECK(distinct >= 2, "atomic: 8 seeds gave %d distinct results; expected differing bits", distinct);
  red_atomic_state again = {1003, 0};
  CHECK(bits(red_reduce(RED_ATOMIC, RED_OP_SUM, n, x, y, &again)) == bits(r[3]), "atomic: the same seed must replay the same bits");
  printf("atomic seeded order: %d distinct sums out of 8 seeds (n=%zu)\n", distinct, n);
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
    red_local_mdot(s, N, x, 2, ys, p, NULL);
    for (int j = 0; j < 2; j++) {
      red_partial_t q;
      red_local(s, RED_OP_DOT, N, x, ys[j], &q, NULL);
      if (s != RED_ATOMIC) CHECK(bits(red_combine(s, 1, &p[j])) == bits(red_combine(s, 1, &q)), "%s mdot[%d] != dot", red_strategy_name(s), j);
    }
    CHECK(red_reduce(s, RED_OP_SUM, 0, x, NULL, NULL) == 0.0, "%s empty sum", red_strategy_name(s));
    double one[3] = {1.5, INFINITY, -2.0}, nan3[3] = {1.0, NAN, INFINITY}, inf2[2] = {INFINITY, -INFINITY};
    CHECK(red_reduce(s, RED_OP_SUM, 1, one, NULL, NULL) == 1.5, "%s single value", red_strategy_name(s));
    CHECK(isinf(red_reduce(s, RED_OP_SUM, 3, one, NULL, NULL)), "%s Inf must propagate", red_strategy_name(s));
    CHECK(isnan(red_reduce(s, RED_OP_SUM, 3, nan3, NULL, NULL)), "%s NaN must propagate", red_strategy_name(s));
    CHECK(isnan(red_reduce(s, RED_OP_SUM, 2, inf2, NULL, NULL)), "%s Inf-Inf must be NaN", red_strategy_name(s));
    double tiny[3] = {0x1p-1074, 0x1p-1074, DBL_MIN}, huge[2] = {DBL_MAX / 2, DBL_MAX / 4};
    CHECK(red_reduce(s, RED_OP_SUM, 3, tiny, NULL, NULL) == DBL_MIN + 0x1p-1073, "%s subnormal sum", red_strategy_name(s));
    CHECK(red_reduce(s, RED_OP_SUM, 2, huge, NULL, NULL) == 0.75 * DBL_MAX, "%s near-overflow sum", red_strategy_name(s));
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
    CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, a, NULL, NULL) == ea, "reproducible {1, -1, %g} = %.17g, not %.17g", a[2], red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, a, NULL, NULL), ea);
    CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, b, NULL, NULL) == b[2], "reproducible {1e6, -1e6, %g} = %.17g", b[2], red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, b, NULL, NULL));
    CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, c, NULL, NULL) == c[2], "reproducible {3, -3, %g} = %.17g", c[2], red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 3, c, NULL, NULL));
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
    double r = red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, n, v, NULL, NULL);
    negative += S < 0;
    if (!correctly_rounded(S, r)) {
      bad++;
      if (bad <= 3) printf("  trial %d: n=%zu, not the correctly rounded exact sum: %.17g\n", t, n, r);
    }
  }
  CHECK(bad == 0, "reproducible sum not correctly rounded in %d of %d trials (%d with a negative sum)", bad, TRIALS, negative);
  /* subnormal results: multiples of 2^-1074 with either sign, exact */
  double sub[4] = {0x1p-1074 * 12345, -0x1p-1074 * 70000, 0x1p-1060, -0x1p-1060};
  CHECK(red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 4, sub, NULL, NULL) == 0x1p-1074 * (12345.0 - 70000.0), "subnormal sum of either sign");
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
    scatter_add(s, p, val, y[s], NULL);
    scatter_add(s, p, val, a, NULL);
    scatter_add(s, p2, val2, b, NULL);
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
        red_atomic_state st0 = {seed, 0}, st1 = {seed, 0}, st2 = {seed, 0};
        memcpy(x, x0, n * sizeof *x), memcpy(r, r0, n * sizeof *r), memcpy(z, w0, n * sizeof *z);
        memcpy(xf, x0, n * sizeof *x), memcpy(rf, r0, n * sizeof *r), memcpy(zf, w0, n * sizeof *z);
        const double *w = alias ? z : w0, *wf = alias ? zf : w0;
        for (size_t i = 0; i < n; i++) { /* the unfused order: AXPY, AXPY, Jacobi, norm, dot */
          double ri = -a * w[i] + r[i];
          x[i] = a * p[i] + x[i], r[i] = ri, z[i] = ri * d[dp ? i % dp : i];
        }
        red_local(s, RED_OP_SUMSQ, n, z, NULL, &uzz, &st0);
        red_local(s, RED_OP_DOT, n, z, r, &uzr, &st0);
        red_cg_tail(s, n, a, xf, p, rf, wf, d, dp, zf, &zz, &zr, &st1);
        CHECK(!memcmp(x, xf, n * sizeof *x) && !memcmp(r, rf, n * sizeof *r) && !memcmp(z, zf, n * sizeof *z), "red_cg_tail %s n=%zu threads=%d alias=%d period %zu: vectors differ from the unfused steps", red_strategy_name(s), n, t, alias, dp);
        CHECK(same_partial(s, &zz, &uzz) && same_partial(s, &zr, &uzr), "red_cg_tail %s seed %llu n=%zu threads=%d alias=%d period %zu: partials differ from red_local's", red_strategy_name(s), (unsigned long long)seed, n, t, alias, dp);
        CHECK(st0.calls == st1.calls, "red_cg_tail %s: %llu seeded draws, red_local %llu", red_strategy_name(s), (unsigned long long)st1.calls, (unsigned long long)st0.calls);
        /* red_dot_blocks: y produced in blocks, x.y formed in the same pass */
        produce_ctx c = {x0, y};
        red_partial_t pf, pu;
        memset(y, 0, n * sizeof *y);
        red_dot_blocks(s, n, produce, &c, x0, y, &pf, &st2);
        st1 = (red_atomic_state){seed, 0};
        red_local(s, RED_OP_DOT, n, x0, y, &pu, &st1);
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= bits(y[i]) == bits(3 * x0[i] - (double)i);
        CHECK(ok, "red_dot_blocks n=%zu: a block was not produced", n);
        CHECK(same_partial(s, &pf, &pu) && st1.calls == st2.calls, "red_dot_blocks %s seed %llu n=%zu threads=%d: %.17g, red_local %.17g", red_strategy_name(s), (unsigned long long)seed, n, t, red_combine(s, 1, &pf), red_combine(s, 1, &pu));
      }
    }
  }
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
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
