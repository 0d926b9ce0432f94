#version 430
// matmul_1_naive.comp: C = A·B, one thread per output element, every operand read from global memory
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     C = A @ B      i.e.  C[m,n] = sum over k of A[m,k] * B[k,n]
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
// Uniforms  uint M, N, K
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X) or more, ceil(M/LOCAL_Y) or more, 1)
// Requires  LOCAL_X*LOCAL_Y <= 1024
// Changed   first version: the reference loop, one thread per C[m,n]; threads past M or N return
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py)
// Tunables  LOCAL_X * LOCAL_Y <= 1024 (checked below)
//
// x runs along n, so the 16 threads of a row read 16 neighbouring B values (coalesced) and share one
// A value (a broadcast). Every thread still reads 2K floats for 2K flops: memory bound.
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif
#if LOCAL_X * LOCAL_Y > 1024
#error "LOCAL_X * LOCAL_Y must be <= 1024 (threads of a work group)"
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };

uniform uint M;
uniform uint N;
uniform uint K;

void main() {
    uint n = gl_GlobalInvocationID.x;
    uint m = gl_GlobalInvocationID.y;
    if (m >= M || n >= N) return;
    float acc = 0.0;
    for (uint k = 0u; k < K; ++k) {
        acc += A[m * K + k] * B[k * N + n];
    }
    C[m * N + n] = acc;
}
