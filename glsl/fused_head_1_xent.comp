#version 430
// fused_head_1_xent.comp: the rest of a training step's per-sample half, from the hidden activations A1
//   that layer 1 (fused_hidden_1_tiled or fused_hidden_2_blocked) wrote: logits = A1·W2 + b2, softmax cross-entropy per sample,
//   dlogits = (softmax - onehot) / count, dZ1 = (dlogits·W2ᵀ) ⊙ (A1 > 0), for S samples per work group;
//   with KSPLIT > 1 it first makes A1 itself from fused_hidden_2_blocked's KSPLIT partial sums
//
// Shapes    labels[n_images] uint32; order[n_samples] uint32, the epoch's sample order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           (this pass reads W2 and b2, and b1 with KSPLIT > 1); A1[count,H] = relu(Z1) of this step's batch
//           (input with KSPLIT 1, output with KSPLIT > 1); parts[KSPLIT, batch_size, H] (KSPLIT > 1: layer 1's
//           partial sums of X·W1, one piece of the inputs each, rows count.. unused)
//           dZ1[count,H]  dlogits[count,N_OUT]  losses[n_samples] (one per sample, at its epoch position);
//           this step's batch is count = min(batch_size, n_samples - step*batch_size) samples
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  y = labels[order[start:start + count]]
//           A1 = np.maximum(parts[0, :count] + parts[1, :count] + ... + b1, 0)   (KSPLIT > 1, added in that order)
//           logits = A1 @ W2 + b2
//           z = logits - logits.max(1, keepdims=True);  logp = z - np.log(np.exp(z).sum(1, keepdims=True))
//           losses[start:start + count] = -logp[np.arange(count), y]
//           dlogits = (np.exp(logp) - np.eye(N_OUT)[y]) / count;  dZ1 = (dlogits @ W2.T) * (A1 > 0)
// Bindings  1 labels uint[n_images] (readonly)  2 order uint[n_samples] (readonly)
//           3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)  6 A1 float[batch_size*n_hidden] (read-write)
//           7 dZ1 float[batch_size*n_hidden] (writeonly)  8 dlogits float[batch_size*N_OUT] (writeonly)
//           9 losses float[n_samples] (writeonly)  12 parts float[min(KSPLIT - 1, 1)*KSPLIT*batch_size*n_hidden] (readonly)
//           KSPLIT 1 reads A1 and leaves parts alone (bind nothing there); KSPLIT > 1 reads parts and writes A1
//           (for the backward pass), keeping its own rows of A1 in shared memory
//           the binding numbers are fused_forward_1_xent's, so a training step binds every buffer once
// Uniforms  uint n_in (W2 starts at params[n_in*H + H]), n_hidden, n_samples (length of order), batch_size, step
// Dispatch  local (LOCAL, 1, 1); groups (ceil(min(batch_size, n_samples - step*batch_size)/S), 1, 1)
//           with KSPLIT > 1 the group's threads first make its S rows of A1, a hidden unit a thread in
//           turn (the pieces added z = 0, 1, ..., then b1, ReLU), into shared memory and A1; then the S*N_OUT logits of a work group are dot products of length H, each split over
//           PARTS = LOCAL/(S*N_OUT) threads (hidden units part, part + PARTS, ...: neighbouring threads read
//           neighbouring weights of W2) and added in shared memory in a fixed order; one thread per sample
//           does the softmax; then one thread per (sample, hidden unit) computes dZ1. No atomics
// Requires  LOCAL >= S*N_OUT;  LOCAL <= 1024;  KSPLIT >= 1;  n_hidden <= MAX_H if KSPLIT > 1
// Changed   first version: steps 3 to 5 of fused_forward_1_xent (logits, softmax cross-entropy, dlogits,
//           dZ1) as a dispatch of their own, reading A1 from global memory: a work group reads W2 and its
//           samples' A1 rows, never W1. With KSPLIT 1, A1 is read here, not written (layer 1 wrote it), and
//           the ReLU mask is A1 > 0, which is Z1 > 0. The price: A1's round trip through global memory
//           (with KSPLIT > 1 the partial sums' instead: KSPLIT reads of each A1 value, and A1 written here)
// Checked   relative error < 1e-5 against NumPy and against fused_forward_1_xent, every output poisoned
//           with NaN first, hidden sizes 37 and 100, a leftover batch, S 1, 2 and 3 (tests/test_fused_tiled.py);
//           with KSPLIT 2 and 3 (S 1 and 2) from pieces that add up to the reference's X·W1, against NumPy,
//           every output poisoned (tests/test_fused_ksplit.py); whole steps with 2 and 3 pieces against
//           KSPLIT 1 and NumPy, the same bits run to run (tests/test_fused_tiled.py)
// Tunables  S*N_OUT <= LOCAL <= 1024 (one thread per logit of the group; checked below);
//           4*(PARTS + 1)*S*N_OUT bytes of shared memory, and 4*S*MAX_H more with KSPLIT > 1 (MAX_H >=
//           n_hidden: the net's). KSPLIT must be fused_hidden_2_blocked's. Defaults: KSPLIT 1; one sample
//           per group, so batch 128 gives
//           a GPU 128 work groups of 256 threads, whatever the hidden size
#ifndef S
#define S 1         // samples per work group
#endif
#ifndef LOCAL
#define LOCAL 256   // threads per work group
#endif
#ifndef KSPLIT
#define KSPLIT 1    // partial sums of layer 1 to add (1: read A1 as it is)
#endif
#ifndef MAX_H
#define MAX_H 1     // KSPLIT > 1: the most hidden units of a row of A1 kept in shared memory
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if LOCAL < S * N_OUT || LOCAL > 1024
#error LOCAL must be >= S*N_OUT (one thread per logit of the group's samples) and <= 1024 (threads of a work group)
#endif
#if KSPLIT < 1
#error KSPLIT must be >= 1 (fused_hidden_2_blocked's pieces of the inputs)
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) readonly buffer Params { float params[]; };
layout(std430, binding = 6) buffer Hidden { float A1[]; };          // written with KSPLIT > 1
layout(std430, binding = 12) readonly buffer Parts { float parts[]; };  // KSPLIT > 1: [KSPLIT][batch_size][H]
layout(std430, binding = 7) writeonly buffer HiddenGrad { float dZ1[]; };
layout(std430, binding = 8) writeonly buffer LogitGrad { float dlogits[]; };
layout(std430, binding = 9) writeonly buffer Losses { float losses[]; };

uniform uint n_in;        // inputs per sample (784): where W2 starts in params
uniform uint n_hidden;    // H
uniform uint n_samples;   // samples in the epoch: length of order
uniform uint batch_size;  // B
uniform uint step;        // which batch of the epoch

const uint P = S * N_OUT;      // logits per work group
const uint PARTS = LOCAL / P;  // threads per logit

shared float partial[PARTS * P];  // each logit's PARTS partial sums
shared float Ls[P];               // logits, then dlogits
#if KSPLIT > 1
shared float As[S * MAX_H];       // this group's rows of A1
#endif

float act(uint s, uint b, uint j, uint H) {  // A1[b, j], b the group's sample s: from shared memory if it is there
#if KSPLIT > 1
    return As[s * H + j];
#else
    return A1[b * H + j];
#endif
}

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint H = n_hidden;
    uint start = step * batch_size;                   // epoch position of the batch's first sample
    uint count = min(batch_size, n_samples - start);  // the last batch holds the leftover samples
    uint first = gl_WorkGroupID.x * S;                // this group's first row within the batch
    uint W2o = n_in * H + H, b2o = W2o + H * N_OUT;   // offsets into params

#if KSPLIT > 1
    // 0. A1 = relu(parts[0] + parts[1] + ... + b1) for this group's rows: kept here, written for the backward.
    for (uint o = lid; o < S * H; o += LOCAL) {
        uint s = o / H, j = o % H, b = first + s;
        if (b < count) {
            float z = parts[b * H + j];
            for (uint piece = 1u; piece < KSPLIT; piece++) z += parts[(piece * batch_size + b) * H + j];
            float a = max(z + params[n_in * H + j], 0.0);
            As[o] = a;
            A1[b * H + j] = a;
        }
    }
    barrier();
#endif

    // 1. Logits = A1·W2 + b2: P dot products of length H, each split over PARTS threads.
    if (lid < P * PARTS) {
        uint p = lid % P, part = lid / P, s = p / N_OUT, o = p % N_OUT, b = first + s;
        float acc = 0.0;
        if (b < count) {
            for (uint j = part; j < H; j += PARTS) acc += act(s, b, j, H) * params[W2o + j * N_OUT + o];
        }
        partial[part * P + p] = acc;
    }
    barrier();
    if (lid < P) {
        float z = 0.0;
        for (uint q = 0u; q < PARTS; q++) z += partial[q * P + lid];  // fixed order
        Ls[lid] = z + params[b2o + lid % N_OUT];
    }
    barrier();

    // 2. Softmax cross-entropy, one thread per sample: loss and dlogits = (p - onehot) / count.
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

    // 3. dZ1 = (dlogits·W2ᵀ) ⊙ (A1 > 0): neighbouring threads write neighbouring hidden units.
    for (uint o = lid; o < S * H; o += LOCAL) {
        uint s = o / H, j = o % H, b = first + s;
        if (b < count) {
            float d = 0.0;
            for (uint q = 0u; q < N_OUT; q++) d += Ls[s * N_OUT + q] * params[W2o + j * N_OUT + q];
            dZ1[b * H + j] = act(s, b, j, H) > 0.0 ? d : 0.0;
        }
    }
}
