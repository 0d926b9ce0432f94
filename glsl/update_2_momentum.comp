#version 430
// update_2_momentum.comp: heavy-ball momentum, in place: v = mu·v + g; p -= lr·v (as PyTorch's SGD
//   with momentum)
//
// Shapes    params[n]  grads[n]  velocity[n]   float32, any flat layout (all parameters in one buffer)
//           sizes: n ≥ 1
// NumPy     velocity[:] = mu * velocity + grads;  params -= lr * velocity        (all float32)
// Bindings  17 params float[n] (read-write)  18 grads float[n] (readonly)  19 velocity float[n] (read-write)
//           velocity holds zeros before the first step
// Uniforms  uint n; float lr, mu
// Dispatch  local (LOCAL, 1, 1); groups (ceil(n/LOCAL) or more, 1, 1)
//           one thread per parameter
// Requires  LOCAL <= 1024
// Changed   vs update_1_sgd: one more buffer, the velocity, read and written once per step; params and
//           grads on the same bindings (17, 18)
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
layout(std430, binding = 19) buffer Velocity { float velocity[]; };

uniform uint n;
uniform float lr;
uniform float mu;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= n) return;  // the last group's spare threads
    float v = mu * velocity[i] + grads[i];
    velocity[i] = v;
    params[i] -= lr * v;
}
