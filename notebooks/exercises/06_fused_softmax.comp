#version 430
// 06_fused_softmax.comp: two stages in one dispatch: the output layer's logits and their softmax,
//                        probs = softmax(X·W + b) row by row; the logits never leave the thread
//
// Shapes    X[B,K]  W[K,C]  b[C]  probs[B,C]   float32, row-major, std430; C <= MAX_C (16)
// NumPy     z = X @ W + b;  z -= z.max(axis=1, keepdims=True);  probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
// Bindings  0 X float[B*K] (readonly)  1 W float[K*C] (readonly)  2 b float[C] (readonly)
//           3 probs float[B*C] (writeonly)
// Uniforms  uint B, K, C
// Dispatch  local (LOCAL, 1, 1); groups (ceil(B/LOCAL), 1, 1)
//           local size (64, 1, 1) as committed; thread x = sample r
// Exercise  the logits of row r are computed into the array z (one register each: a small width such as
//           MNIST's 10 classes is what makes this fusion easy); turn them into probabilities before the
//           store (the TODO): subtract the row max, exp, divide by the sum. Unfused, this was two
//           dispatches with the logits written to memory and read back in between.
// Checked   exercises.check("06_fused_softmax", "my_fused_softmax.comp"): B×K×C = 1×784×10, 37×70×13,
//           65×5×16, 3×1×1, 2000×128×10 against NumPy
#ifndef LOCAL
#define LOCAL 64
#endif
#ifndef MAX_C
#define MAX_C 16
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Input { float X[]; };
layout(std430, binding = 1) readonly buffer Weights { float W[]; };
layout(std430, binding = 2) readonly buffer Bias { float b[]; };
layout(std430, binding = 3) writeonly buffer Probs { float probs[]; };

uniform uint B;  // samples
uniform uint K;  // inputs per sample
uniform uint C;  // classes, at most MAX_C

void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r >= B) return;
    float z[MAX_C];
    for (uint c = 0u; c < C; ++c) {            // stage 1: the logits
        float sum = b[c];
        for (uint k = 0u; k < K; ++k) sum += X[r * K + k] * W[k * C + c];
        z[c] = sum;
    }
    // TODO: stage 2, the softmax of z in registers: subtract the row max, exp, divide by the sum
    for (uint c = 0u; c < C; ++c) probs[r * C + c] = z[c];
}
