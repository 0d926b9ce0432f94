#version 430
// matmul_6_subgroup.comp: C = A·B, matmul_5_pipelined with a compact sub-tile per subgroup (warp tiling)
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
//           a work group computes a BM×BN block of C; THREADS = (BM/TM)*(BN/TN), each thread TM×TN
//           outputs; every LM*LN consecutive invocations (32: one subgroup on NVIDIA) own a
//           (LM*TM)×(LN*TN) sub-tile of the block, laid out LM rows by LN columns of invocations
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % (LM*TM) == 0;
//           BN % (LN*TN) == 0;  LM*LN == 32 and BK % LM == 0 if USE_SUBGROUP
// Changed   vs matmul_5_pipelined: work split by subgroup (warp tiling). In matmul_5_pipelined the 32
//           invocations of a subgroup are 2 rows of 16 spread over the whole 128×128 block, so one vec4
//           load of the B tile touches 16 different vec4 (256 bytes: two passes through the 32 banks).
//           Here they own a compact 32×64 sub-tile, 4 rows of 8: a load of B touches 8 vec4 (128 bytes,
//           one pass), a load of A 4 (broadcast to the 8 invocations of a row); their outputs stay
//           vec4 chunks, so loads, stores and the double-buffered tiles are matmul_5_pipelined's.
//           LM = BM/TM, LN = BN/TN gives back matmul_5_pipelined's layout exactly. Smaller blocks
//           (BM, BN 64) give more work groups than a 132-SM GPU has SMs at 1024³.
//           USE_SUBGROUP 1 tries a subgroup operation where the driver has GL_KHR_shader_subgroup_shuffle:
//           each invocation of a sub-tile column reads the B fragment for BK/LM of the BK rows of k
//           only (LM times fewer shared-memory loads) and subgroupShuffle hands each row of k to the
//           other LM-1 invocations of the column. A shuffle moves 4 bytes per invocation per
//           instruction where a shared vec4 load moves 16, so measure before trusting it.
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py): USE_SUBGROUP 0 and 2 everywhere,
//           1 where the driver has subgroup shuffles (else it is 0); LOADS 0 is checked to touch no memory
//           but C and to be wrong
// Tunables  TM, TN multiples of 4; THREADS = (BM/TM)*(BN/TN); BM a multiple of LM*TM and BN of LN*TN
//           (checked below). Shared memory 2*BK*(BM+4*PAD+BN)*4 bytes (48 KiB on NVIDIA, 32 KiB on
//           llvmpipe). USE_SUBGROUP 0: B from shared memory; 1: B by subgroupShuffle where the driver
//           has GL_KHR_shader_subgroup_shuffle (needs LM*LN = 32, BK % LM = 0, subgroups of 32 or 64
//           consecutive invocations, as on NVIDIA and AMD), else 0; 2: 1's indexing with each shuffle
//           emulated through shared memory (slow; for tests on drivers without subgroups)
//           LOADS 1: the matmul. LOADS 0 is an experiment, not a matmul: the tiles are filled with numbers
//           made from the tile's index instead of being loaded from A and B (C is wrong), so that timing it
//           against LOADS 1 shows what the global loads cost that the double buffering does not hide
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
#ifndef USE_SUBGROUP
#define USE_SUBGROUP 0
#endif
#ifndef LOADS
#define LOADS 1
#endif

#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable

#if THREADS != (BM / TM) * (BN / TN)
#error "THREADS must equal (BM/TM)*(BN/TN)"
#endif
#if (TM % 4) != 0 || (TN % 4) != 0
#error "TM and TN must be multiples of 4"
#endif
#if (BM % (LM * TM)) != 0 || (BN % (LN * TN)) != 0
#error "BM must be a multiple of LM*TM and BN of LN*TN"
#endif

#if USE_SUBGROUP == 1
#ifdef GL_KHR_shader_subgroup_shuffle
#define B_BY_SHUFFLE 1                  // the subgroup path
#endif                                  // #else: no shuffles here, B comes from shared memory
#elif USE_SUBGROUP == 2
#define B_BY_SHUFFLE 1                  // the subgroup path, its shuffles emulated in share_b()
#endif
#if defined(B_BY_SHUFFLE) && (LM * LN != 32 || (BK % LM) != 0)
#error "the shuffle path needs LM*LN == 32 (a sub-tile per subgroup) and BK a multiple of LM"
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

#ifdef B_BY_SHUFFLE
#if USE_SUBGROUP == 2
shared vec4 lanes[TN / 4][THREADS];
void share_b(vec4 mine[TN / 4], uint lane, uint from, out vec4 got[TN / 4]) {
    for (uint j = 0u; j < TN / 4; ++j) lanes[j][gl_LocalInvocationIndex] = mine[j];
    memoryBarrierShared();
    barrier();                                   // subgroupShuffle emulated: the vec4s of invocation
    for (uint j = 0u; j < TN / 4; ++j)           // `from` of my sub-tile
        got[j] = lanes[j][gl_LocalInvocationIndex - lane + from];
    barrier();                                   // everyone has read before the next k writes
}
#else
void share_b(vec4 mine[TN / 4], uint lane, uint from, out vec4 got[TN / 4]) {
    for (uint j = 0u; j < TN / 4; ++j)           // the vec4s of invocation `from` of my sub-tile
        got[j] = subgroupShuffle(mine[j], gl_SubgroupInvocationID - lane + from);
}
#endif
#endif

void load_tiles(uint bm, uint bn, uint k0, uint t, bool vec_b) {
#if LOADS == 0
    for (uint p = 0u; p < A_PER_THREAD; ++p) a_next[p] = vec4(float(k0 + p + t) * 1e-9);   // no memory read
    for (uint p = 0u; p < B_PER_THREAD; ++p) b_next[p] = vec4(float(k0 + p) * 1e-9);
    return;
#endif
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
    uint sub = t / (LM * LN), lane = t % (LM * LN);   // which sub-tile, which invocation in it
    uint lr = lane / LN, lc = lane % LN;              // its row and column in the sub-tile
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;
    bool vec4_n = (N & 3u) == 0u;      // rows of B and C start on 16-byte boundaries

    // acc[4i+ii][j]: row bm + 4*a_col(i) + ii, columns bn + 4*b_col(j) .. +3, where the vec4 columns of
    // the tiles are a_col(i) = a_at + i*LM, b_col(j) = b_at + j*LN: the LN invocations of a sub-tile row
    // read the same A vec4, the LM of a column the same B vec4, neighbours neighbouring vec4.
    uint a_at = (sub / TILES_N) * (WM / 4u) + lr;
    uint b_at = (sub % TILES_N) * (WN / 4u) + lc;

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
#ifdef B_BY_SHUFFLE
        vec4 b_mine[BK / LM][TN / 4];  // my column's B fragment for the rows k = s*LM + lr of the tile
        for (uint s = 0u; s < BK / LM; ++s)
            for (uint j = 0u; j < TN / 4; ++j) b_mine[s][j] = Bs[cur][s * LM + lr][b_at + j * LN];
#endif
        for (uint k = 0u; k < BK; ++k) {
            vec4 a[TM / 4], b[TN / 4];
            for (uint i = 0u; i < TM / 4; ++i) a[i] = As[cur][k][a_at + i * LM];
#ifdef B_BY_SHUFFLE
            share_b(b_mine[k / LM], lane, (k % LM) * LN + lc, b);
#else
            for (uint j = 0u; j < TN / 4; ++j) b[j] = Bs[cur][k][b_at + j * LN];
#endif
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
        uint m = bm + 4u * (a_at + (r / 4u) * LM) + r % 4u;
        if (m >= M) continue;
        for (uint j = 0u; j < TN / 4; ++j) {
            uint n = bn + 4u * (b_at + j * LN);
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
