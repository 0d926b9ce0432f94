#version 430
// 05_relu_backward.comp: backprop through a dense layer into the ReLU before it, dZ = (dY·Wᵀ) ⊙ (A > 0)
//
// Shapes    dY[B,C]  W[H,C]  A[B,H]  dZ[B,H]   float32, row-major, std430 (flat float arrays)
//           the layer was Y = A·W + b with A = relu(Z): W maps H inputs to C outputs
// NumPy     dZ = (dY @ W.T) * (A > 0)
// Bindings  0 dY float[B*C] (readonly)  1 W float[H*C] (readonly)  2 A float[B*H] (readonly)
//           3 dZ float[B*H] (writeonly)
// Uniforms  uint B, H, C
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(H/LOCAL_X), ceil(B/LOCAL_Y), 1)
//           local size (16, 16, 1) as committed
//           thread x = hidden unit h, thread y = sample (row of dY, A and dZ)
// Exercise  write the sum over c and the mask (the TODOs). Wᵀ is never built: (dY·Wᵀ)[row, h] reads row h
//           of W. A = relu(Z) is > 0 exactly where Z > 0, so the mask comes from A and Z is not needed.
//           Every element of dZ is written, the masked ones as 0.
// Checked   exercises.check("05_relu_backward", "my_relu_backward.comp"): B×H×C = 1×128×10, 37×70×13,
//           130×17×10, 16×33×1, 512×300×10 against NumPy
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer GradY { float dY[]; };
layout(std430, binding = 1) readonly buffer Weights { float W[]; };
layout(std430, binding = 2) readonly buffer Activations { float A[]; };
layout(std430, binding = 3) writeonly buffer GradZ { float dZ[]; };

uniform uint B;  // samples
uniform uint H;  // hidden units (the layer's inputs)
uniform uint C;  // the layer's outputs

void main() {
    uint h = gl_GlobalInvocationID.x;
    uint row = gl_GlobalInvocationID.y;
    if (h >= H || row >= B) return;
    float sum = 0.0;
    for (uint c = 0u; c < C; ++c) {
        // TODO 1: add dY[row, c] * Wᵀ[c, h]
    }
    // TODO 2: the ReLU mask: 0 where A[row, h] is not > 0
    dZ[row * H + h] = sum;
}
