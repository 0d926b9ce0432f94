#version 430
// matmul_3_blocked.comp: C = A·B, each thread computes a 4×4 block of C from vec4 reads of shared tiles
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     C = A @ B
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
// Uniforms  uint M, N, K
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(M/BM), 1)
//           a work group computes a BM×BN block of C; THREADS = (BM/4)*(BN/4), each thread 4×4 outputs
// Requires  THREADS == (BM // 4)*(BN // 4);  BM % 4 == 0;  BN % 4 == 0
// Changed   vs matmul_2_tiled: register blocking. A work group owns a BM×BN block of C and walks K in
//           steps of BK; each thread keeps a 4×4 block of C in registers (16 accumulators) and per
//           k reads one vec4 of A and one vec4 of B from shared memory for 16 multiply-adds
//           (matmul_2_tiled: 2 scalar reads per multiply-add). The A tile is stored transposed,
//           As[k][row], so the four rows a thread needs are one vec4. Loads past the edges store 0.
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py)
// Tunables  BM, BN multiples of 4; THREADS = (BM/4)*(BN/4) (both checked below)
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef THREADS
#define THREADS 256
#endif

#if THREADS != (BM / 4) * (BN / 4)
#error "THREADS must equal (BM/4)*(BN/4)"
#endif
#if (BM % 4) != 0 || (BN % 4) != 0
#error "BM and BN must be multiples of 4"
#endif

layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };

uniform uint M;
uniform uint N;
uniform uint K;

shared vec4 As[BK][BM / 4];   // As[k][g] = A rows 4g..4g+3 of the tile at column k (transposed)
shared vec4 Bs[BK][BN / 4];   // Bs[k][c] = B row k of the tile, columns 4c..4c+3

void main() {
    uint t = gl_LocalInvocationIndex;
    uint tx = t % (BN / 4);                    // this thread's columns: bn + 4*tx .. +3
    uint ty = t / (BN / 4);                    // this thread's rows:    bm + 4*ty .. +3
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;

    vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));

    for (uint k0 = 0u; k0 < K; k0 += BK) {
        // A tile, BM×BK: one "quad" = four rows at one k. Neighbouring threads take neighbouring k.
        for (uint q = t; q < (BM / 4) * BK; q += THREADS) {
            uint k = q % BK, g = q / BK;
            uint m = bm + 4u * g, kk = k0 + k;
            vec4 v = vec4(0.0);
            if (kk < K) {
                if (m      < M) v.x = A[(m     ) * K + kk];
                if (m + 1u < M) v.y = A[(m + 1u) * K + kk];
                if (m + 2u < M) v.z = A[(m + 2u) * K + kk];
                if (m + 3u < M) v.w = A[(m + 3u) * K + kk];
            }
            As[k][g] = v;
        }
        // B tile, BK×BN: one quad = four neighbouring columns of one row.
        for (uint q = t; q < BK * (BN / 4); q += THREADS) {
            uint c = q % (BN / 4), k = q / (BN / 4);
            uint n = bn + 4u * c, kk = k0 + k;
            vec4 v = vec4(0.0);
            if (kk < K) {
                uint row = kk * N;
                if (n      < N) v.x = B[row + n];
                if (n + 1u < N) v.y = B[row + n + 1u];
                if (n + 2u < N) v.z = B[row + n + 2u];
                if (n + 3u < N) v.w = B[row + n + 3u];
            }
            Bs[k][c] = v;
        }
        memoryBarrierShared();
        barrier();
        for (uint k = 0u; k < BK; ++k) {
            vec4 a = As[k][ty];
            vec4 b = Bs[k][tx];
            acc[0] += a.x * b;
            acc[1] += a.y * b;
            acc[2] += a.z * b;
            acc[3] += a.w * b;
        }
        barrier();
    }

    uint n = bn + 4u * tx;
    for (uint i = 0u; i < 4u; ++i) {
        uint m = bm + 4u * ty + i;
        if (m >= M) break;
        if (n      < N) C[m * N + n]      = acc[i].x;
        if (n + 1u < N) C[m * N + n + 1u] = acc[i].y;
        if (n + 2u < N) C[m * N + n + 2u] = acc[i].z;
        if (n + 3u < N) C[m * N + n + 3u] = acc[i].w;
    }
}
