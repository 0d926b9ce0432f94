#version 430
// train_1_persistent.comp: many training steps of the n_in-H-10 MLP in one dispatch (a persistent kernel):
//   work group g owns hidden units [g*COLS, g*COLS + COLS): their W1 columns, b1 entries and W2 rows.
//   Global phase q = 3*step + p runs, for q in [phase_first, phase_end):
//     p 0  layer 1 for the owned units, every sample of the batch: A1[:, own] = relu(X·W1[:, own] + b1[own])
//     p 1  the head, a sample at a time per group: logits, softmax cross-entropy, dlogits, dZ1
//     p 2  the owned parameters' gradients, summed over the batch, then the optimizer's update in place
//   Phase 1 needs every unit's A1 and phase 2 every sample's dZ1: a grid barrier before each. Phase 2 of a
//   step and phase 0 of the next touch only the group's own units, so a work-group barrier joins them
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4; labels[n_images] uint32; order[n_samples] uint32, each < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden,
//           so [W1; b1] is one (n_in+1)×H matrix and [W2; b2] one (H+1)×N_OUT; state_m the same length
//           A1[count,H]  dZ1[count,H]  dlogits[count,N_OUT]: scratch of the step in flight, as fused_forward_1_xent
//           writes them; losses[n_samples], one per sample at its epoch position. Step s's batch is
//           count = min(batch_size, n_samples - s*batch_size) samples from epoch position s*batch_size.
//           sync[4] uint, zero at the start of an epoch: [0] arrivals at grid barriers so far (G a barrier),
//           [1] flags (1: a wait gave up), [2] the most polls one wait took, [3] unused
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     for each step s with q in range: start = s*batch_size;  rows = order[start:start + count]
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255;  y = labels[rows]
//           A1 = relu(X @ W1 + b1);  logits = A1 @ W2 + b2;  z = logits - logits.max(1, keepdims=True)
//           logp = z - log(exp(z).sum(1, keepdims=True));  losses[start:start + count] = -logp[range(count), y]
//           dlogits = (exp(logp) - eye(N_OUT)[y]) / count;  dZ1 = (dlogits @ W2.T) * (A1 > 0)
//           grads = {W1: X.T @ dZ1, b1: dZ1.sum(0), W2: A1.T @ dlogits, b2: dlogits.sum(0)}, then per parameter
//           OPTIMIZER 0: p -= lr * g;   1: m = mu * m + g;  p -= lr * m
// Bindings  0 images uint[n_images*n_in/4] (readonly)  1 labels uint[n_images] (readonly)
//           2 order uint[n_samples] (readonly)  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (read-write)
//           4 state_m float[OPTIMIZER*((n_in + 1 + N_OUT)*n_hidden + N_OUT)] (read-write)
//           6 A1 float[batch_size*n_hidden] (read-write)  7 dZ1 float[batch_size*n_hidden] (read-write)
//           8 dlogits float[batch_size*N_OUT] (read-write)  9 losses float[n_samples] (writeonly)
//           14 sync uint[4] (read-write)
//           the binding numbers are the fused shaders' (state_m is unused by SGD: any buffer will do there)
// Uniforms  uint n_in, n_hidden, n_samples (length of order), batch_size, phase_first, phase_end; float lr
//           float mu   (OPTIMIZER 1)
//           the dispatch runs global phases q = 3*step + p from phase_first up to phase_end - 1
// Dispatch  local (THREADS, 1, 1); groups (ceil(n_hidden/COLS), 1, 1)
//           with several steps in one dispatch, correct only when every work group is resident at once
//           (a grid barrier waits for all of them; notebook 09 says why no API promises it). A wait gives up
//           after SPIN_LIMIT polls, sets sync[1] and stops every group: no hang. A dispatch of one phase
//           crosses no grid barrier and is correct for any group count: the fallback, three dispatches a step
// Requires  1 <= COLS <= 8;  THREADS <= 1024;  (THREADS & (THREADS - 1)) == 0;  THREADS % KSPLIT == 0;
//           PIX == 1 or PIX == 2 or PIX == 4;  MAX_IN % 16 == 0;  0 <= OPTIMIZER <= 1;  n_in % 4 == 0;
//           n_in <= MAX_IN;  batch_size <= MAX_B
// Changed   first version: fused_forward_1_xent and fused_backward_1_update made phases of one kernel, with
//           the work split by hidden unit: a group computes layer 1 only for its own units (it reads its
//           W1 columns, never all of W1) and updates exactly the parameters it read, so two grid barriers a
//           step suffice, and Python issues one dispatch per check instead of two a step
// Checked   relative error < 1e-5 against NumPy for SGD and momentum, A1/dZ1/dlogits/losses poisoned with
//           NaN first, hidden sizes 1, 37 and 130, leftover batches; one dispatch of many steps gives the
//           same bits as three dispatches a step (tests/test_persistent.py, on llvmpipe and an NVIDIA GPU)
// Tunables  COLS hidden units a group (1..8); THREADS threads a group, a power of two >= MAX_IN/4 + 2 + COLS;
//           KSPLIT threads share a sample's row in phase 0; a phase-2 thread owns PIX inputs (1, 2, 4) of W1;
//           U image reads a thread keeps in flight; MAX_B >= batch_size; MAX_IN >= n_in, a multiple of 16.
//           Shared memory: 4*((MAX_IN + 1)*COLS + MAX_B*(1 + 2*COLS + N_OUT) + THREADS*max(COLS, N_OUT) + 1)
//           bytes. OPTIMIZER: 0 SGD, 1 momentum
#ifndef COLS
#define COLS 1
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef KSPLIT
#define KSPLIT 2
#endif
#ifndef PIX
#define PIX 4
#endif
#ifndef U
#define U 8
#endif
#ifndef MAX_B
#define MAX_B 128
#endif
#ifndef MAX_IN
#define MAX_IN 784
#endif
#ifndef OPTIMIZER
#define OPTIMIZER 0
#endif
#ifndef SPIN_LIMIT
#define SPIN_LIMIT 1000000
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if COLS < 1 || COLS > 8
#error COLS must be 1..8 (a thread keeps PIX*COLS gradient sums in registers)
#endif
#if THREADS > 1024 || (THREADS & (THREADS - 1)) != 0 || THREADS % KSPLIT != 0
#error THREADS must be a power of two <= 1024, and a multiple of KSPLIT
#endif
#if PIX != 1 && PIX != 2 && PIX != 4
#error PIX must be 1, 2 or 4 (pixels of a packed word a phase-2 thread owns)
#endif
#if MAX_IN % 16 != 0 || OPTIMIZER < 0 || OPTIMIZER > 1
#error MAX_IN must be a multiple of 16; OPTIMIZER 0 (SGD) or 1 (momentum)
#endif

#extension GL_KHR_shader_subgroup_arithmetic : enable  // where the driver has it (not llvmpipe): phase 1's sums

layout(local_size_x = THREADS, local_size_y = 1, local_size_z = 1) in;

// coherent: these buffers are written by other work groups during the dispatch, so reads go to memory all
// groups share, not to an SM's private cache. The images, labels and order never change in a dispatch.
layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 0) readonly buffer Images4 { uvec4 images4[]; };  // the same, 16 pixels a read
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) coherent buffer Params { float params[]; };
layout(std430, binding = 4) coherent buffer StateM { float state_m[]; };
layout(std430, binding = 6) coherent buffer Hidden { float A1[]; };
layout(std430, binding = 7) coherent buffer HiddenGrad { float dZ1[]; };
layout(std430, binding = 8) coherent buffer LogitGrad { float dlogits[]; };
layout(std430, binding = 9) writeonly buffer Losses { float losses[]; };
// volatile as well: every poll of the barrier's counter really reads memory
layout(std430, binding = 14) coherent volatile buffer Sync { uint sync[]; };

uniform uint n_in;         // inputs per sample (784)
uniform uint n_hidden;     // H
uniform uint n_samples;    // samples in the epoch: length of order
uniform uint batch_size;   // B
uniform uint phase_first;  // first global phase of this dispatch: 3*step + p
uniform uint phase_end;    // one past the last
uniform float lr;
#if OPTIMIZER == 1
uniform float mu;
#endif

const uint ROWS = THREADS / KSPLIT;                     // samples a phase-0 pass covers
const uint RED = COLS > N_OUT ? COLS : N_OUT;           // sums a thread hands to a reduction
const uint ACC = PIX * COLS > N_OUT ? PIX * COLS : N_OUT;  // sums a phase-2 thread keeps

shared float Wc[(MAX_IN + 1) * COLS];  // the group's columns of [W1; b1] for this step
shared uint rowStart[MAX_B];           // where each sample of the batch starts in `images` (words)
shared float red[THREADS * RED];       // phase 0 and 1: partial sums, added in a fixed order
shared float dZs[MAX_B * COLS];        // phase 2: the batch's dZ1 for the group's units
shared float As[MAX_B * COLS];         // phase 2: the batch's A1 for the group's units
shared float Ls[MAX_B * N_OUT];        // phase 1: a sample's logits, then dlogits; phase 2: the batch's dlogits
shared uint stop;                      // the barrier flags, read by one thread for its whole group

// Every invocation of every work group calls this at the same point. It returns once all groups of the
// dispatch have arrived, or false when a wait gave up (then every group stops). sync[0] only grows: the
// groups that arrive at one barrier get the values k*G .. k*G + G-1 from their atomicAdd (no group can
// reach the next barrier before all have reached this one), so each waits until it reads (k+1)*G.
bool grid_barrier() {
    memoryBarrierBuffer();  // this invocation's writes are visible to every group ...
    barrier();              // ... for every invocation of the group, before the group arrives
    if (gl_LocalInvocationIndex == 0u) {
        uint groups = gl_NumWorkGroups.x, polls = 0u;
        uint target = (atomicAdd(sync[0], 1u) / groups + 1u) * groups;
        while (sync[0] < target && sync[1] == 0u && polls < SPIN_LIMIT) polls++;
        if (sync[0] < target) atomicOr(sync[1], 1u);  // gave up (or a driver cut the loop short: llvmpipe
                                                      // ends any loop after 65535 iterations)
        if (polls > sync[2]) atomicMax(sync[2], polls);
        stop = sync[1];
    }
    barrier();
    memoryBarrierBuffer();
    return stop == 0u;
}

vec4 pixels(uint word) { return unpackUnorm4x8(word); }  // 4 bytes -> 4 floats byte/255 (little-endian)

// Phase 0: A1[b, j] = relu(sum_k X[b, k] W1[k, j] + b1[j]) for every sample b, j the group's units.
// The group's columns of W1 and b1 go to shared memory; thread t takes sample t/KSPLIT of a pass and reads
// its image 16 pixels at a time, quads t%KSPLIT, t%KSPLIT + KSPLIT, ...; the KSPLIT parts are then added.
void layer1(uint start, uint count, uint j0, uint cols) {
    uint t = gl_LocalInvocationIndex, r = t / KSPLIT, part = t % KSPLIT;
    uint H = n_hidden, words = n_in / 4u, quads = n_in / 16u;
    for (uint i = t; i < (n_in + 1u) * COLS; i += THREADS) {  // row n_in of [W1; b1] is b1
        uint k = i / COLS, c = i % COLS;
        Wc[i] = c < cols ? params[k * H + j0 + c] : 0.0;
    }
    for (uint b = t; b < count; b += THREADS) rowStart[b] = order[start + b] * words;
    barrier();
    for (uint b0 = 0u; b0 < count; b0 += ROWS) {
        float acc[COLS];
        for (uint c = 0u; c < COLS; c++) acc[c] = 0.0;
        uint b = b0 + r;
        if (b < count) {
            uint row = rowStart[b] / 4u;  // in uvec4s: 16 pixels each (n_in is a multiple of 16)
            for (uint q0 = part; q0 < quads; q0 += U * KSPLIT) {
                uvec4 w4[U];              // U reads in flight before the first is used
                for (uint u = 0u; u < U; u++) {
                    uint q = q0 + u * KSPLIT;
                    w4[u] = q < quads ? images4[row + q] : uvec4(0u);
                }
                for (uint u = 0u; u < U; u++) {
                    uint k0 = 16u * (q0 + u * KSPLIT);
                    for (uint i = 0u; i < 4u; i++) {
                        vec4 x = pixels(w4[u][i]);
                        uint k = min(k0 + 4u * i, n_in - 4u);  // past the row: x is 0, any k will do
                        for (uint c = 0u; c < COLS; c++)
                            acc[c] += x.x * Wc[k * COLS + c] + x.y * Wc[(k + 1u) * COLS + c]
                                    + x.z * Wc[(k + 2u) * COLS + c] + x.w * Wc[(k + 3u) * COLS + c];
                    }
                }
            }
        }
        for (uint c = 0u; c < COLS; c++) red[t * COLS + c] = acc[c];
        barrier();
        for (uint i = t; i < ROWS * COLS; i += THREADS) {  // per (sample, unit): the parts in a fixed order
            uint rr = i / COLS, c = i % COLS, bb = b0 + rr;
            if (bb < count && c < cols) {
                float z = 0.0;
                for (uint q = 0u; q < KSPLIT; q++) z += red[(rr * KSPLIT + q) * COLS + c];
                A1[bb * H + j0 + c] = max(z + Wc[n_in * COLS + c], 0.0);
            }
        }
        barrier();
    }
}

// Phase 1: for samples b = g, g + groups, ...: logits = A1[b]·W2 + b2, the loss, dlogits, then dZ1[b].
void head(uint start, uint count) {
    uint t = gl_LocalInvocationIndex, H = n_hidden;
    uint W2o = n_in * H + H, b2o = W2o + H * N_OUT;
    for (uint b = gl_WorkGroupID.x; b < count; b += gl_NumWorkGroups.x) {
        float acc[N_OUT];
        for (uint o = 0u; o < N_OUT; o++) acc[o] = 0.0;
        for (uint j = t; j < H; j += THREADS) {
            float a = A1[b * H + j];
            for (uint o = 0u; o < N_OUT; o++) acc[o] += a * params[W2o + j * N_OUT + o];
        }
#ifdef GL_KHR_shader_subgroup_arithmetic
        // each subgroup adds its lanes' sums in registers (subgroupAdd), then the subgroups' totals are
        // added in shared memory in subgroup order: one barrier instead of a tree's log2(THREADS)
        for (uint o = 0u; o < N_OUT; o++) acc[o] = subgroupAdd(acc[o]);
        if (subgroupElect())
            for (uint o = 0u; o < N_OUT; o++) red[o * THREADS + gl_SubgroupID] = acc[o];
        uint parts = gl_NumSubgroups;
#else
        for (uint o = 0u; o < N_OUT; o++) red[o * THREADS + t] = acc[o];
        for (uint half_ = THREADS / 2u; half_ > 1u; half_ /= 2u) {  // a tree, the same order every run
            barrier();
            if (t < half_)
                for (uint o = 0u; o < N_OUT; o++) red[o * THREADS + t] += red[o * THREADS + t + half_];
        }
        uint parts = 2u;
#endif
        barrier();
        if (t < N_OUT) {  // logit t
            float z = 0.0;
            for (uint i = 0u; i < parts; i++) z += red[t * THREADS + i];
            Ls[t] = z + params[b2o + t];
        }
        barrier();
        if (t == 0u) {  // softmax cross-entropy of one sample, as fused_head_1_xent
            uint y = labels[order[start + b]];
            float m = Ls[0];
            for (uint o = 1u; o < N_OUT; o++) m = max(m, Ls[o]);
            float total = 0.0;
            for (uint o = 0u; o < N_OUT; o++) total += exp(Ls[o] - m);
            float lse = log(total);
            losses[start + b] = lse - (Ls[y] - m);
            for (uint o = 0u; o < N_OUT; o++) {
                float d = exp(Ls[o] - m - lse);
                if (o == y) d -= 1.0;
                d /= float(count);
                Ls[o] = d;
                dlogits[b * N_OUT + o] = d;
            }
        }
        barrier();
        for (uint j = t; j < H; j += THREADS) {
            float d = 0.0;
            for (uint o = 0u; o < N_OUT; o++) d += Ls[o] * params[W2o + j * N_OUT + o];
            dZ1[b * H + j] = A1[b * H + j] > 0.0 ? d : 0.0;
        }
        barrier();  // Ls and red are reused by the next sample
    }
}

void update(uint p, float g) {
#if OPTIMIZER == 0
    params[p] -= lr * g;
#else
    float v = mu * state_m[p] + g;
    state_m[p] = v;
    params[p] -= lr * v;
#endif
}

// Phase 2: the gradients of the group's parameters, each summed over the batch in sample order by one
// thread, which then updates it. Jobs: n_in/PIX of W1 (PIX inputs x the group's units), then b1's owned
// entries, the owned rows of W2, and in group 0 b2. The batch's dZ1, A1 (owned units) and dlogits are
// staged in shared memory first; the images are read from memory.
void backward(uint start, uint count, uint j0, uint cols) {
    uint t = gl_LocalInvocationIndex, H = n_hidden, words = n_in / 4u;
    for (uint b = t; b < count; b += THREADS) rowStart[b] = order[start + b] * words;  // again: a dispatch
    for (uint i = t; i < count * COLS; i += THREADS) {                               // may start here
        uint b = i / COLS, c = i % COLS;
        dZs[i] = c < cols ? dZ1[b * H + j0 + c] : 0.0;
        As[i] = c < cols ? A1[b * H + j0 + c] : 0.0;
    }
    for (uint i = t; i < count * N_OUT; i += THREADS) Ls[i] = dlogits[i];
    barrier();
    uint w1 = n_in / PIX, b1 = w1, w2 = b1 + 1u, b2 = w2 + cols;
    uint jobs = b2 + (gl_WorkGroupID.x == 0u ? 1u : 0u);
    uint b1o = n_in * H, W2o = b1o + H, b2o = W2o + H * N_OUT;
    for (uint job = t; job < jobs; job += THREADS) {
        float acc[ACC];
        for (uint i = 0u; i < ACC; i++) acc[i] = 0.0;
        if (job < w1) {                  // W1 rows PIX*job .. PIX*job + PIX-1, the owned columns
            uint k0 = PIX * job, word = k0 / 4u, shift = 8u * (k0 % 4u);
            for (uint b0 = 0u; b0 < count; b0 += U) {
                uint w[U];                // U reads in flight before the first is used
                for (uint u = 0u; u < U; u++) w[u] = b0 + u < count ? images[rowStart[b0 + u] + word] : 0u;
                for (uint u = 0u; u < U; u++) {
                    vec4 x = pixels(w[u] >> shift);
                    uint b = min(b0 + u, count - 1u);  // past the batch: x is 0, any row will do
                    for (uint p = 0u; p < PIX; p++)
                        for (uint c = 0u; c < COLS; c++) acc[p * COLS + c] += x[p] * dZs[b * COLS + c];
                }
            }
            for (uint p = 0u; p < PIX; p++)
                for (uint c = 0u; c < cols; c++) update((k0 + p) * H + j0 + c, acc[p * COLS + c]);
        } else if (job == b1) {
            for (uint b = 0u; b < count; b++)
                for (uint c = 0u; c < COLS; c++) acc[c] += dZs[b * COLS + c];
            for (uint c = 0u; c < cols; c++) update(b1o + j0 + c, acc[c]);
        } else if (job < b2) {           // row j0 + c of W2
            uint c = job - w2;
            for (uint b = 0u; b < count; b++)
                for (uint o = 0u; o < N_OUT; o++) acc[o] += As[b * COLS + c] * Ls[b * N_OUT + o];
            for (uint o = 0u; o < N_OUT; o++) update(W2o + (j0 + c) * N_OUT + o, acc[o]);
        } else {                         // b2, in group 0
            for (uint b = 0u; b < count; b++)
                for (uint o = 0u; o < N_OUT; o++) acc[o] += Ls[b * N_OUT + o];
            for (uint o = 0u; o < N_OUT; o++) update(b2o + o, acc[o]);
        }
    }
}

void main() {
    uint j0 = gl_WorkGroupID.x * COLS, cols = min(COLS, n_hidden - min(j0, n_hidden));
    for (uint q = phase_first; q < phase_end; q++) {
        uint s = q / 3u, p = q % 3u;
        if (q > phase_first) {
            if (p == 0u) {           // after phase 2: only this group's own parameters changed
                memoryBarrierBuffer();
                barrier();
            } else if (!grid_barrier()) {
                return;
            }
        }
        uint start = s * batch_size, count = min(batch_size, n_samples - start);
        if (p == 0u) layer1(start, count, j0, cols);
        else if (p == 1u) head(start, count);
        else backward(start, count, j0, cols);
    }
}
