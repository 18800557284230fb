/* surrogate/surrogate_math.h: the element-wise arithmetic of the MLP (activation,
 * normalization, output error, Adam update), written once for the host compiler
 * and nvcc so that both backends execute the same IEEE float operations.
 * Only + - * / sqrt, each correctly rounded: on the device the _rn intrinsics
 * forbid FMA contraction whatever -fmad says; on the host -ffp-contract=off. */
#ifndef MINIAPP_SURROGATE_MATH_H
#define MINIAPP_SURROGATE_MATH_H

#include <math.h>

#if defined(__CUDACC__)
#define SURR_HD __host__ __device__ __forceinline__
#else
#define SURR_HD static inline
#endif

#if defined(__CUDA_ARCH__)
#define SURR_ADD(a, b) __fadd_rn((a), (b))
#define SURR_SUB(a, b) __fsub_rn((a), (b))
#define SURR_MUL(a, b) __fmul_rn((a), (b))
#define SURR_DIV(a, b) __fdiv_rn((a), (b))
#define SURR_SQRT(a)   __fsqrt_rn(a)
#else
#define SURR_ADD(a, b) ((a) + (b))
#define SURR_SUB(a, b) ((a) - (b))
#define SURR_MUL(a, b) ((a) * (b))
#define SURR_DIV(a, b) ((a) / (b))
#define SURR_SQRT(a)   sqrtf(a)
#endif

/* Leaky ReLU with slope 2^-6: multiplying by a power of two is exact, so the
 * activation and its derivative cost no rounding at all. */
#define SURR_LEAK 0x1p-6f

SURR_HD float surr_act(float z) { return z > 0.0f ? z : SURR_MUL(z, SURR_LEAK); }
/* Derivative applied to g, from the activation's output a (same sign as z). */
SURR_HD float surr_act_grad(float g, float a) { return a > 0.0f ? g : SURR_MUL(g, SURR_LEAK); }

SURR_HD float surr_normalize(float x, float mean, float sd) { return SURR_DIV(SURR_SUB(x, mean), sd); }
SURR_HD float surr_denormalize(float y, float mean, float sd) { return SURR_ADD(SURR_MUL(y, sd), mean); }

/* One step of a fixed-order dot product: acc + w*a, two roundings. */
SURR_HD float surr_madd(float acc, float w, float a) { return SURR_ADD(acc, SURR_MUL(w, a)); }

/* Adam coefficients for one step, computed once on the host. bc1 = 1 - beta1^t
 * with beta1^t formed by repeated float multiplication (no powf: libm's powf
 * is not correctly rounded and differs from the device's). */
typedef struct {
  float lr, beta1, one_m_beta1, beta2, one_m_beta2, bc1, bc2, eps, wd;
} surr_adam_coef;

/* AdamW (decoupled weight decay) on one parameter. */
SURR_HD void surr_adam(float *p, float *m, float *v, float g, surr_adam_coef c)
{
  float mn = SURR_ADD(SURR_MUL(c.beta1, *m), SURR_MUL(c.one_m_beta1, g));
  float vn = SURR_ADD(SURR_MUL(c.beta2, *v), SURR_MUL(c.one_m_beta2, SURR_MUL(g, g)));
  float mh = SURR_DIV(mn, c.bc1);
  float vh = SURR_DIV(vn, c.bc2);
  float up = SURR_ADD(SURR_DIV(mh, SURR_ADD(SURR_SQRT(vh), c.eps)), SURR_MUL(c.wd, *p));
  *p = SURR_SUB(*p, SURR_MUL(c.lr, up));
  *m = mn;
  *v = vn;
}

#endif
