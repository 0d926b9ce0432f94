#version 430
// fused_forward_1_xent.comp: the whole forward pass and the backward pass down to the hidden layer, for
//   S samples per work group, in one dispatch: gather the batch from the resident uint8 images through
//   the epoch's index buffer, Z1 = X·W1 + b1, A1 = relu(Z1), logits = A1·W2 + b2, softmax cross-entropy
//   per sample, dlogits = (softmax - onehot) / count, dZ1 = (dlogits·W2ᵀ) ⊙ (Z1 > 0)
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); labels[n_images] uint32; order[n_samples] uint32,
//           the epoch's sample order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           A1[count,H]  dZ1[count,H]  dlogits[count,N_OUT]  losses[n_samples] (one per sample, at its
//           epoch position); this step's batch is count = min(batch_size, n_samples - step*batch_size) samples
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  rows = order[start:start + count]
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255;  y = labels[rows]
//           Z1 = X @ W1 + b1;  A1 = np.maximum(Z1, 0);  logits = A1 @ W2 + b2
//           z = logits - logits.max(1, keepdims=True);  logp = z - np.log(np.exp(z).sum(1, keepdims=True))
//           losses[start:start + count] = -logp[np.arange(count), y]
//           dlogits = (np.exp(logp) - np.eye(N_OUT)[y]) / count;  dZ1 = (dlogits @ W2.T) * (Z1 > 0)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  1 labels uint[n_images] (readonly)
//           2 order uint[n_samples] (readonly)  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)
//           6 A1 float[batch_size*n_hidden] (writeonly)  7 dZ1 float[batch_size*n_hidden] (writeonly)
//           8 dlogits float[batch_size*N_OUT] (writeonly)  9 losses float[n_samples] (writeonly)
//           params is also declared as a vec4 array on binding 3 (Params4): one buffer, 16 bytes a read;
//           bindings 4 and 5 stay free for fused_backward_1_update's optimizer state
// Uniforms  uint n_in (multiple of 4, <= MAX_IN), n_hidden (<= MAX_H), n_samples (length of order), batch_size, step
// Dispatch  local (JT, KS, 1); groups (ceil(min(batch_size, n_samples - step*batch_size)/S), 1, 1)
//           thread (jt, ks) owns 4 neighbouring hidden units (one vec4 of a W1 row: 16-byte loads keep
//           many bytes in flight) for all S samples, summing k over the ks-th slice of the inputs; the
//           KS partial sums are added in shared memory in a fixed order: no atomics, same bits every run
// Requires  JT*KS >= S*N_OUT;  JT*KS <= 1024;  n_in % 4 == 0;  n_in <= MAX_IN;  n_hidden <= MAX_H;
//           n_hidden % 4 == 0 if VEC4
// Changed   first version: one dispatch for what the unfused training step does in four:
//           gather_forward_1_u8 + logits_forward_1_splitk + softmax_xent_1_rowwise + the dZ part of
//           dense_backward_1_relu; no X, Z1 or logits round trip through global memory; W2 is only read
//           here, so dZ1 uses the weights of this step (fused_backward_1_update updates them after).
//           The price: every work group reads all of W1 (it needs whole hidden rows for the logits)
// Checked   relative error < 1e-5 against NumPy (tests/test_fused.py)
// Tunables  4 * (S * (MAX_IN + KS*4*JT + MAX_H + N_OUT)) bytes of shared memory (<= 32 KiB everywhere,
//           48 KiB on NVIDIA); JT*KS <= 1024 threads and >= S*N_OUT (checked below); VEC4 1 needs
//           n_hidden % 4 == 0 (VEC4 0 reads the same four weights one float at a time: same sums, same order)
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

const uint THREADS = JT * KS;
const uint CW = 4u * JT;        // hidden units per pass of the work group
const uint P = S * N_OUT;       // logits per work group
const uint PARTS = THREADS / P; // threads per logit

shared float Xs[S * MAX_IN];        // the S input rows, unpacked to [0, 1]
shared float partial[KS * S * CW];  // partial sums (layer 1), reused for the logits
shared float Zs[S * MAX_H];         // Z1 rows of the S samples
shared float Ls[S * N_OUT];         // logits, then dlogits

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

    // 1. Gather: four pixels per word, straight from the resident training set.
    for (uint w = lid; w < S * words; w += THREADS) {
        uint s = w / words, q = w % words;
        uint pixels4 = 0u;
        if (first + s < count) pixels4 = images[order[start + first + s] * words + q];
        for (uint i = 0u; i < 4u; i++) {
            Xs[s * MAX_IN + 4u * q + i] = float((pixels4 >> (8u * i)) & 255u) / 255.0;
        }
    }
    barrier();

    // 2. Layer 1, Z1 = X·W1 + b1, CW hidden units at a time; the inputs split KS ways.
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
                Zs[s * MAX_H + j0 + jj] = z + params[b1o + j0 + jj];
            }
        }
        barrier();
    }

    // 3. Logits = relu(Z1)·W2 + b2: P dot products of length H, each split over PARTS threads.
    if (lid < P * PARTS) {
        uint p = lid % P, part = lid / P, s = p / N_OUT, o = p % N_OUT;
        float acc = 0.0;
        for (uint j = part; j < H; j += PARTS) acc += max(Zs[s * MAX_H + j], 0.0) * params[W2o + j * N_OUT + o];
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

    // 5. dZ1 = (dlogits·W2ᵀ) ⊙ (Z1 > 0), and A1 for the weight gradients of the next dispatch.
    for (uint o = lid; o < S * H; o += THREADS) {
        uint s = o / H, j = o % H, b = first + s;
        if (b < count) {
            float z = Zs[s * MAX_H + j];
            float d = 0.0;
            for (uint q = 0u; q < N_OUT; q++) d += Ls[s * N_OUT + q] * params[W2o + j * N_OUT + q];
            A1[b * H + j] = max(z, 0.0);
            dZ1[b * H + j] = z > 0.0 ? d : 0.0;
        }
    }
}
