#version 430
// dense_2_splitk.comp: one dense layer, Y = relu(X·W + b), for small batches (one sample):
//   the sum over K is split across the LOCAL_Y threads of a column and reduced in shared memory.
//   One file serves both layers: RELU 1 (default) for the hidden layer, RELU 0 for the logits
//
// Shapes    X[B,K]  W[K,N]  b[N]  Y[B,N]   float32, row-major, std430 (flat float arrays: no padding)
//           sizes: B, K, N ≥ 1
// NumPy     Y = np.maximum(X @ W + b, 0)   (RELU 1);   Y = X @ W + b   (RELU 0)
// Bindings  0 X float[B*K] (readonly)  1 W float[K*N] (readonly)  2 b float[N] (readonly)
//           3 Y float[B*N] (writeonly)
// Uniforms  uint B, K, N
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X), B, 1)
//           one work group per sample and LOCAL_X columns; thread (x, y) sums k = y, y + LOCAL_Y, ...
// Requires  (LOCAL_Y & (LOCAL_Y - 1)) == 0;  LOCAL_X*LOCAL_Y <= 1024
// Changed   vs dense_1_naive: with B = 1 dense_1_naive keeps only 16 of every 256 threads busy, each
//           looping over all of K; here all 256 work, each over K/LOCAL_Y terms, then a tree reduction
//           over y. Same bindings and uniforms: a drop-in replacement
// Checked   relative error < 1e-5 against NumPy (tests/test_forward.py)
// Tunables  LOCAL_Y a power of two; LOCAL_X * LOCAL_Y <= 1024 (both checked below)
#ifndef RELU
#define RELU 1
#endif
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif
#if (LOCAL_Y & (LOCAL_Y - 1)) != 0
#error "LOCAL_Y must be a power of two (the reduction tree halves it)"
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

shared float partial[LOCAL_Y][LOCAL_X];  // one partial sum per thread

void main() {
    uint x = gl_LocalInvocationID.x;
    uint y = gl_LocalInvocationID.y;
    uint n = gl_WorkGroupID.x * LOCAL_X + x;  // output column
    uint row = gl_WorkGroupID.y;              // sample (groups in y = B, so always < B)

    float sum = 0.0;
    if (n < N && row < B) {  // no early return: every thread must reach the barriers below
        for (uint k = y; k < K; k += LOCAL_Y) {
            sum += X[row * K + k] * W[k * N + n];  // threads next in x read W next to each other
        }
    }
    partial[y][x] = sum;
    barrier();
    for (uint half_ = LOCAL_Y / 2u; half_ > 0u; half_ /= 2u) {
        if (y < half_) partial[y][x] += partial[y + half_][x];
        barrier();
    }
    if (y == 0u && n < N && row < B) {
        float out_ = partial[0][x] + b[n];
#if RELU
        out_ = max(out_, 0.0);
#endif
        Y[row * N + n] = out_;
    }
}
