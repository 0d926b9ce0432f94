#version 430
// update_1_sgd.comp: one plain SGD step in place, p -= lr * g, over every parameter at once
//
// Shapes    params[n]  grads[n]   float32, any flat layout (all parameters back to back in one buffer)
//           sizes: n ≥ 1
// NumPy     params -= np.float32(lr) * grads
// Bindings  17 params float[n] (read-write)  18 grads float[n] (readonly)
//           numbers shared by update_1_sgd, update_2_momentum and update_3_adam (state in 19, 20)
// Uniforms  uint n (elements); float lr (learning rate)
// Dispatch  local (LOCAL, 1, 1); groups (ceil(n/LOCAL) or more, 1, 1)
//           one thread per element
// Requires  LOCAL <= 1024
// Changed   first version. `precise` keeps lr*g rounded to float32 before the subtraction (no fused
//           multiply-add), as NumPy computes it
// Checked   relative error < 1e-5 against NumPy (tests/test_backprop.py)
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

uniform uint n;    // elements to update
uniform float lr;  // learning rate

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= n) return;  // the last group sticks out past the end
    precise float step = lr * grads[i];
    params[i] = params[i] - step;
}
