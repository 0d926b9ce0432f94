#version 430
// update_1_sgd.comp: one plain SGD step in place, p -= lr * g, over every parameter at once
//
// Shapes    params[n]  grads[n]   float32 (W1, b1, W2, b2 back to back in one buffer, see helpers/gpu_mlp.py)
// NumPy     params -= np.float32(lr) * grads          (reference.SGD.step)
// Bindings  17 params (read and written)  18 grads (readonly)
//           the training pipeline's fixed layout (helpers/gpu_mlp.py BINDINGS): bound once, not per step
// Uniforms  uint n (elements), float lr (learning rate)
// Dispatch  local (LOCAL, 1, 1) = (256, 1, 1); groups (ceil(n/LOCAL), 1, 1): one thread per element
// Changed   first version. `precise` keeps lr*g rounded to float32 before the subtraction (no fused
//           multiply-add), as NumPy computes it
// Checked   relative error < 1e-5 against NumPy (tests/test_backprop.py)
#define LOCAL 256

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
