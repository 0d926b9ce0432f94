#version 430
// dense_4_u8.comp: dense_3_tiled's layer Y = relu(X·W + bias) reading X as uint8 pixels packed four to
//   a uint32 word, scaled to [0, 1] on the way into shared memory
//
// Shapes    X: B rows of Wd = ceil(K/4) uint32 words: pixel p of image i is byte p%4 (little-endian) of
//           word i*Wd + p/4 (integer division), rows zero-padded to whole words (bytes past K are ignored)
//           W[K,N]  bias[N]  Y[B,N]   float32, row-major, std430 (flat arrays)
//           sizes: B, K, N ≥ 1
// NumPy     X = np.pad(pixels, ((0, 0), (0, -K % 4))).view("<u4")      # pixels: uint8 [B,K]
//           Y = np.maximum(pixels / 255 @ W + bias, 0)   (RELU 1);   Y = pixels / 255 @ W + bias   (RELU 0)
// Bindings  0 X uint[B*ceil(K/4)] (readonly)  1 W float[K*N] (readonly)  2 bias float[N] (readonly)
//           3 Y float[B*N] (writeonly)
//           W and Y are also declared as vec4 arrays on the same bindings (Weights4, Output4)
// Uniforms  uint B, K, N   (K counts pixels, not words)
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(B/BM), 1)
//           a work group computes a BM×BN block of Y; THREADS = (BM/TM)*(BN/TN), each thread TM×TN outputs
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % TM == 0;  BN % TN == 0;
//           BK % 4 == 0
// Changed   vs dense_3_tiled: the X tile comes from uint8 pixels, a quarter of the bytes to upload and
//           to read. A thread loads one word from each of four rows (4 rows × 4 pixels), unpacks with
//           shifts and masks, scales by 1/255 and stores four vec4 columns of the transposed tile; the
//           math and the epilogue are unchanged. Bytes past K in a row's last word count as 0.
// Checked   relative error < 1e-5 against NumPy on pixels / 255 (tests/test_matmul.py)
// Tunables  BK, TM and TN multiples of 4; BM divisible by TM and BN by TN; THREADS = (BM/TM)*(BN/TN)
//           (checked below)
#ifndef RELU
#define RELU 1
#endif
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 32
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
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
#if (TM % 4) != 0 || (TN % 4) != 0 || (BK % 4) != 0
#error "BK, TM and TN must be multiples of 4"
#endif

#pragma optionNV(unroll all)

layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer Input { uint X[]; };
layout(std430, binding = 1) readonly buffer Weights { float W[]; };
layout(std430, binding = 1) readonly buffer Weights4 { vec4 W4[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Output { float Y[]; };
layout(std430, binding = 3) writeonly buffer Output4 { vec4 Y4[]; };

uniform uint B;   // rows: samples in the batch
uniform uint K;   // inputs per sample
uniform uint N;   // outputs per sample

const uint TX = BN / TN;                                   // threads along n
const uint TY = BM / TM;                                   // threads along m
const uint A_QUADS = (BM / 4) * (BK / 4);                  // (4 rows × 1 word) pieces of an X tile
const uint B_QUADS = BK * (BN / 4);                        // vec4s in one W tile
const uint A_PER_THREAD = (A_QUADS + THREADS - 1) / THREADS;
const uint B_PER_THREAD = (B_QUADS + THREADS - 1) / THREADS;

shared vec4 As[2][BK][BM / 4 + PAD];   // two copies of the transposed X tile
shared vec4 Bs[2][BK][BN / 4];         // two copies of the W tile

uvec4 a_next[A_PER_THREAD];            // the next tiles, on their way from global memory
vec4 b_next[B_PER_THREAD];

void load_tiles(uint bm, uint bn, uint k0, uint t, bool vec_b) {
    uint words = (K + 3u) / 4u;                     // words per row of X
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint w = q % (BK / 4), g = q / (BK / 4);      // word w of the tile's K range, rows 4g..4g+3
        uint m = bm + 4u * g, word = k0 / 4u + w;
        uvec4 v = uvec4(0u);
        if (q < A_QUADS && word < words) {
            if (m      < B) v.x = X[(m     ) * words + word];
            if (m + 1u < B) v.y = X[(m + 1u) * words + word];
            if (m + 2u < B) v.z = X[(m + 2u) * words + word];
            if (m + 3u < B) v.w = X[(m + 3u) * words + word];
        }
        if (4u * word + 4u > K) {                      // the last word of a row may hold bytes past K
            uint keep = K > 4u * word ? K - 4u * word : 0u;   // pixels of this word inside K
            uint mask = keep >= 4u ? 0xFFFFFFFFu : (1u << (8u * keep)) - 1u;
            v &= uvec4(mask);
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
                v = W4[at / 4u];
            } else {
                v.x = W[at];
                if (n + 1u < N) v.y = W[at + 1u];
                if (n + 2u < N) v.z = W[at + 2u];
                if (n + 3u < N) v.w = W[at + 3u];
            }
        }
        b_next[p] = v;
    }
}

void store_tiles(uint buf, uint t) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        if (q < A_QUADS) {
            uint w = q % (BK / 4), g = q / (BK / 4);
            for (uint j = 0u; j < 4u; ++j) {          // pixel j of the word: bits 8j..8j+7
                vec4 pixels = vec4((a_next[p] >> (8u * j)) & 0xFFu) * (1.0 / 255.0);
                As[buf][4u * w + j][g] = pixels;
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
    uint tx = t % TX;
    uint ty = t / TX;
    uint bm = gl_WorkGroupID.y * BM;
    uint bn = gl_WorkGroupID.x * BN;
    bool vec4_n = (N & 3u) == 0u;      // rows of W and Y start on 16-byte boundaries

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

    for (uint j = 0u; j < TN / 4; ++j) {              // bias: four columns per vec4
        uint n = bn + 4u * (j * TX + tx);
        vec4 b = vec4(0.0);
        if (n      < N) b.x = bias[n];
        if (n + 1u < N) b.y = bias[n + 1u];
        if (n + 2u < N) b.z = bias[n + 2u];
        if (n + 3u < N) b.w = bias[n + 3u];
        for (uint r = 0u; r < TM; ++r) {
            acc[r][j] += b;
#if RELU
            acc[r][j] = max(acc[r][j], vec4(0.0));
#endif
        }
    }
    for (uint r = 0u; r < TM; ++r) {
        uint m = bm + 4u * ((r / 4u) * TY + ty) + r % 4u;
        if (m >= B) continue;
        for (uint j = 0u; j < TN / 4; ++j) {
            uint n = bn + 4u * (j * TX + tx);
            if (n >= N) continue;
            uint at = m * N + n;
            if (vec4_n) {
                Y4[at / 4u] = acc[r][j];
            } else {
                Y[at] = acc[r][j].x;
                if (n + 1u < N) Y[at + 1u] = acc[r][j].y;
                if (n + 2u < N) Y[at + 2u] = acc[r][j].z;
                if (n + 3u < N) Y[at + 3u] = acc[r][j].w;
            }
        }
    }
}
