#version 430
// matmul_4_bigtile.comp: C = A·B, 128×128 block per work group, an 8×8 block of C per thread
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     C = A @ B
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
// Uniforms  uint M, N, K
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(M/BM), 1)
//           a work group computes a BM×BN block of C; THREADS = (BM/TM)*(BN/TN), each thread TM×TN outputs
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % TM == 0;  BN % TN == 0
// Changed   vs matmul_3_blocked: bigger blocks. Each thread keeps TM×TN = 8×8 accumulators and per k reads
//           TM/4 + TN/4 = 4 vec4 from shared memory for 64 multiply-adds (matmul_3_blocked: 2 for 16),
//           and a 128×128 block reads each A and B value from global memory half as often as 64×64.
//           A thread's rows and columns are vec4 chunks spaced BM/(TM/4) and BN/(TN/4) apart, not
//           adjacent, so the 8 threads that share a shared-memory cycle read 8 neighbouring vec4
//           (no bank conflicts). The transposed A tile gets PAD vec4 of padding per row so the
//           stores of neighbouring k land in different banks. All loops have constant trip counts
//           and are unrolled.
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py)
// Tunables  TM, TN multiples of 4; BM divisible by TM and BN by TN; THREADS = (BM/TM)*(BN/TN) (checked below)
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef PAD
#define PAD 1
#endif

#if THREADS != (BM / TM) * (BN / TN)
#error "THREADS must equal (BM/TM)*(BN/TN)"
#endif
#if (TM % 4) != 0 || (TN % 4) != 0
#error "TM and TN must be multiples of 4"
#endif

#pragma optionNV(unroll all)

layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };

uniform uint M;
uniform uint N;
uniform uint K;

const uint TX = BN / TN;     // threads along n
const uint TY = BM / TM;     // threads along m

shared vec4 As[BK][BM / 4 + PAD];   // As[k][g]: rows 4g..4g+3 of the A tile at column k (transposed)
shared vec4 Bs[BK][BN / 4];         // Bs[k][c]: row k of the B tile, columns 4c..4c+3

void main() {
    uint t = gl_LocalInvocationIndex;
    uint tx = t % TX;
    uint ty = t / TX;
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;

    // acc[r][j]: row bm + 4*(i*TY + ty) + ii  with r = 4*i + ii;  columns bn + 4*(j*TX + tx) .. +3
    vec4 acc[TM][TN / 4];
    for (uint r = 0u; r < TM; ++r)
        for (uint j = 0u; j < TN / 4; ++j) acc[r][j] = vec4(0.0);

    for (uint k0 = 0u; k0 < K; k0 += BK) {
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
            vec4 a[TM / 4], b[TN / 4];
            for (uint i = 0u; i < TM / 4; ++i) a[i] = As[k][i * TY + ty];
            for (uint j = 0u; j < TN / 4; ++j) b[j] = Bs[k][j * TX + tx];
            for (uint i = 0u; i < TM / 4; ++i)
                for (uint j = 0u; j < TN / 4; ++j) {
                    acc[4u * i     ][j] += a[i].x * b[j];
                    acc[4u * i + 1u][j] += a[i].y * b[j];
                    acc[4u * i + 2u][j] += a[i].z * b[j];
                    acc[4u * i + 3u][j] += a[i].w * b[j];
                }
        }
        barrier();
    }

    for (uint r = 0u; r < TM; ++r) {
        uint m = bm + 4u * ((r / 4u) * TY + ty) + r % 4u;
        if (m >= M) continue;
        for (uint j = 0u; j < TN / 4; ++j) {
            uint n = bn + 4u * (j * TX + tx);
            if (n      < N) C[m * N + n]      = acc[r][j].x;
            if (n + 1u < N) C[m * N + n + 1u] = acc[r][j].y;
            if (n + 2u < N) C[m * N + n + 2u] = acc[r][j].z;
            if (n + 3u < N) C[m * N + n + 3u] = acc[r][j].w;
        }
    }
}
