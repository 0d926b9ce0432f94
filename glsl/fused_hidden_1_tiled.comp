#version 430
// fused_hidden_1_tiled.comp: the first layer of a training step for the whole batch, A1 = relu(X·W1 + b1),
//   with X gathered from the resident uint8 images through the epoch's index buffer, as a tiled matrix
//   product: a work group computes RB batch rows × TN = 4*TQ hidden units, so RB samples share every
//   weight of W1 it reads (fused_head_1_xent does the rest of the step's forward half from A1)
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); order[n_samples] uint32, the epoch's sample
//           order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           (this pass reads W1 and b1); A1[count,H], where this step's batch is
//           count = min(batch_size, n_samples - step*batch_size) samples
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  rows = order[start:start + count]
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255
//           A1 = np.maximum(X @ W1 + b1, 0)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  2 order uint[n_samples] (readonly)
//           3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)  6 A1 float[batch_size*n_hidden] (writeonly)
//           params is also declared as a vec4 array on binding 3 (Params4): one buffer, 16 bytes a read;
//           the binding numbers are fused_forward_1_xent's, so a training step binds every buffer once
// Uniforms  uint n_in (multiple of 4, <= MAX_IN), n_hidden, n_samples (length of order), batch_size, step
// Dispatch  local (TQ, KS, 1); groups (ceil(n_hidden/(4*TQ)), ceil(min(batch_size, n_samples - step*batch_size)/RB), 1)
//           group (h, r) owns hidden units h*TN .. h*TN+TN-1 of batch rows r*RB .. r*RB+RB-1. It copies its RB
//           images into shared memory once, unpacked to floats; thread (x, y) owns 4 neighbouring hidden
//           units (one vec4 of a W1 row, read into registers: no other thread of the group needs it) for all
//           RB rows, RB*4 running sums over every KS-th packed word (4 inputs) from word y on. The KS partial
//           sums of each output are then added in shared memory in a fixed order: the same bits every run
// Requires  TQ*KS <= 1024;  MAX_IN % 4 == 0;  n_in % 4 == 0;  n_in <= MAX_IN;  n_hidden % 4 == 0 if VEC4
// Changed   first version: the layer-1 part of fused_forward_1_xent as a dispatch of its own. A work group
//           no longer needs whole hidden rows (the logits are the next dispatch's), so it reads a TN-column
//           tile of W1 and shares it across RB samples: a step reads W1 ceil(count/RB) times instead of
//           count/S times, in ceil(H/TN)*ceil(count/RB) work groups. The price: A1 goes through global
//           memory, and a step has three dispatches
// Checked   relative error < 1e-5 against NumPy, A1 poisoned with NaN first, hidden sizes that are not
//           multiples of TN, a leftover batch, n_in 20 and 784 (tests/test_fused_tiled.py)
// Tunables  TQ*KS <= 1024 threads (checked below); 4*max(RB*MAX_IN, KS*RB*4*TQ) bytes of shared memory (the
//           staged rows, then the partial sums, in one array): <= 32 KiB everywhere, 48 KiB on NVIDIA.
//           VEC4 1 needs n_hidden % 4 == 0 (VEC4 0 reads the same four weights one float at a time: same sums,
//           same order). Defaults: 128 threads and 25 KiB; at batch 128 a GPU of 132 SMs gets
//           25 × 16 = 400 work groups for 800 hidden units, 4 × 16 = 64 for 128; W1 is read 16 times a step
#ifndef RB
#define RB 8        // batch rows per work group: each thread keeps RB*4 running sums
#endif
#ifndef TQ
#define TQ 8        // threads across the hidden units (local x), 4 units each: TN = 4*TQ per work group
#endif
#ifndef KS
#define KS 16       // slices of the inputs (local y), added in shared memory in a fixed order
#endif
#ifndef MAX_IN
#define MAX_IN 784  // inputs per sample the shared rows hold: >= n_in, a multiple of 4
#endif
#ifndef VEC4
#define VEC4 1
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if TQ * KS > 1024
#error TQ*KS must be <= 1024 (threads of a work group)
#endif
#if MAX_IN % 4 != 0
#error MAX_IN must be a multiple of 4 (whole packed words of 4 pixels)
#endif
// The shared array holds first the RB input rows (MAX_IN/4 vec4 each), then the KS*RB*TQ partial sums.
#if RB * MAX_IN / 4 >= KS * RB * TQ
#define TILE4 (RB * MAX_IN / 4)
#else
#define TILE4 (KS * RB * TQ)
#endif

layout(local_size_x = TQ, local_size_y = KS, local_size_z = 1) in;

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

const uint TN = 4u * TQ;        // hidden units a work group owns
const uint THREADS = TQ * KS;

shared vec4 tile[TILE4];  // [RB][words] input rows (a vec4 = one packed word's 4 pixels), later [KS][RB][TQ] sums

vec4 weights(uint k, uint j, uint H) {  // W1[k, j:j+4]; past column H-1 zeros (VEC4 0 only: 1 needs H % 4 == 0)
#if VEC4
    return params4[(k * H + j) / 4u];  // threads next in x read the next 16 bytes of the row
#else
    uint at = k * H + j;
    return vec4(params[at], j + 1u < H ? params[at + 1u] : 0.0,
                j + 2u < H ? params[at + 2u] : 0.0, j + 3u < H ? params[at + 3u] : 0.0);
#endif
}

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint x = gl_LocalInvocationID.x, y = gl_LocalInvocationID.y;
    uint H = n_hidden;
    uint words = n_in / 4u;
    uint start = step * batch_size;                   // epoch position of the batch's first sample
    uint count = min(batch_size, n_samples - start);  // the last batch holds the leftover samples
    uint row0 = gl_WorkGroupID.y * RB;                // this group's first row within the batch
    uint col0 = gl_WorkGroupID.x * TN;                // this group's first hidden unit
    uint j = col0 + 4u * x;                           // this thread's first hidden unit

    // 1. Gather: the RB images, four pixels a word, unpacked to [0, 1]; rows past the batch are zeros.
    for (uint w = lid; w < RB * words; w += THREADS) {
        uint r = w / words, q = w % words;
        uint pixels4 = 0u;
        if (row0 + r < count) pixels4 = images[order[start + row0 + r] * words + q];
        tile[w] = vec4(float(pixels4 & 255u), float((pixels4 >> 8u) & 255u),
                       float((pixels4 >> 16u) & 255u), float(pixels4 >> 24u)) / 255.0;
    }
    barrier();

    // 2. RB × 4 running sums over this thread's slice of the inputs: words y, y + KS, y + 2*KS, ...
    vec4 acc[RB];
    for (uint r = 0u; r < RB; r++) acc[r] = vec4(0.0);
    if (j < H) {
        for (uint q = y; q < words; q += KS) {
            uint k = 4u * q;
            vec4 w0 = weights(k, j, H), w1 = weights(k + 1u, j, H);
            vec4 w2 = weights(k + 2u, j, H), w3 = weights(k + 3u, j, H);
            for (uint r = 0u; r < RB; r++) {
                vec4 xq = tile[r * words + q];  // the same word for every thread of a slice: a broadcast
                acc[r] += xq.x * w0 + xq.y * w1 + xq.z * w2 + xq.w * w3;
            }
        }
    }
    barrier();  // every thread is done with the rows: the array takes the partial sums now
    for (uint r = 0u; r < RB; r++) tile[(y * RB + r) * TQ + x] = acc[r];
    barrier();

    // 3. Each output: its KS partial sums in a fixed order, + b1, ReLU. Neighbouring threads write
    //    neighbouring hidden units of a row.
    for (uint o = lid; o < RB * TN; o += THREADS) {
        uint r = o / TN, jj = o % TN, b = row0 + r, col = col0 + jj;
        if (b < count && col < H) {
            float z = 0.0;
            for (uint s = 0u; s < KS; s++) z += tile[(s * RB + r) * TQ + jj / 4u][jj % 4u];
            A1[b * H + col] = max(z + params[n_in * H + col], 0.0);
        }
    }
}
