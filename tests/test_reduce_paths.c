/* tests/test_reduce_paths.c: the reproducible accumulators' vector paths
 * (generic, AVX2, AVX-512: every one the CPU has, one after the other in this
 * process; MINIAPP_RSUM_ISA=generic|avx2|avx512 tests that one alone) held to
 * scalar models of their definitions, state for state: rsum (the solver's
 * sums) and gsum (the surrogate's gradient sums), then gsum's accuracy bound
 * on the hard data sets; and the path a run takes is the widest. */
#include "reduce_testdata.h"

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
  enum { NMAX = 70001, NKIND = NDATA + 7 };
  double *x = malloc(NMAX * sizeof *x), *y = malloc(NMAX * sizeof *y), *v = malloc(NMAX * sizeof *v);
  float  *fx = malloc(NMAX * sizeof *fx), *fy = malloc(NMAX * sizeof *fy);
  int     cases = 0, paths = 0;
  for (int p = 0; p < 3; p++) {
    if (p > 0 && !strcmp(rsum_set_isa(isa[p]), rsum_set_isa(isa[p - 1]))) continue; /* the CPU lacks it */
    rsum_set_isa(isa[p]), paths++;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
      for (int kind = 0; kind < NKIND; kind++) {
        size_t n = sizes[si];
        make_data(kind < NDATA ? kind : kind - NDATA < 5 ? DATA_WIDE : DATA_UNIFORM, n, 90 + kind, x, y);
        for (size_t i = 0; i < n; i++) fx[i] = (float)x[i], fy[i] = (float)y[i]; /* float products stay far from both edges */
        for (size_t i = 0; kind >= NDATA && i < n; i++) {
          switch (kind - NDATA) {
          case 0: x[i] = ldexp(x[i], 950); break;                   /* products near 2^1000: the scaled branch */
          case 1: x[i] = ldexp(x[i], -1010); break;                 /* tiny and subnormal */
          case 2: x[i] = ldexp(x[i], i % 2 ? 940 : -1000); break;   /* both */
          case 3: x[i] = i % 3 ? ldexp(x[i], 980) : DBL_MAX; break; /* sums near DBL_MAX (overflowing squares) */
          case 4: x[i] = i % 1000 == 7 ? (i % 2 ? NAN : -INFINITY) : x[i]; break; /* NaN and -Inf among finite values */
          /* a binade a chunk, rising or falling through the bins' edges (2^(jW - 1)):
           * later chunks above the top bin the state holds, or far below it,
           * with full mantissas, so that every kept bin counts */
          case 5: /* y falls at half the pace: x y and x x cross their edges in other chunks */
            x[i] = (i % 3 ? 1 : -1) * ldexp(x[i], (int)(i / 1024) - 34), y[i] = ldexp(y[i], -(int)(i / 2048));
            break;
          default: x[i] = (i % 3 ? 1 : -1) * ldexp(x[i], 34 - (int)(i / 1024));
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

typedef struct {
  int pairs, bad, badsplit, offmax;
} OuterCount;

/* One shape: nx x rows (of the row kinds from xoff on) against ny y rows and
 * the bias, n samples, rows ld = n + 5 apart with NaN in the 5 floats past
 * each row (a pass that read them would differ); each pair's state against
 * the model, and against three pieces added last first. */
static void outer_case(size_t n, size_t nx, size_t ny, size_t xoff, OuterCount *k)
{
  size_t   ld = n + 5, cut[] = {0, n / 3, n - n / 4, n};
  float   *x = malloc(nx * ld * sizeof *x), *y = malloc(ny * ld * sizeof *y);
  gsum_t  *r = malloc(nx * (ny + 1) * sizeof *r), *r2 = malloc(nx * (ny + 1) * sizeof *r2), ref;
  int32_t *ex = malloc(nx * sizeof *ex), *ey = malloc(ny * sizeof *ey);
  for (size_t i = 0; i < nx * ld; i++) x[i] = NAN;
  for (size_t i = 0; i < ny * ld; i++) y[i] = NAN;
  for (size_t p = 0; p < nx; p++) {
    for (size_t i = 0; i < n; i++) x[p * ld + i] = outer_value(1, p + xoff, i);
    ex[p] = gsum_exponent(gsum_absmax(n, x + p * ld));
  }
  for (size_t q = 0; q < ny; q++) {
    for (size_t i = 0; i < n; i++) y[q * ld + i] = outer_value(2, q + 3, i);
    ey[q] = gsum_exponent(gsum_absmax(n, y + q * ld));
  }
  for (size_t i = 0; i < nx * (ny + 1); i++) gsum_init(&r[i]), gsum_init(&r2[i]);
  gsum_add_outer(r, r + nx * ny, n, nx, x, ld, ex, ny, y, ld, ey);
  for (int c = 2; c >= 0; c--) /* three pieces, last first */
    gsum_add_outer(r2, r2 + nx * ny, cut[c + 1] - cut[c], nx, x + cut[c], ld, ex, ny, y + cut[c], ld, ey);
  for (size_t p = 0; p < nx; p++)
    for (size_t q = 0; q <= ny; q++) {
      const gsum_t *a = q < ny ? &r[p * ny + q] : &r[nx * ny + p], *a2 = q < ny ? &r2[p * ny + q] : &r2[nx * ny + p];
      gsum_model(n, x + p * ld, q < ny ? y + q * ld : NULL, ex[p], q < ny ? ey[q] : 1, &ref);
      if (!gsum_same(a, &ref) && k->bad++ < 3) printf("  outer n=%zu nx=%zu pair (%zu,%zu): state differs from the model\n", n, nx, p, q);
      if (!gsum_same(a, a2)) k->badsplit++;
      if (q < ny && !ref.nonfinite) { /* a pair whose rows peak at different samples: the bound exceeds every product */
        double bp = 0;
        for (size_t i = 0; i < n; i++) bp = fmax(bp, fabs((double)x[p * ld + i] * y[q * ld + i]));
        if (bp > 0 && ldexp(bp, 4) < (double)gsum_absmax(n, x + p * ld) * gsum_absmax(n, y + q * ld)) k->offmax++;
      }
      k->pairs++;
    }
  free(x), free(y), free(r), free(r2), free(ex), free(ey);
}

/* gsum_add_outer against the model: 11 x rows (blocks and their edges), 3
 * and 2 (AVX2 blocks 3 rows, AVX-512 4: a block, or the pass for fewer x
 * rows than a block) and 1 (that pass, whose single row takes every one of
 * the 16 row kinds, NaN and Inf rows apart), 13 or 37 y rows
 * (37 + the bias: two groups), sizes across the 512-sample blocks. */
static void test_outer(void)
{
  size_t     sizes[] = {1, 7, 255, 256, 257, 1000, 1031};
  OuterCount k       = {0, 0, 0, 0};
  for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
    outer_case(sizes[t], 11, t % 2 ? 37 : 13, t, &k);
    outer_case(sizes[t], 3, t % 2 ? 13 : 37, t, &k);
    outer_case(sizes[t], 2, t % 2 ? 37 : 13, t + 3, &k);
  }
  for (size_t off = 0; off < 16; off++) outer_case(off % 2 ? 1031 : 1000, 1, off % 4 < 2 ? 37 : 13, off, &k);
  int pairs = k.pairs, bad = k.bad, badsplit = k.badsplit, offmax = k.offmax;
  CHECK(bad == 0, "gsum_add_outer: %d of %d pair states differ from the model", bad, pairs);
  CHECK(badsplit == 0, "gsum_add_outer: %d of %d pair states depend on the chunking", badsplit, pairs);
  CHECK(offmax > 0, "gsum_add_outer: the data must include pairs whose bound is far above their largest product");
  printf("gsum_add_outer (%s path): %d pairs (%d with the bound 16x above every product), states equal to the model and to three pieces in reverse: %s\n", rsum_isa(), pairs, offmax,
         bad || badsplit ? "no" : "yes");
  /* rsum's lanes on this path: 2, 4 or 8 */
  int l = !strcmp(rsum_isa(), "generic") ? 2 : !strcmp(rsum_isa(), "avx2") ? 4 : 8;
  CHECK(rsum_lanes() == l, "rsum runs %d lanes on the %s path, not %d", rsum_lanes(), rsum_isa(), l);
  printf("rsum (%s path): %d lanes\n", rsum_isa(), rsum_lanes());
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
    for (int slack = 0; slack <= GSUM_SLACK; slack += GSUM_SLACK) { /* the rows' own exponents, and the coarsest gsum_units keeps */
    int32_t ex = gsum_exponent(gsum_absmax(n, x)) + slack, ey = gsum_exponent(gsum_absmax(n, y)) + slack;
    gsum_t  g;
    rsum_t  rs;
    gsum_init(&g);
    for (size_t c = 0; c < n; c += 1024) gsum_add_outer(&g, NULL, n - c < 1024 ? n - c : 1024, 1, x + c, n, &ex, 1, y + c, n, &ey);
    gsum_to_rsum(&g, ex, ey, &rs);
    double v = rsum_value(&rs), ref = exact_sum(RED_OP_DOT, n, xd, yd), err = fabs(v - ref);
    double bound = (double)n * ldexp(1.0, ex + ey - 52) + 2 * DBL_EPSILON * fabs(ref);
    double tree  = (ceil(log2((double)n + 1)) + 8) * 0x1p-24 * abs_sum(RED_OP_DOT, n, xd, yd);
    CHECK(err <= bound, "gsum n=%zu %s +%d: |%.17g - %.17g| = %g > bound %g", n, kind < NDATA ? data_name[kind] : "float-wide", slack, v, ref, err, bound);
    CHECK(err <= 1e-6 * tree, "gsum n=%zu %s +%d: error %g is not 6 orders of magnitude below the float tree's bound %g", n, kind < NDATA ? data_name[kind] : "float-wide", slack, err, tree);
    if (n > 1000000) printf("gsum n=%zu %s, exponents +%d: error %.3g, bound %.3g, float tree bound %.3g\n", n, kind < NDATA ? data_name[kind] : "float-wide", slack, err, bound, tree);
    }
  }
  free(xd), free(yd), free(x), free(y);
}

/* gsum_units, the rule that lets a train step make its sums before its
 * batch's maxima are known: a row keeps its exponent while it
 * stays between its own and GSUM_SLACK above it; a row out of that window is
 * renewed one binade above its maximum; and the rule keeps what it chose
 * (the GPU and the CPU may each apply it to the same rows). */
static void test_units(void)
{
  const int32_t Z = GSUM_ZERO, NF = GSUM_NONFINITE;
  struct {
    int32_t pred[3];
    float   amax[3];
    int     renewed;
    int32_t want[3];
  } c[] = {
    {{Z, Z, Z}, {1.0f, 0.75f, 0.0f}, 3, {1 + GSUM_HEAD, GSUM_HEAD, 0}},  /* no last step: e + HEAD (1 = 0.5 2^1, 0.75 = 0.75 2^0); a zero row takes 0 */
    {{2, 1, 5}, {1.0f, 0.75f, 0.0f}, 0, {2, 1, 5}},                      /* every row fits: kept (a zero row fits any) */
    {{2, 1, 5}, {2.0f, 0.125f, 0.0f}, 0, {2, 1, 5}},                     /* 2.0 = 0.5 2^2 fits 2; 0.125: e = -2, 1 - (-2) = 3 = SLACK: fits */
    {{2, 1, 5}, {1.0f, 0.0625f, 0.0f}, 1, {2, -3 + GSUM_HEAD, 5}},       /* 4 binades below: that row alone is renewed */
    {{2, 1, 5}, {4.0f, 0.5f, 0.0f}, 1, {3 + GSUM_HEAD, 1, 5}},           /* a row past its exponent */
    {{2, 1, 5}, {INFINITY, 0.5f, 0.0f}, 1, {NF, 1, 5}},                  /* a non-finite row */
    {{NF, 1, 5}, {1.0f, 0.5f, 0.0f}, 1, {1 + GSUM_HEAD, 1, 5}},          /* after a non-finite row */
    {{128, 1, 5}, {0x1p127f, 0.5f, 0.0f}, 0, {128, 1, 5}},               /* the largest exponent */
    {{Z, 1, 5}, {0x1p127f, 0.5f, 0.0f}, 1, {128, 1, 5}},                 /* 2^127 with HEAD would not be a float: 128 */
  };
  for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
    int32_t e[3], again[3];
    int     renewed = gsum_units(3, c[k].pred, c[k].amax, e);
    CHECK(renewed == c[k].renewed, "gsum_units case %zu: %d rows renewed, want %d", k, renewed, c[k].renewed);
    for (int r = 0; r < 3; r++) CHECK(e[r] == c[k].want[r], "gsum_units case %zu row %d: exponent %d, want %d", k, r, (int)e[r], (int)c[k].want[r]);
    int nf = 0;
    for (int r = 0; r < 3; r++) nf += e[r] == NF;
    CHECK(gsum_units(3, e, c[k].amax, again) == nf, "gsum_units case %zu: its own exponents do not fit again", k);
    for (int r = 0; r < 3; r++) CHECK(again[r] == e[r], "gsum_units case %zu row %d: not idempotent (%d, then %d)", k, r, (int)e[r], (int)again[r]);
    for (int r = 0; r < 3; r++) { /* what a row of exponent E may hold: |x| < 2^E, E at most SLACK above its own */
      int32_t a = gsum_exponent(c[k].amax[r]);
      if (e[r] != Z && e[r] != NF && a != Z) CHECK(a <= e[r] && e[r] - a <= GSUM_SLACK, "gsum_units case %zu row %d: exponent %d outside [%d, %d]", k, r, (int)e[r], (int)a, (int)a + GSUM_SLACK);
    }
  }
  for (int32_t e = -147; e <= 128; e++) CHECK(gsum_exponent(gsum_unit_bound(e)) == e, "gsum_unit_bound(%d) has exponent %d", (int)e, (int)gsum_exponent(gsum_unit_bound(e)));
  CHECK(gsum_unit_bound(GSUM_ZERO) == 0.0f && isinf(gsum_unit_bound(GSUM_NONFINITE)), "gsum_unit_bound of the markers");
}

/* The paths this CPU has, narrowest first (rsum_set_isa falls back to the
 * widest for one it lacks); MINIAPP_RSUM_ISA set non-empty: that one alone. */
static int cpu_paths(const char **path)
{
  static const char *const all[] = {"generic", "avx2", "avx512"};
  const char              *want  = getenv("MINIAPP_RSUM_ISA");
  int                      n     = 0;
  if (want && *want) {
    CHECK(!strcmp(want, all[0]) || !strcmp(want, all[1]) || !strcmp(want, all[2]), "MINIAPP_RSUM_ISA=%s names no path", want);
    path[n++] = rsum_set_isa(want); /* one the CPU lacks: the widest it has, said in the output */
    return n;
  }
  for (int p = 0; p < 3; p++)
    if (!strcmp(rsum_set_isa(all[p]), all[p])) path[n++] = all[p];
  return n;
}

int main(void)
{
  const char *path[3];
  int         npaths = cpu_paths(path);
  test_units();
  test_rsum_model();
  for (int p = 0; p < npaths; p++) {
    rsum_set_isa(path[p]);
    printf("== the %s path\n", rsum_isa());
    test_outer();
    test_outer_accuracy(1000);
    test_outer_accuracy(65537);
    test_outer_accuracy(((size_t)1 << 24) + 3);
  }
  /* a run takes the widest path the CPU has (the last above), unless MINIAPP_RSUM_ISA names another */
  const char *want = getenv("MINIAPP_RSUM_ISA");
  rsum_set_isa(want && *want ? want : NULL);
  CHECK((want && *want) || !strcmp(rsum_isa(), path[npaths - 1]), "a run takes the %s path, not the widest the CPU has (%s)", rsum_isa(), path[npaths - 1]);
  printf("paths tested: %d (", npaths);
  for (int p = 0; p < npaths; p++) printf("%s%s", p ? ", " : "", path[p]);
  printf("); a run takes %s\n", rsum_isa());
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
