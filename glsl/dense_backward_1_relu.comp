#version 430
// dense_backward_1_relu.comp: backward through one dense layer Y = A·W + b whose input A = relu(Z)
//   came from a ReLU layer: the weight and bias gradients and the gradient into that layer, masked
//
// Shapes    A[B,K]  W[K,N]  dY[B,N]  ->  dW[K,N]  db[N]  dZ[B,K]   float32, row-major, std430
//           sizes: B, K, N ≥ 1
// NumPy     dW = A.T @ dY;  db = dY.sum(axis=0);  dZ = (dY @ W.T) * (A > 0)
//           (A = relu(Z), so A > 0 exactly where Z > 0: the ReLU's mask without storing Z)
// Bindings  5 W float[K*N] (readonly)  7 A float[B*K] (readonly)  9 dY float[B*N] (readonly)
//           10 dZ float[B*K] (writeonly)  13 dW float[K*N] (writeonly)  14 db float[N] (writeonly)
//           numbers from a training step's one binding layout, so every buffer is bound once, not per step
// Uniforms  uint B (rows), K (inputs of the layer), N (outputs of the layer)
// Dispatch  local (LX, BS, 1); groups (ceil((K*N + N)/LX) + ceil(B*K/(LX*BS)), 1, 1)
//           the first ceil((K*N + N)/LX) groups: one thread column per dW or db entry; its BS threads each
//           sum every BS-th sample, then the BS partial sums are added in shared memory in a fixed order;
//           the other ceil(B*K/(LX*BS)) groups: one thread per dZ entry, a sum over the N outputs.
//           Which of the two a work group does depends only on its index, so no thread diverges in it.
//           Defaults: the lowest median of a sweep of LX and BS on an NVIDIA GPU of 132 SMs
// Changed   first version; deterministic (fixed summation order, no atomics); MASK_RELU 0 gives the
//           plain dA = dY @ W.T for a layer whose input had no ReLU
// Checked   relative error < 1e-5 against NumPy (tests/test_backprop.py)
#ifndef LX
#define LX 32        // threads per row of a work group (local x)
#endif
#ifndef BS
#define BS 8         // batch slices for dW and db (local y)
#endif
#ifndef MASK_RELU
#define MASK_RELU 1  // 1: multiply by (A > 0); 0: no mask
#endif

layout(local_size_x = LX, local_size_y = BS, local_size_z = 1) in;

layout(std430, binding = 5) readonly buffer Weights { float W[]; };
layout(std430, binding = 7) readonly buffer Inputs { float A[]; };
layout(std430, binding = 9) readonly buffer GradOut { float dY[]; };
layout(std430, binding = 10) writeonly buffer GradIn { float dZ[]; };
layout(std430, binding = 13) writeonly buffer GradW { float dW[]; };
layout(std430, binding = 14) writeonly buffer GradB { float db[]; };

uniform uint B;  // rows: samples in the batch
uniform uint K;  // inputs of the layer
uniform uint N;  // outputs of the layer

shared float partial[BS * LX];

void main() {
    uint x = gl_LocalInvocationID.x;
    uint s = gl_LocalInvocationID.y;
    uint group = gl_WorkGroupID.x;
    uint n_wb = K * N + N;                    // dW entries, then db entries
    uint g1 = (n_wb + LX - 1u) / LX;          // work groups for dW and db
    uint o = group * LX + x;                  // (for those) the dW or db entry of this thread column

    float acc = 0.0;
    if (group < g1) {
        if (o < K * N) {
            uint k = o / N, n = o % N;
            for (uint b = s; b < B; b += BS) acc += A[b * K + k] * dY[b * N + n];
        } else if (o < n_wb) {
            uint n = o - K * N;
            for (uint b = s; b < B; b += BS) acc += dY[b * N + n];
        }
    }
    partial[s * LX + x] = acc;
    barrier();  // (only dW/db groups use it; every thread reaches it, as barrier() requires)

    if (group < g1) {
        if (s == 0u && o < n_wb) {
            float sum = 0.0;
            for (uint q = 0u; q < BS; ++q) sum += partial[q * LX + x];
            if (o < K * N) dW[o] = sum; else db[o - K * N] = sum;
        }
    } else {
        uint e = (group - g1) * (LX * BS) + s * LX + x;  // dZ entry: row e / K, column e % K
        if (e < B * K) {
            uint row = e / K, k = e % K;
            float sum = 0.0;
            for (uint n = 0u; n < N; ++n) sum += dY[row * N + n] * W[k * N + n];
#if MASK_RELU
            if (!(A[e] > 0.0)) sum = 0.0;
#endif
            dZ[e] = sum;
        }
    }
}
