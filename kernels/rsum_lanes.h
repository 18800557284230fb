/* kernels/rsum_lanes.h: rsum's vector kernels, one build per vector path.
 * Included by kernels/rsum.c once per path, with defined:
 *   RL        lanes (GCC/Clang vector extension of RL doubles)
 *   SUF       the path's name: every name below gets the suffix _SUF
 *   RATTR     its target attribute (empty for the generic build)
 *   RMAXI     1 where it has a 64-bit integer compare
 *   UMAX(a,b) optional: the lanes' unsigned 64-bit maximum in one operation
 *   FADD(a,b) a + b; where the CPU has FMA, fma(a, 1, b) (the same sum,
 *             rounded once): AMD's Zen cores add on two pipes and fuse
 *             multiply-adds on two others, so the fold's additions run on
 *             both pairs. Not a public header. */
#define LN_(x, l) x##_##l
#define LN2(x, l) LN_(x, l)
#define LN(x)     LN2(x, SUF)

typedef double   LN(vd) __attribute__((vector_size(8 * RL)));
typedef int64_t  LN(vl) __attribute__((vector_size(8 * RL)));
typedef uint64_t LN(vu) __attribute__((vector_size(8 * RL)));
typedef float    LN(vf) __attribute__((vector_size(4 * RL)));
#define VD LN(vd)
#define VL LN(vl)
#define VU LN(vu)

AI RATTR VD LN(load)(const double *p)
{
  VD r;
  memcpy(&r, p, sizeof r);
  return r;
}

/* The fold's count after m values (rsum_fold_count of the lanes' sum). */
AI RATTR int64_t LN(fold_count)(VU S, size_t m, double M)
{
  uint64_t s = 0;
  for (int l = 0; l < RL; l++) s += S[l];
  return rsum_fold_count(s, m, M);
}

/* The three folds of RL values r under the constants Mk = 1.5 2^(52 + e - kW)
 * of bin top (e = top W), into the count lanes Sk: qk = (r + Mk) - Mk rounds
 * the remainder to fold k's unit (ties to even), and r + Mk lies in Mk's
 * binade, so its bits minus those of Mk count qk in units. 7 floating-point
 * additions (3 of them FADD) and 3 integer adds. */
AI RATTR void LN(fold3)(VD r, VD M0, VD M1, VD M2, VU *S0, VU *S1, VU *S2)
{
  VD b0 = FADD(r, M0);
  r -= b0 - M0;
  VD b1 = FADD(r, M1);
  r = FADD(r, M1 - b1);
  VD b2 = r + M2;
  *S0 += (VU)b0, *S1 += (VU)b1, *S2 += (VU)b2;
}

/* The constants M0 = 1.5 2^(52 + e), e = top W in [-960, 960] (normal
 * doubles, built from their bits), M1 = M0 2^-W, M2 = M0 2^-2W. */
AI void LN(fold_consts)(int e, double *m)
{
  for (int k = 0; k < RSUM_FOLD; k++) {
    uint64_t b = ((uint64_t)(52 + e - k * RSUM_W + 1023) << 52) | (1ull << 51);
    memcpy(&m[k], &b, sizeof b);
  }
}

/* Values v[0..m), m <= RSUM_CHUNK and a multiple of RL (zero-padded), all
 * finite, max |v| = mx > 0: binned under the chunk's own top bin.
 * Where an Mk would not be a normal double (|e| > 960: values near the
 * overflow or subnormal range) v is scaled by 2^-e first (exact; values that
 * become subnormal are far below the kept bins) and e is 0: the same counts.
 * The fold sums are exact, so splitting them over lanes cannot change them. */
AI RATTR void LN(rsum_chunk)(rsum_t *a, size_t m, double *v, double mx)
{
  int32_t top = rsum_top_bin(mx);
  int     e   = top * RSUM_W;
  if (e < -960 || e > 960) {
    int sh = -e; /* 2^-e may not be representable: two steps */
    if (sh > 1000) {
      for (size_t i = 0; i < m; i++) v[i] *= 0x1p600;
      sh -= 600;
    }
    const double s = ldexp(1.0, sh);
    for (size_t i = 0; i < m; i++) v[i] *= s;
    e = 0;
  }
  double   mk[RSUM_FOLD];
  LN(fold_consts)(e, mk);
  const VD M0 = (VD){0} + mk[0], M1 = (VD){0} + mk[1], M2 = (VD){0} + mk[2];
  VU       S0 = {0}, S1 = {0}, S2 = {0};
  for (size_t i = 0; i < m; i += RL) LN(fold3)(LN(load)(v + i), M0, M1, M2, &S0, &S1, &S2);
  __int128 c[RSUM_FOLD] = {LN(fold_count)(S0, m, mk[0]), LN(fold_count)(S1, m, mk[1]), LN(fold_count)(S2, m, mk[2])};
  rsum_add_bins(a, top, c);
}

/* The largest |e| so far, a NaN kept once seen: the integer order of the
 * bits of |e| (NaN above Inf) where the path has a 64-bit integer compare
 * (RMAXI), else the order of doubles plus a NaN test (SSE2 has no such
 * compare). */
AI RATTR VD LN(absmax)(VD mx, VD e)
{
  VL a = (VL)e & ABS_BITS;
#if defined(UMAX)
  return (VD)UMAX(a, (VL)mx); /* one unsigned integer max */
#else
#if RMAXI
  VL gt = a > (VL)mx;
#else
  VL gt = ((VD)a > mx) | ((VD)a != (VD)a);
#endif
  return (VD)((gt & a) | (~gt & (VL)mx));
#endif
}

/* A chunk's values v[0..m) (zero-padded to mr) with NM lane maxima mx: the
 * non-finite ones summed apart, or the finite ones binned. */
#define NM 4 /* independent maxima: the compare-and-select chain does not bound the pass */
AI RATTR void LN(rsum_take)(rsum_t *a, size_t m, size_t mr, double *v, const VD *mx)
{
  double t = 0.0;
  for (int u = 0; u < NM; u++)
    for (int l = 0; l < RL; l++) t = absmax1(t, mx[u][l]);
  if (!(t < INFINITY)) rsum_nonfinite(a, m, v);
  else if (t > 0.0) LN(rsum_chunk)(a, mr, v, t);
}

/* Summands i..i+RL of op, from double inputs or (isf) float inputs widened
 * to double (a product of two floats is exact in double). */
AI RATTR VD LN(rsum_load)(red_op_t op, int isf, const void *x, const void *y, size_t i)
{
  VD a, b;
  if (isf) {
    LN(vf) f, g;
    memcpy(&f, (const float *)x + i, sizeof f);
    a = __builtin_convertvector(f, VD);
    if (op == RED_OP_DOT) memcpy(&g, (const float *)y + i, sizeof g), b = __builtin_convertvector(g, VD);
  } else {
    a = LN(load)((const double *)x + i);
    if (op == RED_OP_DOT) b = LN(load)((const double *)y + i);
  }
  switch (op) {
  case RED_OP_DOT: return a * b;
  case RED_OP_SUMSQ: return a * a;
  case RED_OP_ASUM: return (VD)((VL)a & ABS_BITS);
  default: return a;
  }
}

/* In the pass: a chunk's summands folded as they are read, with no buffer,
 * under the top bin the state already holds (K = a->top, reached by a value
 * of an earlier chunk, so never above the final top). The counts are those
 * of rsum_chunk: a value below 2^((K+1)W - 1) has the same folds from any
 * bin at or above its own (the roundings at the bins above its own give
 * exactly 0), and the state keeps bins K..K-2 whatever the chunk's own top.
 * inpass_consts says whether K allows it (its constants normal doubles) and
 * gives them; inpass_fits whether the chunk, with lane maxima mx, does (every
 * value finite and below 2^((K+1)W - 1)). Where either does not, the caller
 * adds nothing from the pass and bins the chunk from a buffer. */
AI int LN(inpass_consts)(const rsum_t *a, double *mk)
{
  if (a->top == INT32_MIN || a->top < -960 / RSUM_W || a->top > 960 / RSUM_W) return 0;
  LN(fold_consts)(a->top * RSUM_W, mk);
  return 1;
}

AI RATTR int LN(inpass_fits)(const rsum_t *a, const VD *mx, int nm)
{
  double t = 0.0, lim;
  for (int u = 0; u < nm; u++)
    for (int l = 0; l < RL; l++) t = absmax1(t, mx[u][l]);
  uint64_t b = (uint64_t)((a->top + 1) * RSUM_W - 1 + 1023) << 52; /* 2^((K+1)W - 1), K <= 24 */
  memcpy(&lim, &b, sizeof b);
  return t < lim; /* false for an Inf or a NaN */
}

/* The pass for rsum_add_op: summands i0..i0+m of op; 1 if added. */
AI RATTR int LN(rsum_inpass)(rsum_t *a, red_op_t op, int isf, size_t m, const void *x, const void *y, size_t i0)
{
  double mk[RSUM_FOLD];
  if (!LN(inpass_consts)(a, mk)) return 0;
  const VD M0 = (VD){0} + mk[0], M1 = (VD){0} + mk[1], M2 = (VD){0} + mk[2];
  VU       S0 = {0}, S1 = {0}, S2 = {0};
  VD       mx[2] = {{0}}; /* two maxima: the compare-and-select chain does not bound the pass */
  size_t   i     = 0;
  for (; i + 2 * RL <= m; i += 2 * RL)
    for (int u = 0; u < 2; u++) {
      VD e  = LN(rsum_load)(op, isf, x, y, i0 + i + u * RL);
      mx[u] = LN(absmax)(mx[u], e);
      LN(fold3)(e, M0, M1, M2, &S0, &S1, &S2);
    }
  for (; i < m; i += RL) { /* the rest, the last vector zero-padded */
    VD e = {0};
    if (i + RL <= m) e = LN(rsum_load)(op, isf, x, y, i0 + i);
    else
      for (size_t l = 0; i + l < m; l++) e[l] = rsum_elem1(op, isf, x, y, i0 + i + l);
    mx[0] = LN(absmax)(mx[0], e);
    LN(fold3)(e, M0, M1, M2, &S0, &S1, &S2);
  }
  if (!LN(inpass_fits)(a, mx, 2)) return 0;
  __int128 c[RSUM_FOLD] = {LN(fold_count)(S0, i, mk[0]), LN(fold_count)(S1, i, mk[1]), LN(fold_count)(S2, i, mk[2])};
  rsum_add_bins(a, a->top, c);
  return 1;
}

/* Summands i..i+RL of a chunk starting at i0: to the buffer, into a maximum. */
AI RATTR void LN(add_step)(red_op_t op, int isf, const void *x, const void *y, size_t i0, size_t i, double *v, VD *mx)
{
  VD e = LN(rsum_load)(op, isf, x, y, i0 + i);
  memcpy(v + i, &e, sizeof e);
  *mx = LN(absmax)(*mx, e);
}

/* Serial: one thread's share, in chunks: each folded in the pass where the
 * state has a top bin the chunk fits, else its summands go to an L1-resident
 * buffer (zero-padded to a multiple of RL) with their largest magnitude,
 * then are binned under the chunk's own top. Inlined per constant op and
 * input width. */
AI RATTR void LN(rsum_add_op)(rsum_t *a, red_op_t op, int isf, size_t n, const void *x, const void *y)
{
  double v[RSUM_CHUNK];
  for (size_t i0 = 0; i0 < n; i0 += RSUM_CHUNK) {
    size_t m = n - i0 < RSUM_CHUNK ? n - i0 : RSUM_CHUNK, mr = (m + RL - 1) / RL * RL, i = 0;
    if (LN(rsum_inpass)(a, op, isf, m, x, y, i0)) continue;
    VD mx[NM] = {{0}};
    for (; i + NM * RL <= m; i += NM * RL)
      for (int u = 0; u < NM; u++) LN(add_step)(op, isf, x, y, i0, i + u * RL, v, &mx[u]);
    for (; i + RL <= m; i += RL) LN(add_step)(op, isf, x, y, i0, i, v, &mx[0]);
    for (; i < mr; i++) {
      v[i]     = i < m ? rsum_elem1(op, isf, x, y, i0 + i) : 0.0;
      mx[0][0] = absmax1(mx[0][0], v[i]);
    }
    LN(rsum_take)(a, m, mr, v, mx);
  }
}

/* The CG tail's two sums, z.z into a and z.r into b: the states rsum_add
 * reaches for each, one sum after the other over each chunk while it is in
 * L1 (each keeps its constants in the registers). */
AI RATTR void LN(rsum_sumsq_dot_op)(rsum_t *a, rsum_t *b, size_t n, const double *z, const double *r)
{
  for (size_t i0 = 0; i0 < n; i0 += RSUM_CHUNK) {
    size_t m = n - i0 < RSUM_CHUNK ? n - i0 : RSUM_CHUNK;
    LN(rsum_add_op)(a, RED_OP_SUMSQ, 0, m, z + i0, NULL);
    LN(rsum_add_op)(b, RED_OP_DOT, 0, m, z + i0, r + i0);
  }
}

/* The path's entry points (rsum.c picks one by rsum_isa_level). */
RATTR static void LN(rsum_add_serial)(rsum_t *a, red_op_t op, int isf, size_t n, const void *x, const void *y)
{
  if (isf) {
    if (y) LN(rsum_add_op)(a, RED_OP_DOT, 1, n, x, y);
    else LN(rsum_add_op)(a, RED_OP_SUM, 1, n, x, NULL);
    return;
  }
  switch (op) {
  case RED_OP_DOT: LN(rsum_add_op)(a, RED_OP_DOT, 0, n, x, y); break;
  case RED_OP_SUMSQ: LN(rsum_add_op)(a, RED_OP_SUMSQ, 0, n, x, y); break;
  case RED_OP_ASUM: LN(rsum_add_op)(a, RED_OP_ASUM, 0, n, x, y); break;
  default: LN(rsum_add_op)(a, RED_OP_SUM, 0, n, x, y); break;
  }
}

RATTR static void LN(rsum_sumsq_dot)(rsum_t *a, rsum_t *b, size_t n, const double *z, const double *r)
{
  LN(rsum_sumsq_dot_op)(a, b, n, z, r);
}

#undef NM
#undef RMAXI
#undef UMAX
#undef VD
#undef VL
#undef VU
#undef LN
#undef LN2
#undef LN_
