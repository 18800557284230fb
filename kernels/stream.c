/* kernels/stream.c: the STREAM triad and a dot (stream.h). */
#include "stream.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

int stream_create(size_t n, stream_t *st)
{
  st->n = n, st->m = n >= ((size_t)1 << 22) ? 1 : (((size_t)1 << 22) + n - 1) / (n ? n : 1);
  for (int k = 0; k < 3; k++) st->mem[k] = NULL;
  for (int k = 0; k < 3; k++)
    if (!(st->mem[k] = malloc((n + 512) * sizeof(double)))) {
      stream_destroy(st);
      return 1;
    }
  st->a = st->mem[0], st->b = st->mem[1] + 128, st->c = st->mem[2] + 256;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) st->a[i] = 0, st->b[i] = 1, st->c[i] = 2;
  return 0;
}

void stream_destroy(stream_t *st)
{
  for (int k = 0; k < 3; k++) free(st->mem[k]), st->mem[k] = NULL;
}

void stream_sample(const stream_t *st, double *bt, double *bd)
{
  double       *a = st->a, s = 0, t;
  const double *b = st->b, *c = st->c;
  const size_t  n = st->n;

  for (int w = 0; w < 3; w++) {
    t = omp_get_wtime();
    for (size_t k = 0; k < st->m; k++) {
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    }
    t = (omp_get_wtime() - t) / (double)st->m, *bt = t < *bt ? t : *bt;
    t = omp_get_wtime();
    for (size_t k = 0; k < st->m; k++) {
#pragma omp parallel for schedule(static) reduction(+ : s)
      for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    }
    t = (omp_get_wtime() - t) / (double)st->m, *bd = t < *bd ? t : *bd;
  }
  if (s == 42) a[0] = s; /* the dot's value is used: the loop stays */
}

double stream_triad_gbs(size_t n, int reps)
{
  stream_t st;
  double   bt = HUGE_VAL, bd = HUGE_VAL;

  if (!n || stream_create(n, &st)) return NAN;
  for (int r = 0; r < reps; r++) stream_sample(&st, &bt, &bd);
  stream_destroy(&st);
  return bt > 0 ? 3.0 * 8 * (double)n / bt / 1e9 : NAN;
}
