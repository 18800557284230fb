/* surrogate/layers_cpu.c: the CPU backend's compute kernels on one chunk of
 * samples, serial (the caller runs chunks on threads):
 *   forward:    out[j][s] = act(b_j + sum_k W[j][k] in[k][s]), k in order;
 *   back-data:  dprev[k][s] = act'(aprev[k][s]) * sum_j W[j][k] d[j][s], j in order;
 *   partials:   the float gradient partials of a chunk, d[j] . a[k] and
 *               sum d[j], each as 8 lanes (lane t adds the samples s = t mod 8
 *               in order) joined by a fixed tree.
 * Register-tiled: a tile of outputs times 16 samples (or of weight pairs times
 * 8 samples) is held in vector registers while the inner index runs, so the
 * inputs are loaded once per tile instead of once per output. Each sum keeps
 * its own order and its separate multiply and add (-ffp-contract=off), so the
 * bits are those of the plain loops in any tiling and with or without AVX2
 * (the avx2 clone runs the same IEEE operations on wider vectors).
 * Arrays are feature-major with row stride cap; pointers start at the chunk. */
#include "surrogate_impl.h"

#include <stdint.h>
#include <string.h>

/* 32-byte vectors returned by always-inlined helpers: no call, no ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float   v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

#define AI static inline __attribute__((always_inline))

AI v8f ld8(const float *p)
{
  v8f r;
  memcpy(&r, p, sizeof r);
  return r;
}
AI void st8(float *p, v8f v) { memcpy(p, &v, sizeof v); }

/* keep where mask, else x 2^-6: the leaky ReLU and its derivative (exact) */
AI v8f leak_unless(v8i keep, v8f x) { return (v8f)((keep & (v8i)x) | (~keep & (v8i)(x * SURR_LEAK))); }

/* acc[t][h] = sum_k W[t wt + k wk] x[k][i + 8h .. +8], k in order, for JT
 * outputs t and 16 samples: the forward product (W row-wise) and the
 * back-data product (W column-wise) share it. */
AI void tile_sum(int JT, const float *W, size_t wt, size_t wk, size_t K, const float *x, size_t cap, size_t i, v8f acc[4][2])
{
  for (int t = 0; t < JT; t++) acc[t][0] = acc[t][1] = (v8f){0};
  for (size_t k = 0; k < K; k++) {
    v8f x0 = ld8(x + k * cap + i), x1 = ld8(x + k * cap + i + 8);
    for (int t = 0; t < JT; t++) {
      float w = W[t * wt + k * wk];
      acc[t][0] = acc[t][0] + w * x0;
      acc[t][1] = acc[t][1] + w * x1;
    }
  }
}

/* JT outputs of the forward product (W, bias at output j0), samples i..i+16. */
AI void fwd_tile(int JT, const float *W, const float *bias, size_t din, const float *in, float *out, size_t cap, size_t i, int hidden)
{
  v8f acc[4][2];
  tile_sum(JT, W, din, 1, din, in, cap, i, acc);
  for (int t = 0; t < JT; t++)
    for (int h = 0; h < 2; h++) {
      v8f z = acc[t][h] + bias[t];
      st8(out + t * cap + i + 8 * h, hidden ? leak_unless(z > 0.0f, z) : z);
    }
}

/* m16 samples (a multiple of 16; the padding columns are computed too and
 * never read into a result). */
__attribute__((target_clones("avx2", "default"))) void SurrogateLayerForward_CPU(const float *W, const float *bias, size_t din, size_t dout, const float *in, float *out, size_t cap, size_t m16, int hidden)
{
  for (size_t i = 0; i < m16; i += 16) {
    size_t j = 0;
    for (; j + 4 <= dout; j += 4) fwd_tile(4, W + j * din, bias + j, din, in, out + j * cap, cap, i, hidden);
    for (; j < dout; j++) fwd_tile(1, W + j * din, bias + j, din, in, out + j * cap, cap, i, hidden);
  }
}

/* KT inputs of the back-data product (W at input column k0), samples i..i+16. */
AI void back_tile(int KT, const float *W, size_t din, size_t dout, const float *d, const float *aprev, float *dprev, size_t cap, size_t i)
{
  v8f acc[4][2];
  tile_sum(KT, W, 1, din, dout, d, cap, i, acc);
  for (int t = 0; t < KT; t++)
    for (int h = 0; h < 2; h++) st8(dprev + t * cap + i + 8 * h, leak_unless(ld8(aprev + t * cap + i + 8 * h) > 0.0f, acc[t][h]));
}

__attribute__((target_clones("avx2", "default"))) void SurrogateLayerBackData_CPU(const float *W, size_t din, size_t dout, const float *d, const float *aprev, float *dprev, size_t cap, size_t m16)
{
  for (size_t i = 0; i < m16; i += 16) {
    size_t k = 0;
    for (; k + 4 <= din; k += 4) back_tile(4, W + k, din, dout, d, aprev + k * cap, dprev + k * cap, cap, i);
    for (; k < din; k++) back_tile(1, W + k, din, dout, d, aprev + k * cap, dprev + k * cap, cap, i);
  }
}

/* The 8 lanes of one pair end with the samples past the last multiple of 8
 * (lane i mod 8), then join by the fixed tree. y NULL: the sum of x. */
AI float lanes_finish(v8f acc, size_t m8, size_t m, const float *x, const float *y)
{
  float l[8];
  memcpy(l, &acc, sizeof l);
  for (size_t i = m8; i < m; i++) l[i - m8] = y ? surr_madd(l[i - m8], x[i], y[i]) : l[i - m8] + x[i];
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* Pairs (j0 + t, k0 + u), t < JT, u < KT: out[t * din + u] = d[t] . a[u]. */
AI void part_tile(int JT, int KT, size_t din, const float *d, const float *a, size_t m, size_t cap, float *out)
{
  v8f    acc[2][4];
  size_t m8 = m / 8 * 8;
  for (int t = 0; t < JT; t++)
    for (int u = 0; u < KT; u++) acc[t][u] = (v8f){0};
  for (size_t i = 0; i < m8; i += 8) {
    v8f x[2], y[4];
    for (int t = 0; t < JT; t++) x[t] = ld8(d + t * cap + i);
    for (int u = 0; u < KT; u++) y[u] = ld8(a + u * cap + i);
    for (int t = 0; t < JT; t++)
      for (int u = 0; u < KT; u++) acc[t][u] = acc[t][u] + x[t] * y[u];
  }
  for (int t = 0; t < JT; t++)
    for (int u = 0; u < KT; u++) out[t * din + u] = lanes_finish(acc[t][u], m8, m, d + t * cap, a + u * cap);
}

/* One chunk of m <= SURR_CHUNK samples: out[j * din + k] (weights), then
 * out[dout * din + j] (biases). */
__attribute__((target_clones("avx2", "default"))) void SurrogateChunkPartials_CPU(size_t din, size_t dout, const float *d, const float *a, size_t m, size_t cap, float *out)
{
  size_t m8 = m / 8 * 8, j = 0;
  for (; j + 2 <= dout; j += 2) {
    size_t k = 0;
    for (; k + 4 <= din; k += 4) part_tile(2, 4, din, d + j * cap, a + k * cap, m, cap, out + j * din + k);
    for (; k < din; k++) part_tile(2, 1, din, d + j * cap, a + k * cap, m, cap, out + j * din + k);
  }
  for (; j < dout; j++) {
    size_t k = 0;
    for (; k + 4 <= din; k += 4) part_tile(1, 4, din, d + j * cap, a + k * cap, m, cap, out + j * din + k);
    for (; k < din; k++) part_tile(1, 1, din, d + j * cap, a + k * cap, m, cap, out + j * din + k);
  }
  for (j = 0; j < dout; j++) {
    v8f acc = {0};
    for (size_t i = 0; i < m8; i += 8) acc = acc + ld8(d + j * cap + i);
    out[dout * din + j] = lanes_finish(acc, m8, m, d + j * cap, NULL);
  }
}
