#version 430
// matmul_6_subgroup.comp: C = A·B, a sub-tile per subgroup of 32 invocations, A passed on by subgroup shuffles
//
// Shapes    A[M,K]  B[K,N]  C[M,N]   float32, row-major, std430 (flat float arrays); any M, N, K
// NumPy     C = A @ B
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 C float[M*N] (writeonly)
//           A, B and C are also declared as vec4 arrays on the same bindings (BufA4, BufB4, BufC4): one
//           buffer per binding serves both views
// Uniforms  uint M, N, K
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(M/BM), 1)
//           a work group computes a BM×BN block of C with THREADS/32 subgroups; each subgroup a
//           (LM*TM)×((32/LM)*TN) sub-tile, its 32 invocations in LM rows of 32/LM, each TM×TN outputs
// Changed   vs matmul_5_pipelined: work split by subgroup (warp tiling). Each run of 32 invocations (one
//           subgroup on NVIDIA) owns a compact (LM*TM)×((32/LM)*TN) = 32×64 sub-tile instead of rows
//           spread over the whole block, so one shared-memory vec4 load of a subgroup touches 4 (A) or 8
//           (B) distinct vec4, at most 128 bytes: one pass through the banks (matmul_5_pipelined's B loads: 16, two
//           passes). BK 16: half the barriers per multiply-add. A is read as vec4 along k when K % 4 == 0.
//           The subgroup path (GL_KHR_shader_subgroup_shuffle, USE_SUBGROUP 1) keeps A out of shared
//           memory: each invocation loads one row of the A tile into registers and the 32/LM invocations
//           of a sub-tile row pass its values to each other with subgroupShuffle, one float per call
//           (a shuffle moves 4 bytes per invocation, a shared vec4 load 16: which path is faster
//           depends on the GPU, so time USE_SUBGROUP 0 against 1).
//           Without the extension (Mesa's llvmpipe) the #else path stages A in shared memory, transposed.
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py): USE_SUBGROUP 0 and 2 everywhere,
//           1 where the driver has subgroup shuffles
// Tunables  TM, TN, BK multiples of 4; LM divides 32; BM divisible by LM*TM and BN by (32/LM)*TN;
//           THREADS = 32*(BM/(LM*TM))*(BN/((32/LM)*TN)) (checked below); shared memory 2*BK*(BM+BN)*4 bytes
//           (without shuffles; 2*BK*BN*4 with). USE_SUBGROUP 1: A by shuffle where the driver has
//           GL_KHR_shader_subgroup_shuffle (needs TM = 32/LM and subgroups made of whole runs of 32
//           consecutive invocations, as on NVIDIA), else shared memory; 0: always shared memory;
//           2: the shuffle path with each shuffle emulated through shared memory (slow; for tests)
#define BM 128
#define BN 128
#define BK 16
#define TM 8
#define TN 8
#define LM 4
#define THREADS 256
#define USE_SUBGROUP 1

#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable

#if THREADS != 32 * (BM / (LM * TM)) * (BN / ((32 / LM) * TN))
#error "THREADS must equal 32*(BM/(LM*TM))*(BN/((32/LM)*TN))"
#endif
#if (TM % 4) != 0 || (TN % 4) != 0 || (BK % 4) != 0
#error "TM, TN and BK must be multiples of 4"
#endif
#if (32 % LM) != 0 || (BM % (LM * TM)) != 0 || (BN % ((32 / LM) * TN)) != 0
#error "LM must divide 32, BM must be a multiple of LM*TM and BN of (32/LM)*TN"
#endif

#if USE_SUBGROUP == 1
#ifdef GL_KHR_shader_subgroup_shuffle
#define A_BY_SHUFFLE 1              // the subgroup path
#endif                              // #else: no shuffles here, A goes through shared memory below
#elif USE_SUBGROUP == 2
#define A_BY_SHUFFLE 1              // the subgroup path, its shuffles emulated in lane_value()
#endif
#if defined(A_BY_SHUFFLE) && TM != 32 / LM
#error "the shuffle path needs TM == 32/LM: each invocation of a row of the subgroup holds one row of A"
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

const uint LN = 32u / LM;                 // invocations along n in a subgroup's sub-tile
const uint WM = LM * TM;                  // the sub-tile: WM rows ...
const uint WN = LN * TN;                  // ... by WN columns
const uint WARPS_N = BN / WN;             // sub-tiles across the block
const uint B_QUADS = BK * (BN / 4);       // vec4s in one B tile
const uint B_PER_THREAD = (B_QUADS + THREADS - 1) / THREADS;

shared vec4 Bs[2][BK][BN / 4];            // two copies of the B tile (double buffering, as matmul_5_pipelined)
vec4 b_next[B_PER_THREAD];                // the next B tile, on its way from global memory

#ifdef A_BY_SHUFFLE
vec4 a_row[BK / 4];                       // this invocation's row of the current A tile: BK values of k
vec4 a_row_next[BK / 4];
#if USE_SUBGROUP == 2
shared float lanes[THREADS];
float lane_value(float v, uint lc, uint r) {     // subgroupShuffle emulated: v of invocation r of my row
    lanes[gl_LocalInvocationIndex] = v;
    memoryBarrierShared();
    barrier();
    float got = lanes[gl_LocalInvocationIndex - lc + r];
    barrier();
    return got;
}
#else
float lane_value(float v, uint lc, uint r) {     // v of invocation r of my row of the sub-tile
    return subgroupShuffle(v, gl_SubgroupInvocationID - lc + r);
}
#endif
#else
const uint A_QUADS = BM * (BK / 4);       // vec4s (4 values of k) in one A tile
const uint A_PER_THREAD = (A_QUADS + THREADS - 1) / THREADS;
shared vec4 As[2][BK][BM / 4];            // two copies of the transposed A tile: As[k][g] rows 4g..4g+3
vec4 a_next[A_PER_THREAD];
#endif

void load_b(uint bn, uint k0, uint t, bool vec_n) {
    for (uint p = 0u; p < B_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint c = q % (BN / 4), k = q / (BN / 4);
        uint n = bn + 4u * c, kk = k0 + k;
        vec4 v = vec4(0.0);
        if (q < B_QUADS && kk < K && n < N) {
            uint at = kk * N + n;
            if (vec_n) {
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

void store_b(uint buf, uint t) {
    for (uint p = 0u; p < B_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < B_QUADS) Bs[buf][q / (BN / 4)][q % (BN / 4)] = b_next[p];
    }
}

#ifdef A_BY_SHUFFLE
void load_a_row(uint m, uint k0, bool vec_k) {   // A[m, k0:k0+BK] into a_row_next, zeros past M and K
    for (uint c = 0u; c < BK / 4u; ++c) {
        uint kk = k0 + 4u * c;
        vec4 v = vec4(0.0);
        if (m < M && kk < K) {
            uint at = m * K + kk;
            if (vec_k) {
                v = A4[at / 4u];
            } else {
                v.x = A[at];
                if (kk + 1u < K) v.y = A[at + 1u];
                if (kk + 2u < K) v.z = A[at + 2u];
                if (kk + 3u < K) v.w = A[at + 3u];
            }
        }
        a_row_next[c] = v;
    }
}
#else
void load_a(uint bm, uint k0, uint t, bool vec_k) {   // A[m, kk:kk+4] as one vec4; neighbours: next rows
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint m = bm + q % BM, kk = k0 + 4u * (q / BM);
        vec4 v = vec4(0.0);
        if (q < A_QUADS && m < M && kk < K) {
            uint at = m * K + kk;
            if (vec_k) {
                v = A4[at / 4u];
            } else {
                v.x = A[at];
                if (kk + 1u < K) v.y = A[at + 1u];
                if (kk + 2u < K) v.z = A[at + 2u];
                if (kk + 3u < K) v.w = A[at + 3u];
            }
        }
        a_next[p] = v;
    }
}

void store_a(uint buf, uint t) {                  // transposed, one float at a time: 32 neighbouring rows
    for (uint p = 0u; p < A_PER_THREAD; ++p) {    // of a subgroup land in 32 different banks
        uint q = t + p * THREADS;
        uint row = q % BM, k = 4u * (q / BM);
        if (q < A_QUADS)
            for (uint i = 0u; i < 4u; ++i) As[buf][k + i][row / 4u][row % 4u] = a_next[p][i];
    }
}
#endif

void main() {
    uint t = gl_LocalInvocationIndex;
    uint warp = t / 32u, lane = t % 32u;          // which sub-tile, and which invocation in it
    uint wm = warp / WARPS_N, wn = warp % WARPS_N;
    uint lr = lane / LN, lc = lane % LN;          // row and column of the invocation in its sub-tile
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;
    bool vec4_n = (N & 3u) == 0u;                 // rows of B and C start on 16-byte boundaries
    bool vec4_k = (K & 3u) == 0u;                 // rows of A too

    // acc[4i+ii][j]: row bm + wm*WM + 4*(i*LM + lr) + ii, columns bn + wn*WN + 4*(j*LN + lc) .. +3.
    // Invocations of one row of the sub-tile read the same vec4 of A (one broadcast), those of one
    // column the same vec4 of B; neighbours read neighbouring vec4, so no bank conflicts.
    uint a_at = wm * (WM / 4u) + lr;              // vec4 column of As where this invocation's rows start
    uint b_at = wn * (WN / 4u) + lc;              // vec4 column of Bs
    vec4 acc[TM][TN / 4];
    for (uint r = 0u; r < TM; ++r)
        for (uint j = 0u; j < TN / 4; ++j) acc[r][j] = vec4(0.0);

#ifdef A_BY_SHUFFLE
    // Invocation lc of a sub-tile row holds the row 4*((lc/4)*LM + lr) + lc%4 of the sub-tile: row number
    // lc of the TM rows that its whole row of invocations multiplies (TM == LN).
    uint my_m = bm + wm * WM + 4u * ((lc / 4u) * LM + lr) + lc % 4u;
#endif

    uint tiles = (K + BK - 1u) / BK;
    if (tiles > 0u) {
        load_b(bn, 0u, t, vec4_n);
        store_b(0u, t);
#ifdef A_BY_SHUFFLE
        load_a_row(my_m, 0u, vec4_k);
        a_row = a_row_next;
#else
        load_a(bm, 0u, t, vec4_k);
        store_a(0u, t);
#endif
    }
    memoryBarrierShared();
    barrier();
    for (uint tile = 0u; tile < tiles; ++tile) {
        uint cur = tile & 1u;
        bool more = tile + 1u < tiles;
        if (more) {                                // in flight during the math
            load_b(bn, (tile + 1u) * BK, t, vec4_n);
#ifdef A_BY_SHUFFLE
            load_a_row(my_m, (tile + 1u) * BK, vec4_k);
#else
            load_a(bm, (tile + 1u) * BK, t, vec4_k);
#endif
        }
        for (uint k = 0u; k < BK; ++k) {
            vec4 a[TM / 4], b[TN / 4];
#ifdef A_BY_SHUFFLE
            for (uint i = 0u; i < TM / 4; ++i)
                for (uint ii = 0u; ii < 4u; ++ii) a[i][ii] = lane_value(a_row[k / 4u][k % 4u], lc, 4u * i + ii);
#else
            for (uint i = 0u; i < TM / 4; ++i) a[i] = As[cur][k][a_at + i * LM];
#endif
            for (uint j = 0u; j < TN / 4; ++j) b[j] = Bs[cur][k][b_at + j * LN];
            for (uint i = 0u; i < TM / 4; ++i)
                for (uint j = 0u; j < TN / 4; ++j) {
                    acc[4u * i     ][j] += a[i].x * b[j];
                    acc[4u * i + 1u][j] += a[i].y * b[j];
                    acc[4u * i + 2u][j] += a[i].z * b[j];
                    acc[4u * i + 3u][j] += a[i].w * b[j];
                }
        }
        if (more) {                                // the other copy: nobody reads it this step
            store_b(cur ^ 1u, t);
#ifdef A_BY_SHUFFLE
            a_row = a_row_next;
#else
            store_a(cur ^ 1u, t);
#endif
        }
        memoryBarrierShared();
        barrier();
    }

    for (uint r = 0u; r < TM; ++r) {
        uint m = bm + wm * WM + 4u * ((r / 4u) * LM + lr) + r % 4u;
        if (m >= M) continue;
        for (uint j = 0u; j < TN / 4; ++j) {
            uint n = bn + wn * WN + 4u * (j * LN + lc);
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
