/* tests/cudaemu/test_emu_reduce.cpp: the solver's reductions on the emulated
 * device (kernels/reduce_cuda.cu) against red_local on the host, for every
 * strategy, operation and a range of lengths (one element, partial and
 * whole blocks of RED_BLOCK, partial split blocks, several segments: the
 * emulation's build makes a segment 4 split blocks):
 *   deterministic    the partial bitwise;
 *   reproducible     the rsum state itself (top and bins), the value bitwise;
 *   seeded atomic    the partial bitwise and the same number of draws;
 *   unseeded atomic  within the summation bound of the exact sum;
 * on data of mixed signs and magnitudes, near the overflow and in the
 * subnormal range (the split's scaled paths), all zeros (signed), and with
 * an Inf, a -Inf, both, or a NaN planted (then the value's class).
 * "test_emu_reduce atomic" prints the bits of unseeded atomic sums instead:
 * they change with the emulation's block order (CUDAEMU_SEED). */
#include "cuda_runtime.h"
#include "reduce_cuda.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

static unsigned long long rng;
static unsigned long long next(void)
{
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
/* A value of family f: 0 mixed, 1 near the overflow, 2 subnormal, 3 zeros. */
static double draw(int f)
{
  unsigned long long r    = next();
  double             frac = (double)(r % 4000001) / 2e6 - 1.0; /* [-1, 1] */
  switch (f) {
  case 0: return r % 13 == 0 ? 0.0 : ldexp(frac, (int)((r >> 40) % 61) - 30);
  case 1: return ldexp(frac, 1000 + (int)((r >> 40) % 20));
  case 2: return ldexp(frac, -1045 - (int)((r >> 40) % 25));
  default: return r % 2 ? 0.0 : -0.0;
  }
}

static int fails = 0;
static void fail(const char *what, int s, int op, size_t n, int f)
{
  if (fails++ < 20) printf("FAIL: %s (strategy %s, op %d, n %zu, family %d)\n", what, red_strategy_name((red_strategy_t)s), op, n, f);
}

static bool same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a) || (std::isnan(a) && std::isnan(b)); }

static void check(red_cuda_ws *w, size_t n, int f, int plant)
{
  std::vector<double> x(n ? n : 1), y(n ? n : 1);
  for (size_t i = 0; i < n; i++) x[i] = draw(f), y[i] = draw(f == 1 ? 2 : f); /* huge x tiny y: finite products */
  if (n && plant) { /* 1 Inf, 2 -Inf, 3 both, 4 NaN */
    if (plant & 1) x[(n * 2) / 3] = INFINITY;
    if (plant & 2) x[n / 5] = -INFINITY;
    if (plant == 4) x[n - 1] = NAN;
  }
  double *xd, *yd;
  if (cudaMalloc(&xd, x.size() * sizeof(double)) || cudaMalloc(&yd, y.size() * sizeof(double))) {
    fail("cudaMalloc", 0, 0, n, f);
    return;
  }
  cudaMemcpy(xd, x.data(), x.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(yd, y.data(), y.size() * sizeof(double), cudaMemcpyHostToDevice);
  for (int s = 0; s < 3; s++)
    for (int op = 0; op < 4; op++)
      for (int seeded = 0; seeded < (s == RED_ATOMIC ? 2 : 1); seeded++) {
        red_partial_t    h, d;
        red_atomic_state oh = {seeded ? 5u : 0u, 7}, od = oh;
        red_strategy_t   st = (red_strategy_t)s;
        red_local(st, (red_op_t)op, n, x.data(), y.data(), &h, &oh);
        if (red_cuda_local(w, st, (red_op_t)op, n, xd, yd, &d, &od)) {
          fail("red_cuda_local returned an error", s, op, n, f);
          continue;
        }
        double vh = red_combine(st, 1, &h), vd = red_combine(st, 1, &d);
        if (s == RED_REPRODUCIBLE) {
          if (h.r.nonfinite != d.r.nonfinite) fail("non-finite flag differs", s, op, n, f);
          else if (!h.r.nonfinite && (h.r.top != d.r.top || memcmp(h.r.bin, d.r.bin, sizeof h.r.bin)))
            fail("rsum state differs", s, op, n, f);
        }
        if (s != RED_ATOMIC || seeded) {
          if (!same_bits(vh, vd)) fail("value differs", s, op, n, f);
          if (oh.calls != od.calls) fail("the seeded order drew another number of times", s, op, n, f);
          continue;
        }
        /* unseeded atomic: the exact sum's neighbourhood (the reproducible value is within 1 ulp of it) */
        double exact = red_reduce(RED_REPRODUCIBLE, (red_op_t)op, n, x.data(), y.data(), NULL), bound = 0;
        for (size_t i = 0; i < n; i++) bound += fabs(op == RED_OP_DOT ? x[i] * y[i] : op == RED_OP_SUMSQ ? x[i] * x[i] : x[i]);
        bound = bound * (double)(n + 8) * 0x1p-52 + fabs(exact) * 0x1p-51;
        if (std::isfinite(exact) && std::isfinite(bound) && !(fabs(vd - exact) <= bound)) /* an overflow: order-dependent */
          fail("unseeded atomic sum outside the bound", s, op, n, f);
      }
  cudaFree(xd), cudaFree(yd);
}

int main(int argc, char **argv)
{
  red_cuda_ws *w;
  if (red_cuda_ws_create(&w)) {
    printf("FAIL: red_cuda_ws_create\n");
    return 1;
  }
  if (argc > 1 && !strcmp(argv[1], "atomic")) { /* the order of the device's atomic adds */
    size_t              n = 131075;
    std::vector<double> x(n);
    double             *xd;
    rng = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < n; i++) x[i] = draw(0);
    cudaMalloc(&xd, n * sizeof(double));
    cudaMemcpy(xd, x.data(), n * sizeof(double), cudaMemcpyHostToDevice);
    red_partial_t d;
    if (red_cuda_local(w, RED_ATOMIC, RED_OP_SUM, n, xd, NULL, &d, NULL)) return 1;
    printf("atomic sum %a\n", d.d);
    cudaFree(xd);
    red_cuda_ws_destroy(&w);
    return 0;
  }
  const size_t lens[] = {0, 1, 7, 1023, 1024, 1025, 4097, 9001, 40961};
  rng = 0x9E3779B97F4A7C15ull;
  for (size_t n : lens)
    for (int f = 0; f < 4; f++) check(w, n, f, 0);
  for (int plant = 1; plant <= 4; plant++) check(w, 9001, 0, plant);
  check(w, 50001, 0, 0); /* this build's RC_SEG (4): four segments of split blocks, the last partial */
  red_cuda_ws_destroy(&w);
  if (fails) return 1;
  printf("PASS: device reductions equal red_local for %zu lengths, 4 families, 4 operations, 3 strategies\n",
         sizeof lens / sizeof *lens);
  return 0;
}
