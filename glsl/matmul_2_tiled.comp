#version 430
// matmul_2_tiled.comp: C = A·B, A and B staged through TILE×TILE tiles in shared memory
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     C = A @ B
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
// Uniforms  uint M, N, K
// Dispatch  local (TILE, TILE, 1); groups (ceil(N/TILE) or more, ceil(M/TILE) or more, 1)
// Requires  TILE*TILE <= 1024
// Changed   vs matmul_1_naive: a work group loads a TILE×TILE tile of A and of B into shared memory once
//           (one float per thread each), then every thread reads TILE values of each from there:
//           global traffic drops TILE-fold. Loads past M, N or K store 0 (edges guarded), and no
//           thread returns early because all of them must reach barrier().
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py)
// Tunables  TILE * TILE <= 1024 (checked below)
#ifndef TILE
#define TILE 16
#endif
#if TILE * TILE > 1024
#error "TILE * TILE must be <= 1024 (threads of a work group)"
#endif

layout(local_size_x = TILE, local_size_y = TILE) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };

uniform uint M;
uniform uint N;
uniform uint K;

shared float As[TILE][TILE];      // As[row in tile][k in tile]
shared float Bs[TILE][TILE];      // Bs[k in tile][column in tile]

void main() {
    uint tx = gl_LocalInvocationID.x;           // column within the tile
    uint ty = gl_LocalInvocationID.y;           // row within the tile
    uint n = gl_WorkGroupID.x * TILE + tx;
    uint m = gl_WorkGroupID.y * TILE + ty;
    float acc = 0.0;
    for (uint k0 = 0u; k0 < K; k0 += TILE) {
        float a = 0.0, b = 0.0;
        if (m < M && k0 + tx < K) a = A[m * K + k0 + tx];
        if (k0 + ty < K && n < N) b = B[(k0 + ty) * N + n];
        As[ty][tx] = a;
        Bs[ty][tx] = b;
        memoryBarrierShared();
        barrier();
        for (uint k = 0u; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        barrier();                               // nobody overwrites a tile another thread still reads
    }
    if (m < M && n < N) C[m * N + n] = acc;
}
