#version 430
// fused_backward_2_dropout.comp: fused_backward_1_update for a dropout step: every parameter's gradient
//   and its optimizer update in one dispatch, the inputs re-gathered with the same input dropout mask the
//   forward pass used, recomputed from the same hash (no mask is stored or uploaded)
//
// Shapes    params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden;
//           state_m, state_v the same length (momentum's velocity in state_m; Adam's m and v)
//           A1[count,H]  dZ1[count,H]  dlogits[count,N_OUT] as fused_forward_2_dropout wrote them, where
//           count = min(batch_size, n_samples - step*batch_size) samples are this step's batch
//           images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); order[n_samples] uint32, each value < n_images
//           A1 and dZ1 already hold the hidden mask (fused_forward_2_dropout wrote relu(Z1) * mask_h and
//           dZ1 with the mask applied); the input mask is hash(seed, rng_step, 0, b, k) as the forward's
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  b = np.arange(count)
//           mix32(x): x ^= x >> 16; x *= 0x85EBCA6B; x ^= x >> 13; x *= 0xC2B2AE35; x ^= x >> 16 (uint32)
//           absorb(h, c) = mix32(h ^ (c + 0x9E3779B9));  key = absorb(absorb(absorb(absorb(0, seed), rng_step), 0), b)
//           u = (absorb(key[:, None], np.arange(n_in)) >> 8) * 2**-24;  mask_in = (u < keep_in) / keep_in
//           X = images.view(np.uint8).reshape(-1, n_in)[order[start:start + count]] / 255 * mask_in
//           grads = {W1: X.T @ dZ1, b1: dZ1.sum(0), W2: A1.T @ dlogits, b2: dlogits.sum(0)}, then per parameter
//           OPTIMIZER 0: p -= lr * g;   1: m = mu * m + g;  p -= lr * m
//           2: m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//              p -= lr * (m / c1) / (np.sqrt(v / c2) + eps)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  2 order uint[n_samples] (readonly)
//           3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (read-write)
//           4 state_m float[min(OPTIMIZER, 1)*((n_in + 1 + N_OUT)*n_hidden + N_OUT)] (read-write)
//           5 state_v float[(OPTIMIZER // 2)*((n_in + 1 + N_OUT)*n_hidden + N_OUT)] (read-write)
//           6 A1 float[batch_size*n_hidden] (readonly)  7 dZ1 float[batch_size*n_hidden] (readonly)
//           8 dlogits float[batch_size*N_OUT] (readonly)
//           (state_m is unused by SGD, state_v by SGD and momentum: any buffer will do there)
// Uniforms  uint n_in, n_hidden, n_samples, batch_size, step; float lr
//           uint seed, rng_step; float keep_in   (the forward pass's: the same input mask)
//           float mu   (OPTIMIZER 1)
//           float beta1, beta2, one_minus_beta1, one_minus_beta2, eps, c1, c2   (OPTIMIZER 2)
//           c1 = 1 - beta1^t and c2 = 1 - beta2^t, with 1 - beta, computed on the CPU in float64
// Dispatch  local (TJ, TKT, 1); groups (ceil(((1 + N_OUT)*n_hidden + N_OUT)/(TJ*TKT/BSPLIT))
//                                       + ceil(n_in/(TKT*KPT))*ceil(n_hidden/TJ), 1, 1)
//           the first groups own b1, W2, b2: BSPLIT threads sum one gradient over interleaved slices of
//           the batch, added in shared memory in a fixed order (these short groups start first); the
//           rest each own a TK×TJ tile of W1, TK = TKT*KPT (thread (x, y): KPT rows, one column),
//           staging BC batch rows of X and dZ1 in shared memory at a time. No atomics: the same bits every run
// Requires  TKT*KPT % 4 == 0;  BC >= TKT;  TJ*TKT % BSPLIT == 0;  TJ*TKT <= 1024;  n_in % 4 == 0
// Changed   vs fused_backward_1_update: the X tile load multiplies each pixel by its input dropout mask,
//           recomputed from the hash (4 hashes a sample and 1 a pixel, in registers) rather than stored by
//           the forward pass and read back: nothing random crosses memory. dW2, db1, db2 and the update are
//           unchanged: A1 and dZ1 carry the hidden mask already. Max-norm runs after, as its own dispatch
//           (maxnorm_1_columns: a column's norm needs all of its rows, which live in many work groups)
// Checked   relative error < 1e-5 against NumPy with the same masks, SGD and momentum (tests/test_dropout.py)
// Tunables  TK = TKT*KPT a multiple of 4 (whole packed words); TJ*TKT <= 1024; BC >= TKT; BSPLIT divides
//           TJ*TKT (all checked below); BC*(TK + TJ)*4 bytes of shared memory. OPTIMIZER: 0 SGD, 1 momentum, 2 Adam
#ifndef TJ
#define TJ 32
#endif
#ifndef TKT
#define TKT 8
#endif
#ifndef KPT
#define KPT 2
#endif
#ifndef BC
#define BC 32
#endif
#ifndef BSPLIT
#define BSPLIT 8
#endif
#ifndef OPTIMIZER
#define OPTIMIZER 0
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if (TKT * KPT) % 4 != 0
#error TK = TKT*KPT must be a multiple of 4 (whole packed image words)
#endif
#if BC < TKT
#error BC must be >= TKT (see Tunables above)
#endif
#if (TJ * TKT) % BSPLIT != 0
#error (TJ*TKT) % BSPLIT must be 0 (BSPLIT threads share each small parameter)
#endif
#if TJ * TKT > 1024
#error TJ*TKT must be <= 1024 (threads of a work group)
#endif

layout(local_size_x = TJ, local_size_y = TKT, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) buffer Params { float params[]; };
layout(std430, binding = 4) buffer StateM { float state_m[]; };
layout(std430, binding = 5) buffer StateV { float state_v[]; };
layout(std430, binding = 6) readonly buffer Hidden { float A1[]; };
layout(std430, binding = 7) readonly buffer HiddenGrad { float dZ1[]; };
layout(std430, binding = 8) readonly buffer LogitGrad { float dlogits[]; };

uniform uint n_in;
uniform uint n_hidden;
uniform uint n_samples;
uniform uint batch_size;
uniform uint step;
uniform float lr;
uniform uint seed;        // the forward pass's seed, step counter and input keep probability
uniform uint rng_step;
uniform float keep_in;
#if OPTIMIZER == 1
uniform float mu;
#elif OPTIMIZER == 2
uniform float beta1, beta2, one_minus_beta1, one_minus_beta2, eps, c1, c2;
#endif

const uint TK = TKT * KPT;
const uint THREADS = TJ * TKT;
const uint TP = THREADS / BSPLIT;  // b1/W2/b2 parameters per work group

shared float Xs[BC * TK];
shared float Ds[BC * TJ];  // also the BSPLIT partial sums of the b1/W2/b2 groups

// Counter-based random numbers, identical in every shader that uses them; the NumPy twin is helpers/rng.py
// (mix32, absorb, sample_key, uniform). mix32 is MurmurHash3's 32-bit finaliser (public domain): a
// bijection of uint32 in which each input bit flips each output bit with probability about 1/2.
uint mix32(uint x) {
    x ^= x >> 16u;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13u;
    x *= 0xC2B2AE35u;
    x ^= x >> 16u;
    return x;
}
uint absorb(uint h, uint counter) { return mix32(h ^ (counter + 0x9E3779B9u)); }
uint sample_key(uint layer, uint row) { return absorb(absorb(absorb(absorb(0u, seed), rng_step), layer), row); }
float dropout_mask(uint key, uint unit, float keep) {  // 1/keep if the unit is kept, 0 if dropped
    if (keep >= 1.0) return 1.0;
    float u = float(absorb(key, unit) >> 8u) * (1.0 / 16777216.0);  // 24 bits: exact in float32
    return u < keep ? 1.0 / keep : 0.0;
}

void update(uint p, float g) {
#if OPTIMIZER == 0
    params[p] -= lr * g;
#elif OPTIMIZER == 1
    float v = mu * state_m[p] + g;
    state_m[p] = v;
    params[p] -= lr * v;
#else
    float m = beta1 * state_m[p] + one_minus_beta1 * g;
    float v = beta2 * state_v[p] + one_minus_beta2 * g * g;
    state_m[p] = m;
    state_v[p] = v;
    params[p] -= lr * (m / c1) / (sqrt(v / c2) + eps);
#endif
}

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint H = n_hidden;
    uint words = n_in / 4u;
    uint start = step * batch_size;
    uint count = min(batch_size, n_samples - start);
    uint tiles_j = (H + TJ - 1u) / TJ;
    uint small = H + H * N_OUT + N_OUT;                // b1, W2, b2: parameters n_in*H + t
    uint small_groups = (small + TP - 1u) / TP;
    uint g = gl_WorkGroupID.x;

    if (g < small_groups) {  // the same branch for the whole group, so the barriers are reached by all
        uint t = g * TP + lid % TP, slice = lid / TP;
        float grad = 0.0;
        if (t < H) {                                   // db1[j] = sum_b dZ1[b, j]
            for (uint b = slice; b < count; b += BSPLIT) grad += dZ1[b * H + t];
        } else if (t < H + H * N_OUT) {                // dW2[j, o] = sum_b A1[b, j] * dlogits[b, o]
            uint j = (t - H) / N_OUT, o = (t - H) % N_OUT;
            for (uint b = slice; b < count; b += BSPLIT) grad += A1[b * H + j] * dlogits[b * N_OUT + o];
        } else if (t < small) {                        // db2[o] = sum_b dlogits[b, o]
            uint o = t - H - H * N_OUT;
            for (uint b = slice; b < count; b += BSPLIT) grad += dlogits[b * N_OUT + o];
        }
        Ds[lid] = grad;
        barrier();
        if (slice == 0u && t < small) {
            float sum = 0.0;
            for (uint q = 0u; q < BSPLIT; q++) sum += Ds[q * TP + lid];  // fixed order
            update(n_in * H + t, sum);
        }
    } else {
        // dW1[k, j] = sum over the batch of X[b, k] * dZ1[b, j], a TK×TJ tile per group
        uint tile = g - small_groups;
        uint tk = tile / tiles_j, tj = tile % tiles_j;
        uint jj = gl_LocalInvocationID.x, kq = gl_LocalInvocationID.y;
        uint j = tj * TJ + jj;
        float acc[KPT];
        for (uint i = 0u; i < KPT; i++) acc[i] = 0.0;
        for (uint b0 = 0u; b0 < count; b0 += BC) {
            for (uint w = lid; w < BC * (TK / 4u); w += THREADS) {  // X rows b0.., columns of this tile, masked
                uint bb = w / (TK / 4u), q = w % (TK / 4u), b = b0 + bb, k = tk * TK + 4u * q;
                uint pixels4 = 0u;
                if (b < count && k < n_in) pixels4 = images[order[start + b] * words + k / 4u];
                uint key = sample_key(0u, b);  // the forward pass's input mask of row b, recomputed
                for (uint i = 0u; i < 4u; i++) {
                    float x = float((pixels4 >> (8u * i)) & 255u) / 255.0;
                    Xs[bb * TK + 4u * q + i] = x * dropout_mask(key, k + i, keep_in);
                }
            }
            for (uint w = lid; w < BC * TJ; w += THREADS) {  // dZ1 rows b0.., columns of this tile
                uint b = b0 + w / TJ, jx = tj * TJ + w % TJ;
                Ds[w] = (b < count && jx < H) ? dZ1[b * H + jx] : 0.0;
            }
            barrier();
            uint nb = min(BC, count - b0);
            for (uint bb = 0u; bb < nb; bb++) {
                float d = Ds[bb * TJ + jj];
                for (uint i = 0u; i < KPT; i++) acc[i] += Xs[bb * TK + kq * KPT + i] * d;
            }
            barrier();
        }
        for (uint i = 0u; i < KPT; i++) {
            uint k = tk * TK + kq * KPT + i;
            if (k < n_in && j < H) update(k * H + j, acc[i]);
        }
    }
}
