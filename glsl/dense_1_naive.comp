#version 430
// dense_1_naive.comp: one dense layer, Y = relu(X·W + b); one file serves both layers of the MLP:
//   RELU 1 (default) gives the hidden layer's activations, RELU 0 gives the output layer's logits
//
// Shapes    X[B,K]  W[K,N]  b[N]  Y[B,N]   float32, row-major, std430 (flat float arrays: no padding)
//           sizes: B, K, N ≥ 1
// NumPy     Y = np.maximum(X @ W + b, 0)   (RELU 1);   Y = X @ W + b   (RELU 0)
// Bindings  0 X float[B*K] (readonly)  1 W float[K*N] (readonly)  2 b float[N] (readonly)
//           3 Y float[B*N] (writeonly)
// Uniforms  uint B, K, N
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X), ceil(B/LOCAL_Y), 1)
//           one thread per output: x indexes the column n, y the row (sample) of Y; 16 × 16 by default
// Requires  LOCAL_X*LOCAL_Y <= 1024
// Changed   first version: each thread loops over K reading a row of X and a column of W from global
//           memory; threads past N or B (sizes not multiples of the local size) do nothing
// Checked   relative error < 1e-5 against NumPy (tests/test_forward.py)
// Tunables  LOCAL_X * LOCAL_Y <= 1024 (checked below)
#ifndef RELU
#define RELU 1
#endif
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif
#if LOCAL_X * LOCAL_Y > 1024
#error "LOCAL_X * LOCAL_Y must be <= 1024 (threads of a work group)"
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Input { float X[]; };
layout(std430, binding = 1) readonly buffer Weights { float W[]; };
layout(std430, binding = 2) readonly buffer Bias { float b[]; };
layout(std430, binding = 3) writeonly buffer Output { float Y[]; };

uniform uint B;  // rows: samples in the batch
uniform uint K;  // inputs per sample
uniform uint N;  // outputs per sample

void main() {
    uint n = gl_GlobalInvocationID.x;  // output column
    uint row = gl_GlobalInvocationID.y;  // sample
    if (n >= N || row >= B) return;  // the last groups stick out past the matrix

    float sum = b[n];
    for (uint k = 0u; k < K; ++k) {
        sum += X[row * K + k] * W[k * N + n];  // threads next in x read W next to each other
    }
#if RELU
    sum = max(sum, 0.0);
#endif
    Y[row * N + n] = sum;
}
