/* tests/reduce_testdata.h: what the kernels' unit tests share (test_reduce.c,
 * test_reduce_paths.c): a CHECK that counts failures, an exact reference sum,
 * and the hard data sets. Static functions: each test includes it once. */
#ifndef MINIAPP_TESTS_REDUCE_TESTDATA_H
#define MINIAPP_TESTS_REDUCE_TESTDATA_H

#include "reduce.h"
#include "gsum.h"
#include "reduce_impl.h"
#include "hashrng.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0; /* CHECKs failed so far */
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

static inline void exp_add(expansion *x, double b)
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

static inline double exact_sum(red_op_t op, size_t n, const double *x, const double *y)
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

static inline double abs_sum(red_op_t op, size_t n, const double *x, const double *y)
{
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += fabs(op == RED_OP_DOT ? x[i] * y[i] : op == RED_OP_SUMSQ ? x[i] * x[i] : x[i]);
  return s;
}

static inline double max_abs(red_op_t op, size_t n, const double *x, const double *y)
{
  double m = 0.0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(op == RED_OP_DOT ? x[i] * y[i] : op == RED_OP_SUMSQ ? x[i] * x[i] : x[i]));
  return m;
}

static inline uint64_t bits(double v)
{
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

enum { DATA_UNIFORM, DATA_WIDE, DATA_CANCEL, NDATA };
static const char *data_name[] __attribute__((unused)) = {"uniform", "wide-range", "cancellation"};

/* Fill x (and y) with a hard data set of length n from stream seed. */
static inline void make_data(int kind, size_t n, uint64_t seed, double *x, double *y)
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


#endif
