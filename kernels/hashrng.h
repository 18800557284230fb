/* kernels/hashrng.h: counter-based random numbers and a split-independent
 * 64-bit field hash. Header-only so that CPU and CUDA code draw identical
 * numbers: value k of stream `seed` is a pure function of (seed, k). */
#ifndef MINIAPP_KERNELS_HASHRNG_H
#define MINIAPP_KERNELS_HASHRNG_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define KERNELS_HD __host__ __device__ __forceinline__
#else
#define KERNELS_HD static inline
#endif

/* splitmix64 finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer. */
KERNELS_HD uint64_t mix64(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform double in [0, 1) with 53 random bits, element k of stream seed. */
KERNELS_HD double rng_uniform(uint64_t seed, uint64_t k)
{
  return (double)(mix64(seed ^ mix64(k)) >> 11) * 0x1.0p-53;
}

/* Uniform float in [0, 1) with 24 random bits (same draw as rng_uniform). */
KERNELS_HD float rng_uniformf(uint64_t seed, uint64_t k)
{
  return (float)(mix64(seed ^ mix64(k)) >> 40) * 0x1.0p-24f;
}

/* Contribution of value v at natural (global) index i to a field hash. The
 * field hash is the wrapping uint64 sum of all contributions: integer addition
 * is associative, so ranks and threads can add their parts in any order and
 * the result depends only on (index, bits) pairs, i.e. on the field in natural
 * order, not on the decomposition. -0.0 and 0.0 hash differently (bits).
 * Every NaN hashes as one (the default quiet NaN's bits): IEEE 754 leaves a
 * NaN's sign and payload to the hardware and the operand order (x86 keeps
 * the first operand's, a GPU gives its canonical NaN), so two runs that
 * agree bit for bit on every number hash alike. */
KERNELS_HD uint64_t hash_term(uint64_t i, double v)
{
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  if ((b & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL) b = 0x7ff8000000000000ULL;
  return mix64(mix64(i) ^ b);
}

KERNELS_HD uint64_t hash_termf(uint64_t i, float v)
{
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  if ((b & 0x7fffffffu) > 0x7f800000u) b = 0x7fc00000u;
  return mix64(mix64(i) ^ (uint64_t)b);
}

#endif
