#version 430
// matmul_10_prefetch.comp: C = A·B, matmul_9_interior with each thread's operands of the next k read
//   from shared memory before the multiply-adds of this k
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
//           (LM*TM)×(LN*TN) sub-tile of the block, as in matmul_6_subgroup
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % (LM*TM) == 0;
//           BN % (LN*TN) == 0;  THREADS % BK == 0;  THREADS % (BN // 4) == 0
// Changed   vs matmul_9_interior: in the loop over the BK rows of a tile, a thread reads its TM/4 + TN/4
//           vec4s of row k + 1 from shared memory (into a second set of registers) before the TM*TN
//           multiply-adds of row k, so those reads are on their way while it multiplies; matmul_9_interior reads
//           row k's operands right before the multiply-adds that need them. The price is the second set:
//           TM + TN floats more a thread. The same multiply-adds in the same order, so the same bits as
//           matmul_9_interior; both loops (interior and edge blocks) run the new tile multiply
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py, K = 0 included;
//           tests/test_matmul_interior.py: interior and edge blocks in one dispatch, K or N that send
//           every block to the checked loop, one tile, K below BK, other tiles), and the same bits as
//           matmul_9_interior (tests/test_matmul_interior.py)
// Tunables  TM, TN multiples of 4; THREADS = (BM/TM)*(BN/TN), a multiple of BK and of BN/4 (the interior
//           loads step by whole rows); BM a multiple of LM*TM and BN of LN*TN (checked below). Shared
//           memory 2*BK*(BM+4*PAD+BN)*4 bytes (16.25 KiB at the defaults: within llvmpipe's 32 KiB and
//           NVIDIA's 48 KiB). Default tile: 16×8 outputs a thread, 128 threads
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
#define TM 16
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
#define THREADS 128
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
#if (BM % (LM * TM)) != 0 || (BN % (LN * TN)) != 0
#error "BM must be a multiple of LM*TM and BN of LN*TN"
#endif
#if (THREADS % BK) != 0 || (THREADS % (BN / 4)) != 0
#error "THREADS must be a multiple of BK and of BN/4"
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
vec4 acc[TM][TN / 4];                  // this thread's outputs (see main)
uint t, a_at, b_at;                    // this thread's index, its A and B vec4 columns in the tiles
uint a_first, b_first;                 // interior blocks: this thread's first element of A and of B

void load_checked(uint bm, uint bn, uint k0, bool vec_b) {    // matmul_6_subgroup's loads, all tested
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

void load_interior(uint k0) {          // the same elements with nothing to test: every one is inside
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

void store_tiles(uint buf) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < A_QUADS) As[buf][q % BK][q / BK] = a_next[p];
    }
    for (uint p = 0u; p < B_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < B_QUADS) Bs[buf][q / (BN / 4)][q % (BN / 4)] = b_next[p];
    }
}

void multiply_tile(uint cur) {         // acc += the BK rows of k in copy `cur` of the tiles
    vec4 a[2][TM / 4], b[2][TN / 4];   // the fragments of row k, and of row k + 1 on their way
    for (uint i = 0u; i < TM / 4; ++i) a[0][i] = As[cur][0][a_at + i * LM];
    for (uint j = 0u; j < TN / 4; ++j) b[0][j] = Bs[cur][0][b_at + j * LN];
    for (uint k = 0u; k < BK; ++k) {
        uint p = k & 1u;
        if (k + 1u < BK) {
            for (uint i = 0u; i < TM / 4; ++i) a[p ^ 1u][i] = As[cur][k + 1u][a_at + i * LM];
            for (uint j = 0u; j < TN / 4; ++j) b[p ^ 1u][j] = Bs[cur][k + 1u][b_at + j * LN];
        }
        for (uint i = 0u; i < TM / 4; ++i)
            for (uint j = 0u; j < TN / 4; ++j) {
                acc[4u * i     ][j] += a[p][i].x * b[p][j];
                acc[4u * i + 1u][j] += a[p][i].y * b[p][j];
                acc[4u * i + 2u][j] += a[p][i].z * b[p][j];
                acc[4u * i + 3u][j] += a[p][i].w * b[p][j];
            }
    }
}

void main() {
    t = gl_LocalInvocationIndex;
    uint sub = t / (LM * LN), lane = t % (LM * LN);   // which sub-tile, which invocation in it
    uint lr = lane / LN, lc = lane % LN;              // its row and column in the sub-tile
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;
    bool vec4_n = (N & 3u) == 0u;      // rows of B and C start on 16-byte boundaries

    // acc[4i+ii][j]: row bm + 4*a_col(i) + ii, columns bn + 4*b_col(j) .. +3, where the vec4 columns of
    // the tiles are a_col(i) = a_at + i*LM, b_col(j) = b_at + j*LN (as in matmul_6_subgroup)
    a_at = (sub / TILES_N) * (WM / 4u) + lr;
    b_at = (sub % TILES_N) * (WN / 4u) + lc;
    for (uint r = 0u; r < TM; ++r)
        for (uint j = 0u; j < TN / 4; ++j) acc[r][j] = vec4(0.0);

    bool interior = bm + BM <= M && bn + BN <= N && K >= BK && K % BK == 0u && vec4_n;
    if (interior) {                    // the same for the whole work group: it takes one loop or the other
        a_first = (bm + 4u * (t / BK)) * K + t % BK;                  // load_checked's element for k0 = 0
        b_first = (t / (BN / 4u)) * N + bn + 4u * (t % (BN / 4u));
        uint tiles = K / BK, last = tiles - 1u;
        load_interior(0u);
        store_tiles(0u);
        barrier();
        for (uint tile = 0u; tile < tiles; ++tile) {
            uint cur = tile & 1u;
            load_interior(min(tile + 1u, last) * BK);   // in flight during the math; at the last tile, that
            multiply_tile(cur);                          // tile again (inside A and B), never read
            store_tiles(cur ^ 1u);                       // the other copy: nobody reads it this step
            barrier();
        }
    } else {                           // an edge block: matmul_6_subgroup's loop, every load checked
        uint tiles = (K + BK - 1u) / BK;
        if (tiles > 0u) {
            load_checked(bm, bn, 0u, vec4_n);
            store_tiles(0u);
        }
        barrier();
        for (uint tile = 0u; tile < tiles; ++tile) {
            uint cur = tile & 1u;
            bool more = tile + 1u < tiles;
            if (more) load_checked(bm, bn, (tile + 1u) * BK, vec4_n);
            multiply_tile(cur);
            if (more) store_tiles(cur ^ 1u);
            barrier();
        }
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
