#version 430
// matmul_5_pipelined.comp: C = A·B, matmul_4_bigtile with double-buffered shared tiles and vec4 global loads
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     C = A @ B
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
//           B and C are also declared as vec4 arrays on the same bindings (BufB4, BufC4): one buffer
//           per binding serves both views
// Uniforms  uint M, N, K
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(M/BM), 1)
//           a work group computes a BM×BN block of C; THREADS = (BM/TM)*(BN/TN), each thread TM×TN outputs
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % TM == 0;  BN % TN == 0
// Changed   vs matmul_4_bigtile: software pipelining. Two copies of each shared tile: while the threads
//           multiply out tile t from one copy, the global loads for tile t+1 are already in flight
//           into registers and go to the other copy afterwards, so one barrier per K step instead of
//           two and the load latency hides behind 8·BK·8 multiply-adds. When N % 4 == 0 (a uniform
//           branch), B is read and C written as vec4 (16-byte loads and stores); other N take the
//           guarded scalar path, so every shape works.
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
layout(std430, binding = 1) readonly buffer BufB4 { vec4 B4[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };
layout(std430, binding = 2) writeonly buffer BufC4 { vec4 C4[]; };

uniform uint M;
uniform uint N;
uniform uint K;

const uint TX = BN / TN;                                   // threads along n
const uint TY = BM / TM;                                   // threads along m
const uint A_QUADS = (BM / 4) * BK;                        // vec4s in one A tile
const uint B_QUADS = BK * (BN / 4);                        // vec4s in one B tile
const uint A_PER_THREAD = (A_QUADS + THREADS - 1) / THREADS;
const uint B_PER_THREAD = (B_QUADS + THREADS - 1) / THREADS;

shared vec4 As[2][BK][BM / 4 + PAD];   // two copies of the transposed A tile
shared vec4 Bs[2][BK][BN / 4];         // two copies of the B tile

vec4 a_next[A_PER_THREAD];             // the next tiles, on their way from global memory
vec4 b_next[B_PER_THREAD];

void load_tiles(uint bm, uint bn, uint k0, uint t, bool vec_b) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint k = q % BK, g = q / BK;
        uint m = bm + 4u * g, kk = k0 + k;
        vec4 v = vec4(0.0);
        if (q < A_QUADS && kk < K) {
            if (m      < M) v.x = A[(m     ) * K + kk];
            if (m + 1u < M) v.y = A[(m + 1u) * K + kk];
            if (m + 2u < M) v.z = A[(m + 2u) * K + kk];
            if (m + 3u < M) v.w = A[(m + 3u) * K + kk];
        }
        a_next[p] = v;
    }
    for (uint p = 0u; p < B_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint c = q % (BN / 4), k = q / (BN / 4);
        uint n = bn + 4u * c, kk = k0 + k;
        vec4 v = vec4(0.0);
        if (q < B_QUADS && kk < K && n < N) {
            uint at = kk * N + n;
            if (vec_b) {
                v = B4[at / 4u];
            } else {
                v.x = B[at];
                if (n + 1u < N) v.y = B[at + 1u];
                if (n + 2u < N) v.z = B[at + 2u];
                if (n + 3u < N) v.w = B[at + 3u];
            }
        }
        b_next[p] = v;
    }
}

void store_tiles(uint buf, uint t) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < A_QUADS) As[buf][q % BK][q / BK] = a_next[p];
    }
    for (uint p = 0u; p < B_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < B_QUADS) Bs[buf][q / (BN / 4)][q % (BN / 4)] = b_next[p];
    }
}

void main() {
    uint t = gl_LocalInvocationIndex;
    uint tx = t % TX;
    uint ty = t / TX;
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;
    bool vec4_n = (N & 3u) == 0u;      // rows of B and C start on 16-byte boundaries

    vec4 acc[TM][TN / 4];
    for (uint r = 0u; r < TM; ++r)
        for (uint j = 0u; j < TN / 4; ++j) acc[r][j] = vec4(0.0);

    uint tiles = (K + BK - 1u) / BK;
    if (tiles > 0u) {
        load_tiles(bm, bn, 0u, t, vec4_n);
        store_tiles(0u, t);
    }
    memoryBarrierShared();
    barrier();
    for (uint tile = 0u; tile < tiles; ++tile) {
        uint cur = tile & 1u;
        bool more = tile + 1u < tiles;
        if (more) load_tiles(bm, bn, (tile + 1u) * BK, t, vec4_n);    // in flight during the math
        for (uint k = 0u; k < BK; ++k) {
            vec4 a[TM / 4], b[TN / 4];
            for (uint i = 0u; i < TM / 4; ++i) a[i] = As[cur][k][i * TY + ty];
            for (uint j = 0u; j < TN / 4; ++j) b[j] = Bs[cur][k][j * TX + tx];
            for (uint i = 0u; i < TM / 4; ++i)
                for (uint j = 0u; j < TN / 4; ++j) {
                    acc[4u * i     ][j] += a[i].x * b[j];
                    acc[4u * i + 1u][j] += a[i].y * b[j];
                    acc[4u * i + 2u][j] += a[i].z * b[j];
                    acc[4u * i + 3u][j] += a[i].w * b[j];
                }
        }
        if (more) store_tiles(cur ^ 1u, t);    // the other copy: nobody reads it this step
        memoryBarrierShared();
        barrier();
    }

    for (uint r = 0u; r < TM; ++r) {
        uint m = bm + 4u * ((r / 4u) * TY + ty) + r % 4u;
        if (m >= M) continue;
        for (uint j = 0u; j < TN / 4; ++j) {
            uint n = bn + 4u * (j * TX + tx);
            if (n >= N) continue;
            uint at = m * N + n;
            if (vec4_n) {
                C4[at / 4u] = acc[r][j];
            } else {
                C[at] = acc[r][j].x;
                if (n + 1u < N) C[at + 1u] = acc[r][j].y;
                if (n + 2u < N) C[at + 2u] = acc[r][j].z;
                if (n + 3u < N) C[at + 3u] = acc[r][j].w;
            }
        }
    }
}
