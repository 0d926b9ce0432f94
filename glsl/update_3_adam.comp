#version 430
// update_3_adam.comp: Adam, in place: m = b1·m + (1-b1)·g; v = b2·v + (1-b2)·g²;
//   p -= lr · (m / c1) / (sqrt(v / c2) + eps), with the bias corrections c1 = 1 - b1^t, c2 = 1 - b2^t
//
// Shapes    params[n]  grads[n]  m[n]  v[n]   float32, any flat layout (all parameters in one buffer)
//           sizes: n ≥ 1
// NumPy     m[:] = beta1 * m + (1 - beta1) * grads;  v[:] = beta2 * v + (1 - beta2) * grads**2
//           params -= lr * (m / c1) / (np.sqrt(v / c2) + eps)       with c1 = 1 - beta1**t, c2 = 1 - beta2**t
// Bindings  17 params float[n] (read-write)  18 grads float[n] (readonly)  19 m float[n] (read-write)
//           20 v float[n] (read-write)
//           m and v hold zeros at t = 0
// Uniforms  uint n; float lr, beta1, beta2, one_minus_beta1, one_minus_beta2, eps, c1, c2
//           (1 - beta and the corrections are computed on the CPU in float64: float32 pow() on the GPU
//           loses up to 1e-4 of c2 = 1 - 0.999^t at small t)
// Dispatch  local (LOCAL, 1, 1); groups (ceil(n/LOCAL) or more, 1, 1)
//           one thread per parameter
// Requires  LOCAL <= 1024
// Changed   vs update_2_momentum: a second moment per parameter scales each step; two state buffers
//           (19 m, 20 v); params and grads on the same bindings (17, 18)
// Checked   relative error < 1e-5 against NumPy over three steps (tests/test_fused.py)
// Tunables  LOCAL <= 1024 (checked below)
#ifndef LOCAL
#define LOCAL 256
#endif
#if LOCAL > 1024
#error "LOCAL must be <= 1024 (threads of a work group)"
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 17) buffer Params { float params[]; };
layout(std430, binding = 18) readonly buffer Grads { float grads[]; };
layout(std430, binding = 19) buffer FirstMoment { float m[]; };
layout(std430, binding = 20) buffer SecondMoment { float v[]; };

uniform uint n;
uniform float lr;
uniform float beta1, beta2, one_minus_beta1, one_minus_beta2, eps;
uniform float c1, c2;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= n) return;
    float g = grads[i];
    float mi = beta1 * m[i] + one_minus_beta1 * g;
    float vi = beta2 * v[i] + one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] -= lr * (mi / c1) / (sqrt(vi / c2) + eps);
}
