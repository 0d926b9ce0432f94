#version 430
// 04_tiled.comp: C = A·B, turned from one thread per output reading global memory (matmul_1) into
//                TILE×TILE tiles of A and B staged in shared memory (matmul_2's idea)
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
// NumPy     C = A @ B      i.e.  C[m,n] = sum over k of A[m,k] * B[k,n]
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
// Uniforms  uint M, N, K
// Dispatch  local (TILE, TILE, 1); groups (ceil(N/TILE), ceil(M/TILE), 1)
//           local size (16, 16, 1) as committed
//           thread x = column n of C, thread y = row m of C; one work group = one TILE×TILE block of C
// Exercise  the loop over k0 walks the tiles; fill in the three TODOs: each thread loads one element of
//           the A tile and one of the B tile (0.0 where the tile sticks out past A or B), and the work
//           group waits at a barrier() after the loads and again after the multiply-adds. No thread may
//           return before the loop: every thread must reach every barrier.
// Checked   exercises.check("04_tiled", "my_tiled.comp"): M×K×N = 1×1×1, 1×300×77, 37×13×70, 77×300×1,
//           129×257×65, 256×512×300 against NumPy
#ifndef TILE
#define TILE 16
#endif

layout(local_size_x = TILE, local_size_y = TILE, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };

uniform uint M;
uniform uint N;
uniform uint K;

shared float As[TILE][TILE];  // As[row in tile][k in tile]
shared float Bs[TILE][TILE];  // Bs[k in tile][column in tile]

void main() {
    uint tx = gl_LocalInvocationID.x;  // column within the tile
    uint ty = gl_LocalInvocationID.y;  // row within the tile
    uint n = gl_WorkGroupID.x * TILE + tx;
    uint m = gl_WorkGroupID.y * TILE + ty;
    // matmul_1 did, per thread: if (m >= M || n >= N) return; for k < K: acc += A[m * K + k] * B[k * N + n]
    float acc = 0.0;
    for (uint k0 = 0u; k0 < K; k0 += TILE) {
        float a = 0.0, b = 0.0;
        if (m < M && k0 + tx < K) a = A[m * K + k0 + tx];
        if (k0 + ty < K && n < N) b = B[(k0 + ty) * N + n];
        As[ty][tx] = a;
        Bs[ty][tx] = b;
        memoryBarrierShared();
        barrier();                      // the whole tile is loaded
        for (uint k = 0u; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        barrier();                      // nobody overwrites a tile another thread still reads
    }
    if (m < M && n < N) C[m * N + n] = acc;
}
