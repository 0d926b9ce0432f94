#version 430
// fused_hidden_2_blocked.comp: the first layer of a training step for the whole batch, A1 = relu(X·W1 + b1),
//   X gathered from the resident uint8 images through the epoch's index buffer, as a register-blocked
//   tiled product: a work group owns BM batch rows × BN hidden units, stages chunks of X and of W1 in
//   shared memory, and each thread keeps a TM×TN block of outputs in registers
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); order[n_samples] uint32, the epoch's sample
//           order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           (this pass reads W1 and b1); A1[count,H], where this step's batch is
//           count = min(batch_size, n_samples - step*batch_size) samples
// NumPy     start = step*batch_size;  rows = order[start:start + count]
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255
//           A1 = np.maximum(X @ W1 + b1, 0)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  2 order uint[n_samples] (readonly)
//           3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)  6 A1 float[batch_size*n_hidden] (writeonly)
//           params is also declared as a vec4 array on binding 3 (Params4): one buffer, 16 bytes a read
//           when n_hidden % 4 == 0 (a uniform branch; other sizes read one float at a time, same sums)
// Uniforms  uint n_in (multiple of 4), n_hidden, n_samples (length of order), batch_size, step
// Dispatch  local (THREADS, 1, 1); groups (ceil(n_hidden/BN), ceil(min(batch_size, n_samples - step*batch_size)/BM), 1)
//           group (h, r) owns hidden units h*BN .. h*BN+BN-1 of batch rows r*BM .. r*BM+BM-1. Thread t is
//           (tx, ty, z) = (t % TX, t / TX % TY, t / (TX*TY)), TX = BN/TN, TY = BM/TM: slice z of K, rows
//           4*(i*TY + ty) + 0..3 and hidden units 4*(j*TX + tx) + 0..3 for i < TM/4, j < TN/4 (strided, as in
//           matmul_5_pipelined: the vec4 reads of a warp fall in different banks). K goes in chunks of
//           KS*BK inputs; slice z sums inputs z*BK .. z*BK+BK-1 of every chunk, in order. Then slices
//           1..KS-1 leave their sums in shared memory and slice 0 adds them to its own in the order 1, 2, ...:
//           the same bits every run
// Changed   vs fused_hidden_1_tiled: the K loop is chunked and both operands come from shared memory, so a
//           W1 value feeds BM rows (fused_hidden_1_tiled: RB rows, capped near 10 because whole image rows
//           sit in shared memory) and an X value TN hidden units; a step reads W1 ceil(count/BM) times. Each
//           thread holds TM×TN sums (matmul_3_blocked's register blocking), the next chunk's global loads are
//           in flight during the math (matmul_5_pipelined's two copies of each tile, one barrier a chunk),
//           and KS slices of K in one work group keep the grid wide at batch 128
// Checked   relative error < 1e-5 against NumPy, A1 poisoned with NaN first, hidden sizes that are not
//           multiples of BN or of 4, a leftover batch, n_in 20 and 784, chunks that do not divide n_in
//           (tests/test_fused_tiled.py)
// Tunables  TM, TN, BK multiples of 4; BM % TM == 0, BN % TN == 0; THREADS = (BM/TM)*(BN/TN)*KS <= 1024;
//           shared memory 16*max(KS*BK*(BM + BN)/2, (KS - 1)*BM*BN/4) + 4*BM bytes <= 32 KiB (all checked
//           below). Defaults: 128 threads and 12 KiB; at batch 128 the H100's 132 SMs get 25 × 8 = 200 work
//           groups for 800 hidden units (4 × 8 = 32 for 128); W1 is read 8 times a step
#define BM 16        // batch rows per work group
#define BN 32        // hidden units per work group
#define TM 4         // rows per thread: TM/4 vec4s of the transposed X tile
#define TN 4         // hidden units per thread: TN/4 vec4s of the W1 tile
#define BK 8         // inputs per slice in a chunk (whole packed words: a multiple of 4)
#define KS 4         // slices of K in a work group, added in a fixed order at the end
#define THREADS 128  // (BM/TM)*(BN/TN)*KS
#define N_OUT 10
#if THREADS != (BM / TM) * (BN / TN) * KS
#error THREADS must equal (BM/TM)*(BN/TN)*KS
#endif
#if THREADS > 1024
#error THREADS must be <= 1024 (threads of a work group)
#endif
#if (TM % 4) != 0 || (TN % 4) != 0 || (BK % 4) != 0
#error TM, TN and BK must be multiples of 4
#endif
#if (BM % TM) != 0 || (BN % TN) != 0
#error BM must be a multiple of TM and BN of TN
#endif
// One shared array: two copies of [X tile (KS*BK × BM/4 vec4s, transposed) | W1 tile (KS*BK × BN/4 vec4s)],
// after the K loop the partial sums of slices 1..KS-1 ((KS-1)*BM*BN/4 vec4s).
#if KS * BK * (BM + BN) / 2 >= (KS - 1) * BM * BN / 4
#define TILE4 (KS * BK * (BM + BN) / 2)
#else
#define TILE4 ((KS - 1) * BM * BN / 4)
#endif
#if 16 * TILE4 + 4 * BM > 32768
#error shared memory must be <= 32 KiB: lower KS, BK, BM or BN
#endif

#pragma optionNV(unroll all)

layout(local_size_x = THREADS, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) readonly buffer Params { float params[]; };
layout(std430, binding = 3) readonly buffer Params4 { vec4 params4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 6) writeonly buffer Hidden { float A1[]; };

uniform uint n_in;        // inputs per sample (784)
uniform uint n_hidden;    // H
uniform uint n_samples;   // samples in the epoch: length of order
uniform uint batch_size;  // B
uniform uint step;        // which batch of the epoch

const uint TX = BN / TN;                  // threads along the hidden units
const uint TY = BM / TM;                  // threads along the rows
const uint KK = KS * BK;                  // inputs per chunk
const uint X4 = KK * (BM / 4);            // vec4s of one X tile
const uint W4 = KK * (BN / 4);            // vec4s of one W1 tile
const uint COPY = X4 + W4;                // one copy of both tiles
const uint X_WORDS = BM * (KK / 4);       // packed words of one X tile
const uint X_PER_THREAD = (X_WORDS + THREADS - 1) / THREADS;
const uint W_PER_THREAD = (W4 + THREADS - 1) / THREADS;
const uint NONE = 0xFFFFFFFFu;

shared vec4 tile[TILE4];
shared uint rowbase[BM];  // first word of each row's image, NONE for rows past the batch

uint x_next[X_PER_THREAD];  // the next chunk, on its way from global memory
vec4 w_next[W_PER_THREAD];

void load_chunk(uint k0, uint col0, uint t, uint words, uint H, bool vec_w) {
    for (uint p = 0u; p < X_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint r = q / (KK / 4u), w = k0 / 4u + q % (KK / 4u);  // neighbouring threads: neighbouring words
        uint pixels4 = 0u;
        if (q < X_WORDS && w < words && rowbase[r] != NONE) pixels4 = images[rowbase[r] + w];
        x_next[p] = pixels4;
    }
    for (uint p = 0u; p < W_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint k = k0 + q / (BN / 4u), n = col0 + 4u * (q % (BN / 4u));
        vec4 v = vec4(0.0);
        if (q < W4 && k < n_in && n < H) {
            uint at = k * H + n;
            if (vec_w) {
                v = params4[at / 4u];
            } else {
                v.x = params[at];
                if (n + 1u < H) v.y = params[at + 1u];
                if (n + 2u < H) v.z = params[at + 2u];
                if (n + 3u < H) v.w = params[at + 3u];
            }
        }
        w_next[p] = v;
    }
}

void store_chunk(uint copy, uint t) {
    uint base = copy * COPY;
    for (uint p = 0u; p < X_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < X_WORDS) {
            uint r = q / (KK / 4u), k = 4u * (q % (KK / 4u));
            uint pixels4 = x_next[p];
            vec4 x = vec4(float(pixels4 & 255u), float((pixels4 >> 8u) & 255u),
                          float((pixels4 >> 16u) & 255u), float(pixels4 >> 24u)) / 255.0;
            for (uint e = 0u; e < 4u; ++e) tile[base + (k + e) * (BM / 4u) + r / 4u][r % 4u] = x[e];
        }
    }
    for (uint p = 0u; p < W_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < W4) tile[base + X4 + q] = w_next[p];  // [k][BN/4]: the order it was loaded in
    }
}

void main() {
    uint t = gl_LocalInvocationIndex;
    uint tx = t % TX, ty = (t / TX) % TY, z = t / (TX * TY);
    uint H = n_hidden;
    uint words = n_in / 4u;
    uint start = step * batch_size;                   // epoch position of the batch's first sample
    uint count = min(batch_size, n_samples - start);  // the last batch holds the leftover samples
    uint row0 = gl_WorkGroupID.y * BM;                // this group's first row within the batch
    uint col0 = gl_WorkGroupID.x * BN;                // this group's first hidden unit
    bool vec_w = (H & 3u) == 0u;                      // rows of W1 start on 16-byte boundaries

    for (uint r = t; r < BM; r += THREADS)
        rowbase[r] = row0 + r < count ? order[start + row0 + r] * words : NONE;
    memoryBarrierShared();
    barrier();

    vec4 acc[TM][TN / 4];
    for (uint i = 0u; i < TM; ++i)
        for (uint j = 0u; j < TN / 4; ++j) acc[i][j] = vec4(0.0);

    uint chunks = (n_in + KK - 1u) / KK;
    load_chunk(0u, col0, t, words, H, vec_w);
    store_chunk(0u, t);
    memoryBarrierShared();
    barrier();
    for (uint c = 0u; c < chunks; ++c) {
        uint base = (c & 1u) * COPY;
        bool more = c + 1u < chunks;
        if (more) load_chunk((c + 1u) * KK, col0, t, words, H, vec_w);  // in flight during the math
        for (uint kk = 0u; kk < BK; ++kk) {
            uint k = z * BK + kk;
            vec4 a[TM / 4], b[TN / 4];
            for (uint i = 0u; i < TM / 4; ++i) a[i] = tile[base + k * (BM / 4u) + i * TY + ty];
            for (uint j = 0u; j < TN / 4; ++j) b[j] = tile[base + X4 + k * (BN / 4u) + j * TX + tx];
            for (uint i = 0u; i < TM / 4; ++i)
                for (uint j = 0u; j < TN / 4; ++j) {
                    acc[4u * i     ][j] += a[i].x * b[j];
                    acc[4u * i + 1u][j] += a[i].y * b[j];
                    acc[4u * i + 2u][j] += a[i].z * b[j];
                    acc[4u * i + 3u][j] += a[i].w * b[j];
                }
        }
        if (more) store_chunk((c + 1u) & 1u, t);  // the other copy: nobody reads it this chunk
        memoryBarrierShared();
        barrier();
    }

    // Slices 1..KS-1 leave their sums in shared memory ([slice][i][j][ty][tx]: neighbouring threads,
    // neighbouring vec4s); slice 0 adds them to its own in slice order, then b1 and ReLU.
    uint lane = ty * TX + tx;
    if (z > 0u)
        for (uint i = 0u; i < TM; ++i)
            for (uint j = 0u; j < TN / 4; ++j) tile[(((z - 1u) * TM + i) * (TN / 4u) + j) * (TX * TY) + lane] = acc[i][j];
    memoryBarrierShared();
    barrier();
    if (z == 0u) {
        for (uint s = 1u; s < KS; ++s)
            for (uint i = 0u; i < TM; ++i)
                for (uint j = 0u; j < TN / 4; ++j) acc[i][j] += tile[(((s - 1u) * TM + i) * (TN / 4u) + j) * (TX * TY) + lane];
        for (uint i = 0u; i < TM; ++i) {
            uint b = row0 + 4u * ((i / 4u) * TY + ty) + i % 4u;
            if (b >= count) continue;
            for (uint j = 0u; j < TN / 4; ++j) {
                uint n = col0 + 4u * (j * TX + tx);
                for (uint e = 0u; e < 4u; ++e)
                    if (n + e < H) A1[b * H + n + e] = max(acc[i][j][e] + params[n_in * H + n + e], 0.0);
            }
        }
    }
}
