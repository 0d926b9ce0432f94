#version 430
// matmul_7_vec4k.comp: C = A·B, matmul_6_subgroup with A read as vec4 along K, deeper tiles, swizzled blocks
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N ≥ 1; K ≥ 0 (K = 0 gives C = 0; A and B are then empty and ModernGL makes no empty
//           buffer: bind any one-float buffer there)
// NumPy     C = A @ B
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
//           A, B and C are also declared as vec4 arrays on the same bindings (BufA4, BufB4, BufC4): one
//           buffer per binding serves both views
// Uniforms  uint M, N, K
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(M/BM), 1)
//           a work group computes a BM×BN block of C (which one: GROUP_M below); THREADS = (BM/TM)*(BN/TN),
//           each thread TM×TN outputs; every LM*LN consecutive invocations (32: one subgroup on NVIDIA)
//           own an (LM*TM)×(LN*TN) sub-tile of the block, laid out LM rows by LN columns of invocations
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  THREADS <= 1024;
//           BM % (LM*TM) == 0;  BN % (LN*TN) == 0;  BK % 4 == 0;  BK >= 4;  COPIES == 1 or COPIES == 2;
//           GROUP_M >= 1;  COPIES*BK*(BM + 4*PAD + BN)*4 <= 49152
// Changed   vs matmul_6_subgroup: three switches, each a #define so a sweep can choose.
//           VEC_A 1: when K % 4 == 0 (a uniform branch) A is read as vec4 along K, one 16-byte load for
//           four values where matmul_6_subgroup made four scalar loads, and transposed on its way into
//           shared memory (the tile is kept k-major, as before, so the math reads vec4s of 4 rows).
//           Other K take guarded scalar loads, so every shape works.
//           GROUP_M: the GPU starts work groups in the order x fastest; block (x, y) of that order is
//           remapped so that consecutive work groups walk down a strip of GROUP_M block rows before
//           moving one block right. Groups that run at the same time then share GROUP_M row strips of A
//           and few column strips of B, which stay in L2. GROUP_M 1 is matmul_6_subgroup's order.
//           COPIES 1: one shared copy of each tile instead of two (a second barrier per K step), half
//           the shared memory, so BK 32 fits at 128×128 (a quarter of BK 8's barriers and loop steps).
//           Kept from matmul_6_subgroup: an invocation's outputs are 4×4 chunks spaced LM vec4s apart
//           down the block and LN vec4s across it, so the LM*LN invocations of a subgroup read LM and
//           LN neighbouring vec4s of the tiles (no bank conflicts). Its shuffle path is left out: a
//           shuffle moves 4 bytes per invocation where a shared vec4 load moves 16.
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul_vec4k.py): VEC_A 0 and 1 with K % 4 == 0
//           and not, GROUP_M 1 and more (a strip cut short), BK 8, 16, 32, COPIES 1 and 2, N % 4 == 0
//           and not, M = 1, K < BK
// Tunables  TM, TN multiples of 4; THREADS = (BM/TM)*(BN/TN) <= 1024; BM a multiple of LM*TM and BN of
//           LN*TN; BK a multiple of 4; COPIES 1 or 2; GROUP_M >= 1 (checked below). Shared memory
//           COPIES*BK*(BM+4*PAD+BN)*4 bytes <= 49152 (48 KiB, NVIDIA's cap; checked below; llvmpipe
//           has 32 KiB). PAD pads each k row of the A tile by PAD vec4s (stores to the tile).
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
#ifndef VEC_A
#define VEC_A 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef COPIES
#define COPIES 2
#endif

#if THREADS != (BM / TM) * (BN / TN) || THREADS > 1024
#error "THREADS must equal (BM/TM)*(BN/TN) and be at most 1024"
#endif
#if (TM % 4) != 0 || (TN % 4) != 0
#error "TM and TN must be multiples of 4"
#endif
#if (BM % (LM * TM)) != 0 || (BN % (LN * TN)) != 0
#error "BM must be a multiple of LM*TM and BN of LN*TN"
#endif
#if (BK % 4) != 0 || BK < 4
#error "BK must be a multiple of 4 (A is read in vec4s along K)"
#endif
#if COPIES != 1 && COPIES != 2
#error "COPIES must be 1 or 2 (shared copies of each tile)"
#endif
#if GROUP_M < 1
#error "GROUP_M must be at least 1 (1: no swizzle)"
#endif
#if COPIES * BK * (BM + 4 * PAD + BN) * 4 > 49152
#error "shared memory COPIES*BK*(BM+4*PAD+BN)*4 bytes is over 48 KiB: lower BK, the block or COPIES"
#endif

#pragma optionNV(unroll all)

layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 0) readonly buffer BufA4 { vec4 A4[]; };
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
const uint KQ = BK / 4;                                    // vec4s along k in one row of the A tile
const uint GROUPS_M = BM / 4;                              // vec4s of 4 rows down one k row of As
const uint A_QUADS = BM * KQ;                              // vec4s (along k) in one A tile
const uint B_QUADS = BK * (BN / 4);                        // vec4s (along n) in one B tile
const uint A_PER_THREAD = (A_QUADS + THREADS - 1) / THREADS;
const uint B_PER_THREAD = (B_QUADS + THREADS - 1) / THREADS;

shared vec4 As[COPIES][BK][BM / 4 + PAD];   // the A tile transposed: As[k][g] = rows 4g..4g+3 at column k
shared vec4 Bs[COPIES][BK][BN / 4];         // the B tile as it is: Bs[k][c] = columns 4c..4c+3 at row k

vec4 a_next[A_PER_THREAD];   // the next tiles, on their way from global memory: A along k, B along n
vec4 b_next[B_PER_THREAD];

// A quad q of the tile (4 values along k of one row): k column 4*(q % KQ), row 4*g + c of the tile with
// r = q / KQ, g = r % GROUPS_M, c = r / GROUPS_M. KQ neighbouring invocations read one row's 16*KQ
// contiguous bytes; c, the vec4 component the row lands in, is the same for a whole subgroup when
// 32/KQ divides BM/4 (the shapes here), so the store below does not diverge.
void load_tiles(uint bm, uint bn, uint k0, uint t, bool vec_a, bool vec_b) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint r = q / KQ;
        uint m = bm + 4u * (r % GROUPS_M) + r / GROUPS_M, kk = k0 + 4u * (q % KQ);
        vec4 v = vec4(0.0);
        if (q < A_QUADS && m < M && kk < K) {
            uint at = m * K + kk;
            if (vec_a) {
                v = A4[at / 4u];               // K % 4 == 0: at is a multiple of 4, kk + 3 < K
            } else {
                v.x = A[at];
                if (kk + 1u < K) v.y = A[at + 1u];
                if (kk + 2u < K) v.z = A[at + 2u];
                if (kk + 3u < K) v.w = A[at + 3u];
            }
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
        if (q < A_QUADS) {
            uint r = q / KQ, k = 4u * (q % KQ);
            uint g = r % GROUPS_M, c = r / GROUPS_M;
            vec4 v = a_next[p];                // A[row][k..k+3] goes to component c of As[k..k+3][g]
            // a constant component in each branch: one 4-byte store each, never a read-modify-write
            // of the vec4 that the invocations holding the other three rows write at the same time
            if (c == 0u) {
                As[buf][k][g].x = v.x; As[buf][k + 1u][g].x = v.y; As[buf][k + 2u][g].x = v.z; As[buf][k + 3u][g].x = v.w;
            } else if (c == 1u) {
                As[buf][k][g].y = v.x; As[buf][k + 1u][g].y = v.y; As[buf][k + 2u][g].y = v.z; As[buf][k + 3u][g].y = v.w;
            } else if (c == 2u) {
                As[buf][k][g].z = v.x; As[buf][k + 1u][g].z = v.y; As[buf][k + 2u][g].z = v.z; As[buf][k + 3u][g].z = v.w;
            } else {
                As[buf][k][g].w = v.x; As[buf][k + 1u][g].w = v.y; As[buf][k + 2u][g].w = v.z; As[buf][k + 3u][g].w = v.w;
            }
        }
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

    // Which block: work group `id` in start order walks down its strip of GROUP_M block rows, then right.
    uint bx = gl_WorkGroupID.x, by = gl_WorkGroupID.y;
#if GROUP_M > 1
    uint nx = gl_NumWorkGroups.x, ny = gl_NumWorkGroups.y;
    uint id = by * nx + bx;
    uint strip = id / (uint(GROUP_M) * nx);
    uint first = strip * uint(GROUP_M);
    uint rows = min(ny - first, uint(GROUP_M));       // the last strip may have fewer block rows
    uint at_strip = id - first * nx;                  // place in the strip: rows * nx blocks
    by = first + at_strip % rows;
    bx = at_strip / rows;
#endif
    uint bm = by * BM;
    uint bn = bx * BN;
    bool vec_a = VEC_A != 0 && (K & 3u) == 0u;        // rows of A start on 16-byte boundaries
    bool vec_n = (N & 3u) == 0u;                      // rows of B and C start on 16-byte boundaries

    // acc[4i+ii][j]: row bm + 4*(a_at + i*LM) + ii, columns bn + 4*(b_at + j*LN) .. +3 (matmul_6_subgroup's)
    uint a_at = (sub / TILES_N) * (WM / 4u) + lr;
    uint b_at = (sub % TILES_N) * (WN / 4u) + lc;

    vec4 acc[TM][TN / 4];
    for (uint r = 0u; r < TM; ++r)
        for (uint j = 0u; j < TN / 4; ++j) acc[r][j] = vec4(0.0);

    uint tiles = (K + BK - 1u) / BK;
    if (tiles > 0u) {
        load_tiles(bm, bn, 0u, t, vec_a, vec_n);
        store_tiles(0u, t);
    }
    memoryBarrierShared();
    barrier();
    for (uint tile = 0u; tile < tiles; ++tile) {
        uint cur = COPIES == 2 ? tile & 1u : 0u;
        bool more = tile + 1u < tiles;
        if (more) load_tiles(bm, bn, (tile + 1u) * BK, t, vec_a, vec_n);    // in flight during the math
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
#if COPIES == 2
        if (more) store_tiles(cur ^ 1u, t);    // the other copy: nobody reads it this step
#else
        barrier();                             // one copy: everyone has read it before it is overwritten
        if (more) store_tiles(0u, t);
#endif
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
            if (vec_n) {
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
