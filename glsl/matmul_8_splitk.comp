#version 430
// matmul_8_splitk.comp: C = A·B, matmul_6_subgroup with the sum over k cut into pieces, one work group each
//   (split-K): when C has fewer tiles than the GPU has places for work groups, each tile's sum over k is cut
//   into ceil(K/KS) pieces; group z writes its partial tile to piece z of P, and a second dispatch
//   (splitk_sum_1_vec4.comp) adds the pieces in order into C. With one piece (KS >= K), P is C itself
//
// Shapes    A[M,K]  B[K,N]  P[max(1, ceil(K/KS)),M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N, KS ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     P[z] = A[:, z*KS:(z+1)*KS] @ B[z*KS:(z+1)*KS, :]   (one piece: P[0] = A @ B = C)
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 P float[max(1, ceil(K/KS))*M*N] (writeonly)
//           piece z of P at P[z*M*N + m*N + n]; bind C here when there is one piece. B and P are also
//           declared as vec4 arrays on the same bindings (BufB4, BufP4): one buffer per binding serves both
// Uniforms  uint M, N, K, KS (the k each work group sums over; a multiple of BK wastes no loads)
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(M/BM), max(1, ceil(K/KS)))
//           group (x, y, z) sums k in z*KS .. min(K, z*KS + KS) - 1 for the BM×BN block of C at rows
//           y*BM, columns x*BN; inside the group, matmul_6_subgroup's layout: every LM*LN consecutive
//           invocations (32: one subgroup on NVIDIA) own a (LM*TM)×(LN*TN) sub-tile, each TM×TN outputs
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % (LM*TM) == 0;
//           BN % (LN*TN) == 0;  KS >= 1;  INTERIOR == 0 or (THREADS % BK == 0 and THREADS % (BN // 4) == 0)
// Changed   vs matmul_6_subgroup: the third dispatch dimension cuts the sum over k. At 1024³ the 128×128
//           tiles of C are 64, fewer than a 132-SM GPU's SMs, so half of the GPU idles whatever the kernel
//           does; four pieces a tile make 256 work groups, two for each SM, each with a quarter of the loop.
//           The price: the pieces' trip through memory (written here, read back by the sum) and one more
//           dispatch. Pick KS so that the tiles times the pieces fill the GPU once, no more
// Checked   relative error < 1e-5 against NumPy after the sum, P and C poisoned with NaN first, sizes that
//           fit no tile, pieces that divide neither K nor BK, INTERIOR 1 with interior and edge blocks in
//           one dispatch (tests/test_matmul_splitk.py)
// Tunables  matmul_6_subgroup's: TM, TN multiples of 4; THREADS = (BM/TM)*(BN/TN); BM a multiple of LM*TM
//           and BN of LN*TN (checked below). Shared memory 2*BK*(BM+4*PAD+BN)*4 bytes (48 KiB on NVIDIA,
//           32 KiB on llvmpipe). INTERIOR 1: matmul_9_interior's tile loop, free of bounds checks, for a
//           group whose block lies wholly inside C and whose piece is whole tiles (K and KS multiples
//           of BK, N of 4); then THREADS must be a multiple of BK and of BN/4. INTERIOR 0 (default):
//           every group takes the checked loop, as in matmul_6_subgroup
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
#ifndef LM
#define LM 4
#endif
#ifndef LN
#define LN 8
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef PAD
#define PAD 1
#endif
#ifndef INTERIOR
#define INTERIOR 0
#endif

#if THREADS != (BM / TM) * (BN / TN)
#error "THREADS must equal (BM/TM)*(BN/TN)"
#endif
#if (TM % 4) != 0 || (TN % 4) != 0
#error "TM and TN must be multiples of 4"
#endif
#if (BM % (LM * TM)) != 0 || (BN % (LN * TN)) != 0
#error "BM must be a multiple of LM*TM and BN of LN*TN"
#endif

#if INTERIOR && ((THREADS % BK) != 0 || (THREADS % (BN / 4)) != 0)
#error "INTERIOR 1 needs THREADS a multiple of BK and of BN/4"
#endif

#pragma optionNV(unroll all)

layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 1) readonly buffer BufB4 { vec4 B4[]; };
layout(std430, binding = 2) writeonly buffer BufP { float P[]; };
layout(std430, binding = 2) writeonly buffer BufP4 { vec4 P4[]; };

uniform uint M;
uniform uint N;
uniform uint K;
uniform uint KS;

const uint WM = LM * TM;                                   // a sub-tile: WM rows ...
const uint WN = LN * TN;                                   // ... by WN columns of the block
const uint TILES_N = BN / WN;                              // sub-tiles across the block
const uint A_QUADS = (BM / 4) * BK;                        // vec4s in one A tile
const uint B_QUADS = BK * (BN / 4);                        // vec4s in one B tile
const uint A_PER_THREAD = (A_QUADS + THREADS - 1) / THREADS;
const uint B_PER_THREAD = (B_QUADS + THREADS - 1) / THREADS;

shared vec4 As[2][BK][BM / 4 + PAD];   // two copies of the transposed A tile: As[k][g] = rows 4g..4g+3
shared vec4 Bs[2][BK][BN / 4];         // two copies of the B tile

vec4 a_next[A_PER_THREAD];             // the next tiles, on their way from global memory
vec4 b_next[B_PER_THREAD];
vec4 acc[TM][TN / 4];                  // this thread's outputs (see main)
uint a_at, b_at;                       // its A and B vec4 columns in the tiles
uint a_first, b_first;                 // INTERIOR: its first element of A and of B (k = 0)

// The tiles for k0 .. k0+BK-1, zero at and past k_end (the end of this group's piece) and past M and N.
void load_tiles(uint bm, uint bn, uint k0, uint k_end, uint t, bool vec_b) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint k = q % BK, g = q / BK;
        uint m = bm + 4u * g, kk = k0 + k;
        vec4 v = vec4(0.0);
        if (q < A_QUADS && kk < k_end) {
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
        if (q < B_QUADS && kk < k_end && n < N) {
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

// INTERIOR: the same elements as load_tiles for a block wholly inside, with nothing to test
void load_interior(uint k0, uint t) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        if ((A_QUADS % THREADS) != 0u && t + p * THREADS >= A_QUADS) break;   // (a constant test)
        uint at = a_first + p * (THREADS / BK) * 4u * K + k0;    // load p: THREADS/BK vec4 rows further
        a_next[p] = vec4(A[at], A[at + K], A[at + 2u * K], A[at + 3u * K]);
    }
    for (uint p = 0u; p < B_PER_THREAD; ++p) {
        if ((B_QUADS % THREADS) != 0u && t + p * THREADS >= B_QUADS) break;
        b_next[p] = B4[(b_first + p * (THREADS / (BN / 4u)) * N + k0 * N) / 4u];
    }
}

void multiply_tile(uint cur) {         // acc += the BK rows of k in copy `cur` of the tiles
    for (uint k = 0u; k < BK; ++k) {
        vec4 a[TM / 4], b[TN / 4];
        for (uint i = 0u; i < TM / 4; ++i) a[i] = As[cur][k][a_at + i * LM];
        for (uint j = 0u; j < TN / 4; ++j) b[j] = Bs[cur][k][b_at + j * LN];
        for (uint i = 0u; i < TM / 4; ++i)
            for (uint j = 0u; j < TN / 4; ++j) {
                acc[4u * i     ][j] += a[i].x * b[j];
                acc[4u * i + 1u][j] += a[i].y * b[j];
                acc[4u * i + 2u][j] += a[i].z * b[j];
                acc[4u * i + 3u][j] += a[i].w * b[j];
            }
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

// Four outputs at element `at` = z*M*N + m*N + n of P (columns n .. n+3, those below N). `vec_n`: N % 4 == 0,
// so every row of every piece starts on a 16-byte boundary and `at` is a whole vec4.
void put(uint at, uint n, bool vec_n, vec4 v) {
    if (vec_n) { P4[at / 4u] = v; return; }
    P[at] = v.x;
    if (n + 1u < N) P[at + 1u] = v.y;
    if (n + 2u < N) P[at + 2u] = v.z;
    if (n + 3u < N) P[at + 3u] = v.w;
}

void main() {
    uint t = gl_LocalInvocationIndex;
    uint sub = t / (LM * LN), lane = t % (LM * LN);   // which sub-tile, which invocation in it
    uint lr = lane / LN, lc = lane % LN;              // its row and column in the sub-tile
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;
    uint z = gl_WorkGroupID.z;
    uint k_begin = z * KS, k_end = min(K, k_begin + KS);   // this group's piece of the sum over k
    bool vec4_n = (N & 3u) == 0u;      // rows of B and C start on 16-byte boundaries

    // acc[4i+ii][j]: row bm + 4*a_col(i) + ii, columns bn + 4*b_col(j) .. +3 (matmul_6_subgroup's layout)
    a_at = (sub / TILES_N) * (WM / 4u) + lr;
    b_at = (sub % TILES_N) * (WN / 4u) + lc;
    for (uint r = 0u; r < TM; ++r)
        for (uint j = 0u; j < TN / 4; ++j) acc[r][j] = vec4(0.0);

    bool interior = INTERIOR != 0 && bm + BM <= M && bn + BN <= N && vec4_n && K % BK == 0u && KS % BK == 0u
                    && k_end > k_begin;   // then the piece is whole tiles: k_end - k_begin a multiple of BK
    if (interior) {                      // the same for the whole work group (matmul_9_interior's loop)
        a_first = (bm + 4u * (t / BK)) * K + t % BK;
        b_first = (t / (BN / 4u)) * N + bn + 4u * (t % (BN / 4u));
        uint tiles = (k_end - k_begin) / BK, last = tiles - 1u;
        load_interior(k_begin, t);
        store_tiles(0u, t);
        barrier();
        for (uint tile = 0u; tile < tiles; ++tile) {
            uint cur = tile & 1u;
            load_interior(k_begin + min(tile + 1u, last) * BK, t);   // at the last tile, that tile again
            multiply_tile(cur);
            store_tiles(cur ^ 1u, t);          // the other copy: nobody reads it this step
            barrier();
        }
    } else {
        uint tiles = k_end > k_begin ? (k_end - k_begin + BK - 1u) / BK : 0u;
        if (tiles > 0u) {
            load_tiles(bm, bn, k_begin, k_end, t, vec4_n);
            store_tiles(0u, t);
        }
        memoryBarrierShared();
        barrier();
        for (uint tile = 0u; tile < tiles; ++tile) {
            uint cur = tile & 1u;
            bool more = tile + 1u < tiles;
            if (more) load_tiles(bm, bn, k_begin + (tile + 1u) * BK, k_end, t, vec4_n);   // in flight during the math
            multiply_tile(cur);
            if (more) store_tiles(cur ^ 1u, t);    // the other copy: nobody reads it this step
            memoryBarrierShared();
            barrier();
        }
    }

    uint piece = z * M * N;           // where this group's piece starts in P
    for (uint r = 0u; r < TM; ++r) {
        uint m = bm + 4u * (a_at + (r / 4u) * LM) + r % 4u;
        if (m >= M) continue;
        for (uint j = 0u; j < TN / 4; ++j) {
            uint n = bn + 4u * (b_at + j * LN);
            if (n < N) put(piece + m * N + n, n, vec4_n, acc[r][j]);
        }
    }
}
