#version 430
// fused_hidden_2_blocked.comp: the first layer of a training step for the whole batch, A1 = relu(X·W1 + b1),
//   with X gathered from the resident uint8 images through the epoch's index buffer, register-blocked:
//   each thread keeps a 4×4 block of outputs (4 samples × 4 hidden units), so every value it reads from
//   shared memory serves 4 multiply-adds, and both operands of the product are staged in shared memory;
//   with KSPLIT > 1 the inputs are split among KSPLIT work groups, which write partial sums for
//   fused_head_1_xent to add (so that the small product fills the GPU)
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); order[n_samples] uint32, the epoch's sample
//           order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           (this pass reads W1, and b1 with KSPLIT 1); A1[count,H] (KSPLIT 1) or parts[KSPLIT, batch_size, H]
//           (KSPLIT > 1, rows count.. unwritten), where this step's batch is
//           count = min(batch_size, n_samples - step*batch_size) samples
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  rows = order[start:start + count]
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255
//           A1 = np.maximum(X @ W1 + b1, 0)                                   (KSPLIT 1)
//           stage, stages = KS*BK, ceil(n_in/(KS*BK));  per = ceil(stages/KSPLIT)     (KSPLIT > 1:)
//           for z in range(KSPLIT): ks = slice(min(z*per*stage, n_in), min((z + 1)*per*stage, n_in))
//               parts[z, :count] = X[:, ks] @ W1[ks]          (no bias, no ReLU; an empty piece: zeros)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  2 order uint[n_samples] (readonly)
//           3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)  6 A1 float[batch_size*n_hidden] (writeonly)
//           12 parts float[min(KSPLIT - 1, 1)*KSPLIT*batch_size*n_hidden] (writeonly)
//           KSPLIT 1 writes A1 and leaves parts alone (bind nothing there); KSPLIT > 1 writes parts, not A1.
//           params is also declared as a vec4 array on binding 3 (Params4): one buffer, 16 bytes a read;
//           the binding numbers are fused_forward_1_xent's, so a training step binds every buffer once
// Uniforms  uint n_in (multiple of 4), n_hidden, n_samples (length of order), batch_size, step
// Dispatch  local (TQ, RQ, KS); groups (ceil(n_hidden/(4*TQ)), ceil(min(batch_size, n_samples - step*batch_size)/(4*RQ)), KSPLIT)
//           group (h, r, z) owns BN = 4*TQ hidden units h*BN .. h*BN+BN-1 of BM = 4*RQ batch rows
//           r*BM .. r*BM+BM-1, and piece z of the inputs (all of them with KSPLIT 1). The inputs go by in stages of KS*BK: all threads copy a stage's BM image
//           rows (unpacked to floats) and KS*BK rows of W1's BN columns into shared memory, then slice z
//           (local z) multiplies its BK of them. Thread (x, y, z) owns hidden units 4x .. 4x+3 of the
//           group's rows y, y + RQ, y + 2RQ, y + 3RQ: 16 running sums. While a stage is multiplied, the
//           next one's loads are already in flight (held in registers). At the end slice 0 adds the other
//           slices' partial sums of its outputs, from shared memory, in a fixed order: the same bits every run
//           (KSPLIT > 1: the head adds the pieces, z = 0, 1, ..., in a fixed order too)
// Requires  BK % 4 == 0;  TQ*RQ*KS <= 1024;  KSPLIT >= 1;  n_in % 4 == 0;  n_hidden % 4 == 0 if VEC4
// Changed   vs fused_hidden_1_tiled: W1 is staged in shared memory too (version 1 read it from global
//           memory into registers, a thread's own 4 columns, one stage at a time), and a thread owns 4
//           samples as well as 4 hidden units, so a shared-memory read feeds 4 multiply-adds instead of 1;
//           the loads of the next stage overlap the arithmetic of this one; KSPLIT splits the inputs among
//           work groups (version 1 had every group sum all of them)
// Checked   relative error < 1e-5 against NumPy, A1 poisoned with NaN first, hidden sizes that are not
//           multiples of BN (or of 4), a leftover batch, n_in 20 and 784 (tests/test_fused_tiled.py);
//           KSPLIT 2, 3 and 20 (more pieces than stages: empty pieces), each piece within 1e-5 of the
//           whole product's largest value, parts and A1 poisoned with NaN first (tests/test_fused_ksplit.py)
// Tunables  BK a multiple of 4, TQ*RQ*KS <= 1024 threads (checked below); with BM = 4*RQ, BN = 4*TQ,
//           16 * max(BM*(KS*BK/4 + 1) + KS*BK*TQ, (KS-1)*BM*TQ) + 4*BM bytes of shared memory:
//           <= 32 KiB everywhere, 48 KiB on NVIDIA. VEC4 1 needs n_hidden % 4 == 0 (VEC4 0 reads the same
//           weights one float at a time: same sums, same order). KSPLIT >= 1 pieces of the inputs (a piece
//           left without a stage writes zeros). Defaults: 256 threads and 17 KiB, KSPLIT 1; at batch 128
//           a GPU of 132 SMs gets 25 × 4 = 100 work groups for 800 hidden units, KSPLIT times that with pieces
#ifndef RQ
#define RQ 8        // threads across the batch rows (local y), 4 rows each: BM = 4*RQ rows per work group
#endif
#ifndef TQ
#define TQ 8        // threads across the hidden units (local x), 4 units each: BN = 4*TQ units per work group
#endif
#ifndef BK
#define BK 16       // inputs a slice multiplies per stage
#endif
#ifndef KS
#define KS 4        // slices of a stage (local z), added in shared memory in a fixed order at the end
#endif
#ifndef KSPLIT
#define KSPLIT 1    // work groups along the inputs (groups' z), each summing its piece of the stages
#endif
#ifndef VEC4
#define VEC4 1
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if BK % 4 != 0
#error BK must be a multiple of 4 (whole packed words of 4 pixels)
#endif
#if TQ * RQ * KS > 1024
#error TQ*RQ*KS must be <= 1024 (threads of a work group)
#endif
#if KSPLIT < 1
#error KSPLIT must be >= 1 (pieces of the inputs)
#endif

layout(local_size_x = TQ, local_size_y = RQ, local_size_z = KS) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) readonly buffer Params { float params[]; };
layout(std430, binding = 3) readonly buffer Params4 { vec4 params4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 6) writeonly buffer Hidden { float A1[]; };
layout(std430, binding = 12) writeonly buffer Parts { float parts[]; };  // KSPLIT > 1: [KSPLIT][batch_size][H]

uniform uint n_in;        // inputs per sample (784)
uniform uint n_hidden;    // H
uniform uint n_samples;   // samples in the epoch: length of order
uniform uint batch_size;  // B
uniform uint step;        // which batch of the epoch

const uint BM = 4u * RQ, BN = 4u * TQ;     // batch rows and hidden units of a work group
const uint THREADS = TQ * RQ * KS;
const uint WORDS = KS * BK / 4u;            // packed words (4 inputs each) of an image row in one stage
const uint XSTRIDE = WORDS + 1u;            // a staged row's length in vec4s: one spare, so the 4 rows a
                                            //   warp reads at once fall in different banks
const uint XS = BM * XSTRIDE;               // staged rows: [BM][XSTRIDE] vec4, 4 inputs each
const uint WS = KS * BK * TQ;               // staged W1: [KS*BK][TQ] vec4, 4 hidden units each
const uint X_LOADS = (BM * WORDS + THREADS - 1u) / THREADS;    // words a thread loads per stage
const uint W_LOADS = (KS * BK * TQ + THREADS - 1u) / THREADS;  // vec4s of W1 a thread loads per stage
const uint SUMS = (KS - 1u) * BM * TQ;      // slices 1 .. KS-1's partial sums at the end: [KS-1][BM][TQ] vec4
const uint NO_ROW = 0xFFFFFFFFu;            // base[] of a row past the batch

shared vec4 tile[max(XS + WS, SUMS)];  // a stage: rows at 0, W1 at XS; after the last stage, the partial sums
shared uint base[BM];                  // where each row's image starts in images[] (NO_ROW past the batch)

uint lid, H, col0;  // this thread's index in the group, n_hidden, the group's first hidden unit (set in main)
uint xw[X_LOADS];   // the next stage's loads, in flight while this one is multiplied: packed image words ...
vec4 ww[W_LOADS];   // ... and W1 vec4s

vec4 weights(uint k, uint j) {  // W1[k, j:j+4]; past column H-1 zeros (VEC4 1 needs H % 4 == 0)
#if VEC4
    return params4[(k * H + j) / 4u];
#else
    uint at = k * H + j;
    return vec4(params[at], j + 1u < H ? params[at + 1u] : 0.0,
                j + 2u < H ? params[at + 2u] : 0.0, j + 3u < H ? params[at + 3u] : 0.0);
#endif
}

// Stage s's loads into registers: word q of a staged row is inputs 4q .. 4q+3 of the stage, past n_in zeros.
void load(uint s) {
    uint words = n_in / 4u;
    for (uint i = 0u; i < X_LOADS; i++) {
        uint w = lid + i * THREADS, r = w / WORDS, q = s * WORDS + w % WORDS;
        xw[i] = (w < BM * WORDS && base[r] != NO_ROW && q < words) ? images[base[r] + q] : 0u;
    }
    for (uint i = 0u; i < W_LOADS; i++) {
        uint w = lid + i * THREADS, k = s * KS * BK + w / TQ, j = col0 + 4u * (w % TQ);
        ww[i] = (w < WS && k < n_in && j < H) ? weights(k, j) : vec4(0.0);
    }
}

// The loaded stage from registers into shared memory, the pixels unpacked to [0, 1].
void store() {
    for (uint i = 0u; i < X_LOADS; i++) {
        uint w = lid + i * THREADS, p = xw[i];
        if (w < BM * WORDS)
            tile[(w / WORDS) * XSTRIDE + w % WORDS] =
                vec4(float(p & 255u), float((p >> 8u) & 255u), float((p >> 16u) & 255u), float(p >> 24u)) / 255.0;
    }
    for (uint i = 0u; i < W_LOADS; i++) {
        uint w = lid + i * THREADS;
        if (w < WS) tile[XS + w] = ww[i];
    }
}

void main() {
    lid = gl_LocalInvocationIndex;
    H = n_hidden;
    col0 = gl_WorkGroupID.x * BN;
    uint x = gl_LocalInvocationID.x, y = gl_LocalInvocationID.y, z = gl_LocalInvocationID.z;
    uint start = step * batch_size;                   // epoch position of the batch's first sample
    uint count = min(batch_size, n_samples - start);  // the last batch holds the leftover samples
    uint row0 = gl_WorkGroupID.y * BM;

    for (uint r = lid; r < BM; r += THREADS)
        base[r] = row0 + r < count ? order[start + row0 + r] * (n_in / 4u) : NO_ROW;
    barrier();

    vec4 acc[4];  // acc[i]: row y + i*RQ, hidden units col0 + 4x .. 4x+3
    for (uint i = 0u; i < 4u; i++) acc[i] = vec4(0.0);
    uint stages = (n_in + KS * BK - 1u) / (KS * BK);
    uint per = (stages + KSPLIT - 1u) / KSPLIT;                  // stages of a piece
    uint first = min(gl_WorkGroupID.z * per, stages), last = min(first + per, stages);  // this group's piece
    if (first < last) {
        load(first);
        store();
    }
    barrier();
    for (uint s = first; s < last; s++) {
        if (s + 1u < last) load(s + 1u);    // in flight while this stage is multiplied
        for (uint qq = 0u; qq < BK / 4u; qq++) {
            uint q = z * (BK / 4u) + qq;    // this slice's word of the stage: inputs 4q .. 4q+3
            vec4 w0 = tile[XS + (4u * q) * TQ + x], w1 = tile[XS + (4u * q + 1u) * TQ + x];
            vec4 w2 = tile[XS + (4u * q + 2u) * TQ + x], w3 = tile[XS + (4u * q + 3u) * TQ + x];
            for (uint i = 0u; i < 4u; i++) {
                vec4 a = tile[(y + i * RQ) * XSTRIDE + q];  // 4 inputs of row y + i*RQ
                acc[i] += a.x * w0 + a.y * w1 + a.z * w2 + a.w * w3;
            }
        }
        barrier();  // every slice is done with this stage
        if (s + 1u < last) {
            store();
            barrier();
        }
    }

    // The KS partial sums of each output in a fixed order: slices 1 .. KS-1 leave theirs in shared memory,
    // slice 0 adds them to its own, + b1, ReLU, and writes 4 neighbouring hidden units of each of its rows
    // (KSPLIT > 1: the piece's sums as they are, to parts).
    if (z > 0u)
        for (uint i = 0u; i < 4u; i++) tile[((z - 1u) * BM + y + i * RQ) * TQ + x] = acc[i];
    barrier();
    if (z > 0u) return;
    uint j = col0 + 4u * x;
    for (uint i = 0u; i < 4u; i++) {
        uint r = y + i * RQ, b = row0 + r;
        if (b >= count || j >= H) continue;
        vec4 sum = acc[i];
        for (uint slice = 1u; slice < KS; slice++) sum += tile[((slice - 1u) * BM + r) * TQ + x];
#if KSPLIT > 1
        uint at = (gl_WorkGroupID.z * batch_size + b) * H + j;
        for (uint c = 0u; c < 4u && j + c < H; c++) parts[at + c] = sum[c];
#else
        for (uint c = 0u; c < 4u && j + c < H; c++) A1[b * H + j + c] = max(sum[c] + params[n_in * H + j + c], 0.0);
#endif
    }
}
