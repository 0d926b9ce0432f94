#version 430
// fused_forward_2_dropout.comp: fused_forward_1_xent with dropout on the inputs and the hidden units:
//   the same gather, layers, softmax cross-entropy, dlogits and dZ1 for S samples per work group, with
//   each input pixel and each hidden activation kept with probability keep_in / keep_hidden and scaled by
//   1/keep when kept (inverted dropout), the masks computed from a hash of (seed, rng_step, layer, row, unit)
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); labels[n_images] uint32; order[n_samples] uint32,
//           the epoch's sample order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           A1[count,H] (the dropped-out activations)  dZ1[count,H]  dlogits[count,N_OUT]  losses[n_samples]
//           (one per sample, at its epoch position); this step's batch is count = min(batch_size,
//           n_samples - step*batch_size) samples
//           masks: random bits r = hash(seed, rng_step, layer, b, unit) for batch row b (layer 0: pixel
//           unit k; layer 1: hidden unit j), u = (r >> 8) * 2^-24 in [0, 1), mask = 1/keep if u < keep else 0
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  rows = order[start:start + count];  b = np.arange(count)
//           mix32(x): x ^= x >> 16; x *= 0x85EBCA6B; x ^= x >> 13; x *= 0xC2B2AE35; x ^= x >> 16 (uint32)
//           absorb(h, c) = mix32(h ^ (c + 0x9E3779B9));  key(layer) = absorb(absorb(absorb(absorb(0, seed),
//               rng_step), layer), b)[:, None];  u(layer, units) = (absorb(key(layer), units) >> 8) * 2**-24
//           mask_in = (u(0, np.arange(n_in)) < keep_in) / keep_in;  mask_h = (u(1, np.arange(H)) < keep_hidden) / keep_hidden
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255 * mask_in;  y = labels[rows]
//           Z1 = X @ W1 + b1;  A1 = np.maximum(Z1, 0) * mask_h;  logits = A1 @ W2 + b2
//           z = logits - logits.max(1, keepdims=True);  logp = z - np.log(np.exp(z).sum(1, keepdims=True))
//           losses[start:start + count] = -logp[np.arange(count), y]
//           dlogits = (np.exp(logp) - np.eye(N_OUT)[y]) / count;  dZ1 = (dlogits @ W2.T) * mask_h * (Z1 > 0)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  1 labels uint[n_images] (readonly)
//           2 order uint[n_samples] (readonly)  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)
//           6 A1 float[batch_size*n_hidden] (writeonly)  7 dZ1 float[batch_size*n_hidden] (writeonly)
//           8 dlogits float[batch_size*N_OUT] (writeonly)  9 losses float[n_samples] (writeonly)
//           params is also declared as a vec4 array on binding 3 (Params4): one buffer, 16 bytes a read;
//           bindings 4 and 5 stay free for the backward shader's optimizer state
// Uniforms  uint n_in (multiple of 4, <= MAX_IN), n_hidden (<= MAX_H), n_samples (length of order), batch_size, step
//           uint seed (the run's seed), rng_step (steps since training began: a new mask every step)
//           float keep_in, keep_hidden (keep probabilities, above 0 and at most 1: 1 turns that dropout off)
// Dispatch  local (JT, KS, 1); groups (ceil(min(batch_size, n_samples - step*batch_size)/S), 1, 1)
//           threads split as in fused_forward_1_xent: 4 hidden units a thread, the inputs split KS ways,
//           partial sums added in a fixed order (no atomics: the same bits every run)
// Requires  JT*KS >= S*N_OUT;  JT*KS <= 1024;  n_in % 4 == 0;  n_in <= MAX_IN;  n_hidden <= MAX_H;
//           n_hidden % 4 == 0 if VEC4
// Changed   vs fused_forward_1_xent: dropout. The gather multiplies each pixel by its input mask; the
//           hidden row kept in shared memory is A1 = relu(Z1) * mask_h instead of Z1, so the logits read it
//           as it is and dZ1 = A1 > 0 ? (dlogits·W2ᵀ) / keep_hidden : 0 (A1 > 0 exactly where Z1 > 0 and the
//           unit is kept). No mask is stored: A1 and dZ1 carry the hidden mask to the backward pass, which
//           recomputes the input mask from the same hash. Test time needs no mask (inverted scaling):
//           fused_predict_1_argmax predicts unchanged
// Checked   relative error < 1e-5 against NumPy with the same masks; the hash bit for bit (tests/test_dropout.py)
// Tunables  as fused_forward_1_xent: 4 * (S * (MAX_IN + KS*4*JT + MAX_H + N_OUT + 2)) bytes of shared memory;
//           JT*KS <= 1024 threads and >= S*N_OUT (checked below); VEC4 1 needs n_hidden % 4 == 0
#ifndef S
#define S 2
#endif
#ifndef JT
#define JT 32
#endif
#ifndef KS
#define KS 16
#endif
#ifndef MAX_IN
#define MAX_IN 784
#endif
#ifndef MAX_H
#define MAX_H 256
#endif
#ifndef VEC4
#define VEC4 1
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if JT * KS < S * N_OUT
#error JT*KS must be >= S*N_OUT: one thread per logit of the work group's S samples (raise KS or JT, or lower S)
#endif
#if JT * KS > 1024
#error JT*KS must be <= 1024 (threads of a work group)
#endif

layout(local_size_x = JT, local_size_y = KS, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) readonly buffer Params { float params[]; };
layout(std430, binding = 3) readonly buffer Params4 { vec4 params4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 6) writeonly buffer Hidden { float A1[]; };
layout(std430, binding = 7) writeonly buffer HiddenGrad { float dZ1[]; };
layout(std430, binding = 8) writeonly buffer LogitGrad { float dlogits[]; };
layout(std430, binding = 9) writeonly buffer Losses { float losses[]; };

uniform uint n_in;        // inputs per sample (784)
uniform uint n_hidden;    // H
uniform uint n_samples;   // samples in the epoch: length of order
uniform uint batch_size;  // B
uniform uint step;        // which batch of the epoch
uniform uint seed;        // the run's seed: the key of the random numbers
uniform uint rng_step;    // steps since training began: the counter that changes every step
uniform float keep_in;    // probability an input pixel is kept
uniform float keep_hidden;  // probability a hidden unit is kept

const uint THREADS = JT * KS;
const uint CW = 4u * JT;        // hidden units per pass of the work group
const uint P = S * N_OUT;       // logits per work group
const uint PARTS = THREADS / P; // threads per logit

shared float Xs[S * MAX_IN];        // the S input rows, unpacked to [0, 1], input mask applied
shared float partial[KS * S * CW];  // partial sums (layer 1), reused for the logits
shared float As[S * MAX_H];         // A1 rows of the S samples: relu(Z1) * mask_h
shared float Ls[S * N_OUT];         // logits, then dlogits
shared uint keys[2 * S];            // hash of (seed, rng_step, layer, row) per sample: [layer * S + s]

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

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint jt = gl_LocalInvocationID.x;  // owns hidden units 4*jt .. 4*jt+3 of each pass
    uint ks = gl_LocalInvocationID.y;
    uint H = n_hidden;
    uint words = n_in / 4u;
    uint start = step * batch_size;                   // epoch position of the batch's first sample
    uint count = min(batch_size, n_samples - start);  // the last batch holds the leftover samples
    uint first = gl_WorkGroupID.x * S;                // this group's first row within the batch
    uint b1o = n_in * H, W2o = b1o + H, b2o = W2o + H * N_OUT;  // offsets into params

    // 0. The per-sample keys of the two masks, once per sample.
    if (lid < 2u * S) keys[lid] = sample_key(lid / S, first + lid % S);
    barrier();

    // 1. Gather: four pixels per word, straight from the resident training set, each times its input mask.
    for (uint w = lid; w < S * words; w += THREADS) {
        uint s = w / words, q = w % words;
        uint pixels4 = 0u;
        if (first + s < count) pixels4 = images[order[start + first + s] * words + q];
        for (uint i = 0u; i < 4u; i++) {
            float x = float((pixels4 >> (8u * i)) & 255u) / 255.0;
            Xs[s * MAX_IN + 4u * q + i] = x * dropout_mask(keys[s], 4u * q + i, keep_in);
        }
    }
    barrier();

    // 2. Layer 1, Z1 = X·W1 + b1, CW hidden units at a time; the inputs split KS ways; A1 = relu(Z1) * mask_h.
    uint chunk = (n_in + KS - 1u) / KS;
    uint k0 = min(n_in, ks * chunk), k1 = min(n_in, k0 + chunk);
    for (uint j0 = 0u; j0 < H; j0 += CW) {
        uint j = j0 + 4u * jt;  // this thread's first hidden unit
        vec4 acc[S];
        for (uint s = 0u; s < S; s++) acc[s] = vec4(0.0);
        if (j < H) {
            for (uint k = k0; k < k1; k++) {
#if VEC4
                vec4 w = params4[(k * H + j) / 4u];  // W1[k, j:j+4]: threads next in x read next 16 bytes
#else
                uint at = k * H + j;
                vec4 w = vec4(params[at], j + 1u < H ? params[at + 1u] : 0.0,
                              j + 2u < H ? params[at + 2u] : 0.0, j + 3u < H ? params[at + 3u] : 0.0);
#endif
                for (uint s = 0u; s < S; s++) acc[s] += Xs[s * MAX_IN + k] * w;
            }
        }
        for (uint s = 0u; s < S; s++) {
            for (uint c = 0u; c < 4u; c++) partial[(ks * S + s) * CW + 4u * jt + c] = acc[s][c];
        }
        barrier();
        for (uint o = lid; o < S * CW; o += THREADS) {
            uint s = o / CW, jj = o % CW;
            if (j0 + jj < H) {
                float z = 0.0;
                for (uint q = 0u; q < KS; q++) z += partial[(q * S + s) * CW + jj];  // fixed order
                As[s * MAX_H + j0 + jj] = max(z + params[b1o + j0 + jj], 0.0) * dropout_mask(keys[S + s], j0 + jj, keep_hidden);
            }
        }
        barrier();
    }

    // 3. Logits = A1·W2 + b2: P dot products of length H, each split over PARTS threads.
    if (lid < P * PARTS) {
        uint p = lid % P, part = lid / P, s = p / N_OUT, o = p % N_OUT;
        float acc = 0.0;
        for (uint j = part; j < H; j += PARTS) acc += As[s * MAX_H + j] * params[W2o + j * N_OUT + o];
        partial[part * P + p] = acc;
    }
    barrier();
    if (lid < P) {
        float z = 0.0;
        for (uint q = 0u; q < PARTS; q++) z += partial[q * P + lid];
        Ls[lid] = z + params[b2o + lid % N_OUT];
    }
    barrier();

    // 4. Softmax cross-entropy, one thread per sample: loss and dlogits = (p - onehot) / count.
    if (lid < S && first + lid < count) {
        uint s = lid, b = first + s;
        uint y = labels[order[start + b]];
        float m = Ls[s * N_OUT];
        for (uint o = 1u; o < N_OUT; o++) m = max(m, Ls[s * N_OUT + o]);  // stable: subtract the max
        float total = 0.0;
        for (uint o = 0u; o < N_OUT; o++) total += exp(Ls[s * N_OUT + o] - m);
        float lse = log(total);
        losses[start + b] = lse - (Ls[s * N_OUT + y] - m);
        for (uint o = 0u; o < N_OUT; o++) {
            float d = exp(Ls[s * N_OUT + o] - m - lse);
            if (o == y) d -= 1.0;
            d /= float(count);
            Ls[s * N_OUT + o] = d;
            dlogits[b * N_OUT + o] = d;
        }
    }
    barrier();

    // 5. dZ1 = (dlogits·W2ᵀ) * mask_h * (Z1 > 0): nonzero only where A1 > 0, and there mask_h = 1/keep_hidden.
    float scale_h = keep_hidden >= 1.0 ? 1.0 : 1.0 / keep_hidden;
    for (uint o = lid; o < S * H; o += THREADS) {
        uint s = o / H, j = o % H, b = first + s;
        if (b < count) {
            float a = As[s * MAX_H + j];
            float d = 0.0;
            for (uint q = 0u; q < N_OUT; q++) d += Ls[s * N_OUT + q] * params[W2o + j * N_OUT + q];
            A1[b * H + j] = a;
            dZ1[b * H + j] = a > 0.0 ? d * scale_h : 0.0;
        }
    }
}
