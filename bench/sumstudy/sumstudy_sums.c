/* bench/sumstudy/sumstudy_sums.c: the data and the CPU sums of the study:
 * seeded arrays, the reference sums, and one sum per combination order.
 * The app's block replay and real atomic path are the kernels' own
 * (kernels/reduce.c); only block sizes other than RED_BLOCK use the copy of
 * that algorithm below, which ss_check_block_replay pins to the kernel. */
#include "sumstudy.h"

#include "hashrng.h"
#include "reduce.h"

#include <math.h>
#include <stdlib.h>

const char *const ss_method_names[SS_NMETHODS] = {"element",      "block",      "omp",       "omp-block",
                                                  "cuda-element", "cuda-block", "cuda-tree", "cuda-cub"};
const char *const ss_dist_names[SS_NDISTS]     = {"uniform", "normal"};
const char *const ss_ref_names[3]              = {"exact", "ordered", "deterministic"};

/* ---- data ---------------------------------------------------------------- */

uint64_t ss_array_seed(ss_dist d, uint64_t seed, size_t n, uint64_t a)
{
  return mix64(mix64(seed) ^ mix64(((uint64_t)d << 56) ^ mix64((uint64_t)n * 0x100000001b3ULL + a)));
}

void ss_generate(ss_dist d, uint64_t seed, size_t n, uint64_t a, double *x)
{
  uint64_t s = ss_array_seed(d, seed, n, a);
  if (d == SS_UNIFORM) {
    for (size_t k = 0; k < n; k++) x[k] = rng_uniform(s, k);
    return;
  }
  /* Marsaglia's polar method, pair p from attempts j = 0, 1, ... of stream
   * (s, 64 p + j), 32 random bits per coordinate (2.6x faster than
   * Box-Muller's log and sincos; 21% of attempts are rejected). */
  for (size_t p = 0; 2 * p < n; p++) {
    double u, v, q;
    for (uint64_t j = 0;; j++) {
      uint64_t h = mix64(s ^ mix64((p << 6) + j));
      u = (double)(h >> 32) * 0x1p-31 - 1.0, v = (double)(h & 0xffffffffu) * 0x1p-31 - 1.0, q = u * u + v * v;
      if (q < 1.0 && q > 0.0) break;
    }
    double f = sqrt(-2.0 * log(q) / q);
    x[2 * p] = u * f;
    if (2 * p + 1 < n) x[2 * p + 1] = v * f;
  }
}

double ss_reference(ss_ref r, size_t n, const double *x)
{
  if (r == SS_REF_ORDERED) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
  }
  if (r == SS_REF_DETERMINISTIC) return red_reduce(RED_DETERMINISTIC, RED_OP_SUM, n, x, NULL, NULL);
  rsum_t acc; /* correctly rounded: the reproducible build's sum */
  rsum_init(&acc);
  rsum_add(&acc, RED_OP_SUM, n, x, NULL);
  return rsum_value(&acc);
}

uint64_t ss_order_seed(uint64_t array_seed, ss_method m, int o)
{
  uint64_t s = mix64(array_seed ^ mix64(((uint64_t)m << 32) ^ (uint64_t)o));
  return s ? s : 1;
}

/* ---- per-element random order ------------------------------------------ */

/* Draw k of stream seed, uniform in [0, i): splitmix64's sequence (one mix
 * per draw, k-th state seed + k gamma) by multiply-shift (bias <= i / 2^64). */
static inline size_t draw(uint64_t seed, uint64_t k, size_t i)
{
  return (size_t)(((unsigned __int128)mix64(seed + k * 0x9e3779b97f4a7c15ULL) * i) >> 64);
}

/* Fisher-Yates from the top on y[0..m), adding each element to the running
 * sum s as it becomes final (the order m-1, ..., 0 of a uniformly random
 * permutation is itself uniformly random). Stream `seed`, draw k = key + i. */
static double shuffle_sum(double s, size_t m, double *y, uint64_t seed, uint64_t key)
{
  for (size_t i = m; i > 1; i--) {
    size_t j = draw(seed, key + i, i);
    double t = y[j];
    y[j] = y[i - 1];
    s += t;
  }
  return m ? s + y[0] : 0.0;
}

/* A uniformly random order without a cache miss per element (Rao 1961,
 * Sandelius 1962): every summand goes to one of K buckets drawn uniformly
 * and independently, each bucket (about SS_BUCKET summands: L2) is
 * shuffled, and the buckets are summed one after another. Every order of the
 * n summands has probability 1/n! (sum over the bucket sizes of K^-n times
 * prod 1/n_b!), as with a plain Fisher-Yates, which is 3x slower at 1e7. */
#define SS_BUCKET 32768
double ss_sum_element(size_t n, const double *x, uint64_t seed, double *scratch)
{
  size_t K = (n + SS_BUCKET - 1) / SS_BUCKET;
  if (K <= 1) {
    for (size_t i = 0; i < n; i++) scratch[i] = x[i];
    return shuffle_sum(0.0, n, scratch, seed, 0);
  }
  uint64_t sb = mix64(seed ^ 0x6275636b6574ULL); /* the bucket stream */
  size_t  *off = calloc(K + 1, sizeof *off);
  if (!off) return NAN;
  for (size_t i = 0; i < n; i++) off[draw(sb, i, K) + 1]++;
  for (size_t b = 0; b < K; b++) off[b + 1] += off[b];
  for (size_t i = 0; i < n; i++) scratch[off[draw(sb, i, K)]++] = x[i]; /* off[b] -> end of b */
  double s = 0.0;
  /* one running sum */
  for (size_t b = 0, lo = 0; b < K; lo = off[b++]) s = shuffle_sum(s, off[b] - lo, scratch + lo, seed, lo);
  free(off);
  return s;
}

/* ---- the app's block replay ---------------------------------------------- */

/* kernels/reduce.c's block partial: lane i % 8, lanes combined pairwise. */
static double block_partial(size_t m, const double *x)
{
  double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i    = 0;
  for (; i + 8 <= m; i += 8)
    for (int k = 0; k < 8; k++) l[k] += x[i + k];
  for (; i < m; i++) l[i % 8] += x[i];
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* kernels/reduce.c's seeded permutation for the first call after
 * of an order (seed, call counter 0). */
static void kernel_permutation(uint64_t seed, size_t n, size_t *perm)
{
  for (size_t i = 0; i < n; i++) perm[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(mix64(seed ^ mix64(0 * 0x100000001b3ULL + i)) % i), t = perm[i - 1];
    perm[i - 1] = perm[j], perm[j] = t;
  }
}

static double block_replay(size_t n, const double *x, size_t block, uint64_t seed)
{
  size_t nb   = (n + block - 1) / block;
  size_t np   = nb == 1 ? n : nb; /* one block: the kernel permutes elements */
  size_t *perm = malloc((np ? np : 1) * sizeof *perm);
  double *p    = nb > 1 ? malloc(nb * sizeof *p) : NULL;
  if (!perm || (nb > 1 && !p)) {
    free(perm), free(p);
    return NAN;
  }
  for (size_t b = 0; b < (nb > 1 ? nb : 0); b++)
    p[b] = block_partial(n - b * block < block ? n - b * block : block, x + b * block);
  kernel_permutation(seed, np, perm);
  double s = 0.0;
  for (size_t k = 0; k < np; k++) s += nb > 1 ? p[perm[k]] : x[perm[k]];
  free(perm), free(p);
  return s;
}

double ss_sum_block(size_t n, const double *x, size_t block, uint64_t seed)
{
  if (block != RED_BLOCK) return block_replay(n, x, block, seed);
  red_atomic_state ord = {seed, 0};
  return red_reduce(RED_ATOMIC, RED_OP_SUM, n, x, NULL, &ord);
}

int ss_check_block_replay(size_t *bad_n)
{
  static const size_t sizes[] = {1, 7, 1000, 1024, 1025, 2048, 3000, 70001};
  double             *x       = malloc(70001 * sizeof *x);
  int                 bad     = x == NULL;
  for (size_t k = 0; !bad && k < sizeof sizes / sizeof *sizes; k++) {
    ss_generate(SS_NORMAL, 12345, sizes[k], 0, x);
    for (uint64_t seed = 1; !bad && seed < 4; seed++) {
      double a = ss_sum_block(sizes[k], x, RED_BLOCK, seed), b = block_replay(sizes[k], x, RED_BLOCK, seed);
      if (a != b) bad = 1, *bad_n = sizes[k];
    }
  }
  free(x);
  return bad;
}

/* ---- real OpenMP atomics ----------------------------------------------- */

/* Each thread walks its contiguous part and adds every summand to one shared
 * double: the order is the interleaving the hardware makes, so it varies with
 * the thread count and the timing (one thread: index order). */
double ss_sum_omp(size_t n, const double *x)
{
  double s = 0.0;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
#pragma omp atomic
    s += x[i];
  }
  return s;
}

double ss_sum_omp_block(size_t n, const double *x)
{
  return red_reduce(RED_ATOMIC, RED_OP_SUM, n, x, NULL, NULL); /* real atomics */
}

/* ---- the CUDA tree's fixed order (sumstudy_cuda.cu), on the CPU ---------- */

enum { CT_TILE = 1024, CT_THREADS = 256 };

/* sh[0..CT_THREADS) combined as the kernels' shared-memory tree does. */
static double tree256(double *sh)
{
  for (int h = CT_THREADS / 2; h > 0; h >>= 1)
    for (int t = 0; t < h; t++) sh[t] = sh[t] + sh[t + h];
  return sh[0];
}

double ss_sum_cuda_tree_cpu(size_t n, const double *x)
{
  size_t  nt = (n + CT_TILE - 1) / CT_TILE;
  double *p  = malloc((nt ? nt : 1) * sizeof *p), sh[CT_THREADS];
  if (!p) return NAN;
  for (size_t b = 0; b < nt; b++) {
    for (int t = 0; t < CT_THREADS; t++) {
      double a = 0.0;
      for (size_t i = b * CT_TILE + (size_t)t; i < n && i < (b + 1) * CT_TILE; i += CT_THREADS) a += x[i];
      sh[t] = a;
    }
    p[b] = tree256(sh);
  }
  for (int t = 0; t < CT_THREADS; t++) {
    double a = 0.0;
    for (size_t c = (size_t)t; c < nt; c += CT_THREADS) a += p[c];
    sh[t] = a;
  }
  free(p);
  return tree256(sh);
}
