#version 430
// dense_3_tiled.comp: one dense layer Y = relu(X·W + bias) with matmul_5_pipelined's register-blocked
//   matmul, the bias and ReLU applied in registers before the one store (RELU 0: logits, no ReLU)
//
// Shapes    X[B,K]  W[K,N]  bias[N]  Y[B,N]   float32, row-major, std430 (flat float arrays)
//           sizes: B, K, N ≥ 1
// NumPy     Y = np.maximum(X @ W + bias, 0)   (RELU 1);   Y = X @ W + bias   (RELU 0)
// Bindings  0 X float[B*K] (readonly)  1 W float[K*N] (readonly)  2 bias float[N] (readonly)
//           3 Y float[B*N] (writeonly)
//           W and Y are also declared as vec4 arrays on the same bindings (Weights4, Output4): one
//           buffer serves both views, read and written four floats at a time when N % 4 == 0
// Uniforms  uint B, K, N
// Dispatch  local (THREADS, 1, 1); groups (ceil(N/BN), ceil(B/BM), 1)
//           a work group computes a BM×BN block of Y; THREADS = (BM/TM)*(BN/TN), each thread TM×TN outputs
// Requires  THREADS == (BM // TM)*(BN // TN);  TM % 4 == 0;  TN % 4 == 0;  BM % TM == 0;  BN % TN == 0
// Changed   vs matmul_5_pipelined: an epilogue adds the bias (and takes the ReLU) in registers, so a
//           layer is one dispatch with no extra pass over Y. Same bindings and uniforms as dense_1_naive:
//           a drop-in replacement. Defaults are tuned for the MNIST layers (B = 10,000, K = 784,
//           N = 128 or 10): blocks smaller than matmul_5_pipelined's 128×128 give more work groups
//           than the GPU has SMs
// Checked   relative error < 1e-5 against NumPy (tests/test_matmul.py)
// Tunables  TM, TN multiples of 4; BM divisible by TM and BN by TN; THREADS = (BM/TM)*(BN/TN) (checked below)
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
#if (TM % 4) != 0 || (TN % 4) != 0
#error "TM and TN must be multiples of 4"
#endif

#pragma optionNV(unroll all)

layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer Input { float X[]; };
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
const uint A_QUADS = (BM / 4) * BK;                        // vec4s in one X tile
const uint B_QUADS = BK * (BN / 4);                        // vec4s in one W tile
const uint A_PER_THREAD = (A_QUADS + THREADS - 1) / THREADS;
const uint B_PER_THREAD = (B_QUADS + THREADS - 1) / THREADS;

shared vec4 As[2][BK][BM / 4 + PAD];   // two copies of the transposed X tile
shared vec4 Bs[2][BK][BN / 4];         // two copies of the W tile

vec4 a_next[A_PER_THREAD];             // the next tiles, on their way from global memory
vec4 b_next[B_PER_THREAD];

void load_tiles(uint bm, uint bn, uint k0, uint t, bool vec_b) {
    for (uint p = 0u; p < A_PER_THREAD; ++p) {
        uint q = t + p * THREADS;
        uint k = q % BK, g = q / BK;
        uint m = bm + 4u * g, kk = k0 + k;
        vec4 v = vec4(0.0);
        if (q < A_QUADS && kk < K) {
            if (m      < B) v.x = X[(m     ) * K + kk];
            if (m + 1u < B) v.y = X[(m + 1u) * K + kk];
            if (m + 2u < B) v.z = X[(m + 2u) * K + kk];
            if (m + 3u < B) v.w = X[(m + 3u) * K + kk];
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
