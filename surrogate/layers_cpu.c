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
 * Arrays are feature-major with row stride cap; pointers start at the chunk.
 * Forward and back-data also keep, when given lanes (the reproducible
 * strategy's training), the largest magnitude of every row they write over
 * the chunk's m samples, while the values are in registers: the rows' maxima
 * fix the units of the gradient sums (kernels/gsum.c), and a pass of its own
 * over the rows would read them again from L2. */
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

/* The running maxima: lanes[8 t + l] holds the largest magnitude bits of
 * row t's samples l mod 8 (|x| as bits: an integer max, Inf and NaN above
 * every finite value, as gsum_absmax). */
AI v8i imax(v8i a, v8i b)
{
  v8i k = a > b;
  return (a & k) | (b & ~k);
}
AI v8i mag(v8f x) { return (v8i)x & 0x7fffffff; }
AI void note_max(uint32_t *lanes, v8f x0, v8f x1)
{
  v8i r;
  memcpy(&r, lanes, sizeof r);
  r = imax(r, imax(mag(x0), mag(x1)));
  memcpy(lanes, &r, sizeof r);
}

/* Before a producer's pass: its rows' lanes cleared; after: the samples of
 * the last, partial tile (below m; the padding is never counted) into lane 0. */
static void lanes_begin(uint32_t *lanes, size_t rows)
{
  if (lanes) memset(lanes, 0, rows * 8 * sizeof *lanes);
}
static void lanes_tail(uint32_t *lanes, size_t rows, const float *out, size_t cap, size_t m)
{
  if (!lanes) return;
  for (size_t t = 0; t < rows; t++)
    for (size_t i = m / 16 * 16; i < m; i++) {
      uint32_t b;
      memcpy(&b, &out[t * cap + i], sizeof b);
      b &= 0x7fffffffu;
      lanes[8 * t] = b > lanes[8 * t] ? b : lanes[8 * t];
    }
}

/* keep where mask, else x 2^-6: the leaky ReLU and its derivative (exact) */
AI v8f leak_unless(v8i keep, v8f x) { return (v8f)((keep & (v8i)x) | (~keep & (v8i)(x * SURR_LEAK))); }

/* acc[t][h] = sum_k W[t wt + k wk] x[k][i + 8h .. +8], k in order, for JT
 * outputs t and 16 samples: the forward product (W row-wise) and the
 * back-data product (W column-wise) share it. */
AI void tile_sum(int JT, const float *W, size_t wt, size_t wk, size_t K, const float *x, size_t cap, size_t i,
                 v8f acc[4][2])
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

/* JT outputs of the forward product (W, bias at output j0), samples i..i+16;
 * their maxima into lanes (rows j0..) unless NULL. */
AI void fwd_tile(int JT, const float *W, const float *bias, size_t din, const float *in, float *out, size_t cap,
                 size_t i, int hidden, uint32_t *lanes)
{
  v8f acc[4][2];
  tile_sum(JT, W, din, 1, din, in, cap, i, acc);
  for (int t = 0; t < JT; t++) {
    v8f o[2];
    for (int h = 0; h < 2; h++) {
      v8f z = acc[t][h] + bias[t];
      o[h]  = hidden ? leak_unless(z > 0.0f, z) : z;
      st8(out + t * cap + i + 8 * h, o[h]);
    }
    if (lanes) note_max(lanes + 8 * t, o[0], o[1]);
  }
}

/* m16 samples (a multiple of 16; the padding columns are computed too and
 * never read into a result); lanes (8 per output row) unless NULL: the rows'
 * maxima over the first m samples. */
__attribute__((target_clones("avx2", "default"))) void SurrogateLayerForward_CPU(const float *W, const float *bias,
                                                                                 size_t din, size_t dout,
                                                                                 const float *in, float *out,
                                                                                 size_t cap, size_t m16, int hidden,
                                                                                 size_t m, uint32_t *lanes)
{
  lanes_begin(lanes, dout);
  for (size_t i = 0; i < m16; i += 16) {
    uint32_t *ln = lanes && i + 16 <= m ? lanes : NULL;
    size_t    j  = 0;
    for (; j + 4 <= dout; j += 4)
      fwd_tile(4, W + j * din, bias + j, din, in, out + j * cap, cap, i, hidden, ln ? ln + 8 * j : NULL);
    for (; j < dout; j++)
      fwd_tile(1, W + j * din, bias + j, din, in, out + j * cap, cap, i, hidden, ln ? ln + 8 * j : NULL);
  }
  lanes_tail(lanes, dout, out, cap, m);
}

/* KT inputs of the back-data product (W at input column k0), samples
 * i..i+16; their maxima into lanes (rows k0..) unless NULL. */
AI void back_tile(int KT, const float *W, size_t din, size_t dout, const float *d, const float *aprev, float *dprev,
                  size_t cap, size_t i, uint32_t *lanes)
{
  v8f acc[4][2];
  tile_sum(KT, W, 1, din, dout, d, cap, i, acc);
  for (int t = 0; t < KT; t++) {
    v8f o[2];
    for (int h = 0; h < 2; h++) {
      o[h] = leak_unless(ld8(aprev + t * cap + i + 8 * h) > 0.0f, acc[t][h]);
      st8(dprev + t * cap + i + 8 * h, o[h]);
    }
    if (lanes) note_max(lanes + 8 * t, o[0], o[1]);
  }
}

/* lanes as in SurrogateLayerForward_CPU, 8 per row of dprev. */
__attribute__((target_clones("avx2", "default"))) void SurrogateLayerBackData_CPU(const float *W, size_t din,
                                                                                  size_t dout, const float *d,
                                                                                  const float *aprev, float *dprev,
                                                                                  size_t cap, size_t m16, size_t m,
                                                                                  uint32_t *lanes)
{
  lanes_begin(lanes, din);
  for (size_t i = 0; i < m16; i += 16) {
    uint32_t *ln = lanes && i + 16 <= m ? lanes : NULL;
    size_t    k  = 0;
    for (; k + 4 <= din; k += 4)
      back_tile(4, W + k, din, dout, d, aprev + k * cap, dprev + k * cap, cap, i, ln ? ln + 8 * k : NULL);
    for (; k < din; k++)
      back_tile(1, W + k, din, dout, d, aprev + k * cap, dprev + k * cap, cap, i, ln ? ln + 8 * k : NULL);
  }
  lanes_tail(lanes, din, dprev, cap, m);
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
__attribute__((target_clones("avx2", "default"))) void SurrogateChunkPartials_CPU(size_t din, size_t dout,
                                                                                  const float *d, const float *a,
                                                                                  size_t m, size_t cap, float *out)
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
