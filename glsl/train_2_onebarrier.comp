#version 430
// train_2_onebarrier.comp: many training steps of the n_in-H-10 MLP in one dispatch, one grid barrier a step:
//   work group g owns hidden units [g*COLS, g*COLS + COLS): their W1 columns, b1 entries and W2 rows.
//   Global phase q = 2*step + p runs, for q in [phase_first, phase_end):
//     p 0  layer 1 for the owned units, every sample of the batch: A1[:, own] = relu(X·W1[:, own] + b1[own])
//     p 1  in EVERY group, the head of the whole batch (logits, softmax cross-entropy, dlogits), then the
//          owned units' dZ1, the owned parameters' gradients and the optimizer's update
//   Only phase 1 needs what other groups computed (every unit's A1): one grid barrier before it. Phase 1 and
//   the next step's phase 0 touch only the group's own units: a work-group barrier joins them
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4; labels[n_images] uint32; order[n_samples] uint32, each < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden,
//           so [W1; b1] is one (n_in+1)×H matrix and [W2; b2] one (H+1)×N_OUT; state_m the same length
//           A1: two copies of the batch's [batch_size, HP] hidden activations, HP = 4*ceil(H/4) (columns H ..
//           HP-1 are 0: rows start on 16 bytes, read as vec4s); step i of a dispatch (i = 0, 1, ...) writes copy i%2. head: two copies of [W2 | b2] (HN = H*N_OUT + N_OUT floats each); step i
//           reads W2, b2 from params (i = 0) or copy (i-1)%2, and writes its update into copy i%2, never
//           into params: after a dispatch whose last phase 1 was step i, copy i%2 holds W2, b2 (the caller
//           copies it into params). losses[n_samples], one per sample at its epoch position. Step s's batch
//           is count = min(batch_size, n_samples - s*batch_size) samples from epoch position s*batch_size.
//           sync[4] uint, zero at the start of an epoch: [0] arrivals at grid barriers so far (G a barrier),
//           [1] flags (1: a wait gave up), [2] the most polls one wait took, [3] unused
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
//           6 A1 float[2*batch_size*4*ceil(n_hidden/4)] (read-write)  9 losses float[n_samples] (writeonly)
//           14 sync uint[4] (read-write)  15 head float[2*(n_hidden*N_OUT + N_OUT)] (read-write)
//           the binding numbers are train_1_persistent's (state_m is unused by SGD: any buffer will do there)
// Uniforms  uint n_in, n_hidden, n_samples (length of order), batch_size, phase_first, phase_end; float lr
//           float mu   (OPTIMIZER 1)
//           the dispatch runs global phases q = 2*step + p from phase_first up to phase_end - 1
// Dispatch  local (THREADS, 1, 1); groups (ceil(n_hidden/COLS), 1, 1)
//           with several steps in one dispatch, correct only when every work group is resident at once
//           (a grid barrier waits for all of them; notebook 07 says why no API promises it). A wait gives up
//           after SPIN_LIMIT polls, sets sync[1] and stops every group: no hang. A dispatch of one phase
//           crosses no grid barrier and is correct for any group count: the fallback, two dispatches a step
// Requires  1 <= COLS <= 8;  THREADS <= 1024;  (THREADS & (THREADS - 1)) == 0;  THREADS % KSPLIT == 0;
//           THREADS % HSPLIT == 0;  THREADS >= MAX_B;  BSPLIT >= 1;  MAX_IN % 16 == 0;  0 <= OPTIMIZER <= 1;
//           n_in % 4 == 0;  n_in <= MAX_IN;  batch_size <= MAX_B;  n_hidden <= MAX_H
// Changed   vs train_1_persistent: one grid barrier a step instead of two. Every group computes the head
//           of the whole batch itself (the same arithmetic in the same order in every group, so the same
//           dlogits everywhere) instead of one sample per group, so it needs no barrier before its own units'
//           gradients. What that costs: a group may reach step i+1 while another still reads step i's A1 and
//           W2, so A1 and [W2 | b2] have two copies, alternating by step. A group's W1 columns stay in
//           shared memory from one step to the next, and each W1 gradient sums its batch in BSPLIT parts
// Checked   relative error < 1e-5 against NumPy for SGD and momentum, A1 and losses poisoned with NaN
//           first, hidden sizes 1, 37 and 130, leftover batches; one dispatch of many steps gives the
//           same bits as two dispatches a step (tests/test_persistent.py, on llvmpipe and the H100)
// Tunables  COLS hidden units a group (1..8); THREADS threads a group, a power of two >= MAX_B;
//           KSPLIT threads share a sample's row in phase 0, HSPLIT a sample's logits in phase 1; BSPLIT
//           threads share a W1 gradient's batch; U reads a thread keeps in flight; MAX_B >= batch_size;
//           MAX_IN >= n_in, a multiple of 16; MAX_H >= n_hidden. Shared memory: 4*((MAX_IN + 1)*COLS +
//           12*(MAX_HP + 1) + MAX_B*(1 + COLS + N_OUT) + 4*ceil(MAX_B/4)*COLS + SMALL*SP
//           + max(THREADS*max(COLS, N_OUT), BSPLIT*MAX_IN*COLS if BSPLIT > 1) + 1) bytes, MAX_HP =
//           4*ceil(MAX_H/4), SMALL = 11*COLS + N_OUT, SP = max(1, THREADS/SMALL). OPTIMIZER: 0 SGD, 1 momentum
#ifndef COLS
#define COLS 1
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef KSPLIT
#define KSPLIT 2
#endif
#ifndef HSPLIT
#define HSPLIT 2
#endif
#ifndef BSPLIT
#define BSPLIT 1
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
#ifndef MAX_H
#define MAX_H 128
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
#error COLS must be 1..8 (a thread keeps 4*COLS gradient sums in registers)
#endif
#if THREADS > 1024 || (THREADS & (THREADS - 1)) != 0 || THREADS % KSPLIT != 0 || THREADS % HSPLIT != 0
#error THREADS must be a power of two <= 1024, and a multiple of KSPLIT and HSPLIT
#endif
#if THREADS < MAX_B || BSPLIT < 1
#error THREADS must be at least MAX_B (a thread per sample in the softmax); BSPLIT at least 1
#endif
#if MAX_IN % 16 != 0 || OPTIMIZER < 0 || OPTIMIZER > 1
#error MAX_IN must be a multiple of 16; OPTIMIZER 0 (SGD) or 1 (momentum)
#endif

layout(local_size_x = THREADS, local_size_y = 1, local_size_z = 1) in;

// coherent: these buffers are written by other work groups (or other invocations) during the dispatch, so
// reads go to memory all groups share, not to an SM's private cache. Images, labels, order never change.
layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 0) readonly buffer Images4 { uvec4 images4[]; };  // the same, 16 pixels a read
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) coherent buffer Params { float params[]; };
layout(std430, binding = 4) coherent buffer StateM { float state_m[]; };
layout(std430, binding = 6) coherent buffer Hidden { float A1[]; };
layout(std430, binding = 6) coherent buffer Hidden4 { vec4 A1v[]; };   // the same, 4 units a read
layout(std430, binding = 9) writeonly buffer Losses { float losses[]; };
// volatile as well: every poll of the barrier's counter really reads memory
layout(std430, binding = 14) coherent volatile buffer Sync { uint sync[]; };
layout(std430, binding = 15) coherent buffer Head { float head[]; };

uniform uint n_in;         // inputs per sample (784)
uniform uint n_hidden;     // H
uniform uint n_samples;    // samples in the epoch: length of order
uniform uint batch_size;   // B
uniform uint phase_first;  // first global phase of this dispatch: 2*step + p
uniform uint phase_end;    // one past the last
uniform float lr;
#if OPTIMIZER == 1
uniform float mu;
#endif

const uint RED_A = THREADS * (COLS > N_OUT ? COLS : N_OUT);
const uint RED_C = BSPLIT > 1 ? BSPLIT * MAX_IN * COLS : 0;    // W1 gradients in parts (BSPLIT 1: none)
const uint RED = RED_A > RED_C ? RED_A : RED_C;

const uint QW = MAX_IN / 4u;           // vec4s in a column of W1
shared vec4 Wv[COLS * QW];             // the group's columns of W1 (column c: Wv[c*QW ...]) and entries of b1,
shared float bc[COLS];                 // kept up to date from one step to the next
shared uint rowStart[MAX_B];           // where each sample of the batch starts in `images` (words)
const uint MAX_HP = (MAX_H + 3u) / 4u * 4u;
shared vec4 W2v[MAX_HP * 3];           // this step's W2, a row in 3 vec4s (12 floats, 2 of them 0), rows >= H 0
shared vec4 b2v[3];                    // and b2
shared float red[RED];                 // partial sums, added in a fixed order
shared float As[MAX_B * COLS];         // the batch's A1 for the group's units
const uint QB = (MAX_B + 3u) / 4u;
shared vec4 dZv[COLS * QB];            // the batch's dZ1 for the group's units (unit c: dZv[c*QB ...]), 0 past it
const uint SMALL = COLS * N_OUT + COLS + N_OUT;           // sums over the batch besides W1's
const uint SP = THREADS / SMALL > 0u ? THREADS / SMALL : 1u;  // parts of each
shared float parts[SMALL * SP];        // their parts
shared float Ls[MAX_B * N_OUT];        // the batch's logits, then dlogits
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

// The 4 bytes of a word (little-endian) as floats 0..255, exactly, with integer and float adds only: byte b
// put under the exponent of 2^23 is the float 2^23 + b. A GPU converts int to float at a quarter of its
// float rate (unpackUnorm4x8 does), and every group reads the whole batch twice a step: that was the cost.
vec4 bytes4(uint word) {
    uvec4 b = (uvec4(word) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
    return uintBitsToFloat(b | 0x4B000000u) - 8388608.0;
}
const float TO_UNIT = 1.0 / 255.0;     // pixel = byte / 255, applied to each finished sum

// What a dispatch's first phase reads from memory and later phases keep in shared memory: the group's
// columns of [W1; b1].
void load_own(uint j0, uint cols) {
    uint t = gl_LocalInvocationIndex, H = n_hidden;
    for (uint i = t; i < n_in * COLS; i += THREADS) {
        uint c = i / n_in, k = i % n_in;
        Wv[c * QW + k / 4u][k % 4u] = c < cols ? params[k * H + j0 + c] : 0.0;
    }
    for (uint c = t; c < COLS; c += THREADS) bc[c] = c < cols ? params[n_in * H + j0 + c] : 0.0;
}

// Where each sample of the step's batch starts in `images` (phase 0, and phase 1 when it opens a dispatch).
void batch_rows(uint start, uint count) {
    for (uint b = gl_LocalInvocationIndex; b < count; b += THREADS) rowStart[b] = order[start + b] * (n_in / 4u);
}

// Phase 0: A1[b, j] = relu(sum_k X[b, k] W1[k, j] + b1[j]) for every sample b, j the group's units, into
// copy `a1` of A1 and into As. Thread t takes sample t/KSPLIT of a pass and reads its image 16 pixels at a
// time, quads t%KSPLIT, t%KSPLIT + KSPLIT, ...; the KSPLIT parts are then added in a fixed order.
void layer1(uint start, uint count, uint j0, uint cols, uint a1) {
    uint t = gl_LocalInvocationIndex, r = t / KSPLIT, part = t % KSPLIT;
    uint H = n_hidden, HP = (H + 3u) / 4u * 4u, quads = n_in / 16u, rows = THREADS / KSPLIT;
    batch_rows(start, count);
    barrier();
    for (uint b0 = 0u; b0 < count; b0 += rows) {
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
                    uint kq0 = 4u * (q0 + u * KSPLIT);
                    for (uint i = 0u; i < 4u; i++) {
                        vec4 x = bytes4(w4[u][i]);
                        uint kq = min(kq0 + i, n_in / 4u - 1u);  // past the row: x is 0, any kq will do
                        for (uint c = 0u; c < COLS; c++) acc[c] += dot(x, Wv[c * QW + kq]);
                    }
                }
            }
        }
        for (uint c = 0u; c < COLS; c++) red[t * COLS + c] = acc[c];
        barrier();
        for (uint i = t; i < rows * COLS; i += THREADS) {  // per (sample, unit): the parts in a fixed order
            uint rr = i / COLS, c = i % COLS, bb = b0 + rr;
            if (bb < count) {
                float z = 0.0;
                for (uint q = 0u; q < KSPLIT; q++) z += red[(rr * KSPLIT + q) * COLS + c];
                float a = max(z * TO_UNIT + bc[c], 0.0);
                As[bb * COLS + c] = a;
                if (c < cols) A1[(a1 * batch_size + bb) * HP + j0 + c] = a;
            }
        }
        barrier();
    }
    if (j0 + cols == H)                  // the group of the last unit writes the rows' padding
        for (uint k = t; k < count * (HP - H); k += THREADS)
            A1[(a1 * batch_size + k / (HP - H)) * HP + H + k % (HP - H)] = 0.0;
}

float updated(uint p, float value, float g) {  // the optimizer's new value of parameter p (state_m in place)
#if OPTIMIZER == 0
    return value - lr * g;
#else
    float v = mu * state_m[p] + g;
    state_m[p] = v;
    return value - lr * v;
#endif
}

// Phase 1 of step i of the dispatch: the whole batch's head in this group, then the owned units' gradients
// and updates. fresh: this is the dispatch's first phase (the fallback), so nothing is in shared memory yet.
void head_and_update(uint start, uint count, uint j0, uint cols, uint i, bool fresh) {
    uint t = gl_LocalInvocationIndex, H = n_hidden, words = n_in / 4u;
    uint b1o = n_in * H, W2o = b1o + H, HN = H * N_OUT + N_OUT;
    uint HP = (H + 3u) / 4u * 4u, a1o = (i & 1u) * batch_size * HP, w_in = (i - 1u) & 1u, w_out = i & 1u;
    for (uint k = t; k < (HP + 1u) * 12u; k += THREADS) {  // row j, column o of [W2; b2]: float k = 12j + o
        uint j = k / 12u, o = k % 12u, at = (j < HP ? j : H) * N_OUT + o;   // row HP: b2
        float w = o >= N_OUT || (j >= H && j < HP) ? 0.0 : i == 0u ? params[W2o + at] : head[w_in * HN + at];
        if (j < HP) W2v[k / 4u][k % 4u] = w;
        else b2v[o / 4u][o % 4u] = w;
    }
    if (fresh) {
        load_own(j0, cols);
        batch_rows(start, count);
        for (uint k = t; k < count * COLS; k += THREADS) {
            uint c = k % COLS;
            As[k] = c < cols ? A1[a1o + (k / COLS) * HP + j0 + c] : 0.0;
        }
    }
    barrier();

    // logits: HSPLIT threads a sample; part p reads the sample's A1 as vec4s p, p + HSPLIT, ... (together
    // the parts read whole 32-byte pieces of memory at a time); the parts are added in a fixed order
    uint rows = THREADS / HSPLIT, r = t / HSPLIT, part = t % HSPLIT, QH = HP / 4u;
    for (uint b0 = 0u; b0 < count; b0 += rows) {
        vec4 acc[3] = vec4[3](vec4(0.0), vec4(0.0), vec4(0.0));   // logits 0-3, 4-7, 8-9 (and 2 zeros)
        uint b = b0 + r;
        if (b < count) {
            for (uint g0 = part; g0 < QH; g0 += U * HSPLIT) {
                vec4 a[U];                 // U reads in flight before the first is used
                for (uint u = 0u; u < U; u++) {
                    uint g = g0 + u * HSPLIT;
                    a[u] = g < QH ? A1v[a1o / 4u + b * QH + g] : vec4(0.0);
                }
                for (uint u = 0u; u < U; u++) {
                    uint g = min(g0 + u * HSPLIT, QH - 1u);  // past the row: a is 0, any g will do
                    for (uint e = 0u; e < 4u; e++)
                        for (uint v = 0u; v < 3u; v++) acc[v] += a[u][e] * W2v[3u * (4u * g + e) + v];
                }
            }
        }
        for (uint o = 0u; o < N_OUT; o++) red[t * N_OUT + o] = acc[o / 4u][o % 4u];
        barrier();
        for (uint k = t; k < rows * N_OUT; k += THREADS) {
            uint rr = k / N_OUT, o = k % N_OUT;
            if (b0 + rr < count) {
                float z = 0.0;
                for (uint q = 0u; q < HSPLIT; q++) z += red[(rr * HSPLIT + q) * N_OUT + o];
                Ls[(b0 + rr) * N_OUT + o] = z + b2v[o / 4u][o % 4u];
            }
        }
        barrier();
    }

    // softmax cross-entropy, a sample a thread (as fused_head_1_xent): logits -> dlogits in Ls
    if (t < count) {
        uint y = labels[order[start + t]];
        float m = Ls[t * N_OUT];
        for (uint o = 1u; o < N_OUT; o++) m = max(m, Ls[t * N_OUT + o]);
        float total = 0.0;
        for (uint o = 0u; o < N_OUT; o++) total += exp(Ls[t * N_OUT + o] - m);
        float lse = log(total);
        if (gl_WorkGroupID.x == 0u) losses[start + t] = lse - (Ls[t * N_OUT + y] - m);
        for (uint o = 0u; o < N_OUT; o++) {
            float d = exp(Ls[t * N_OUT + o] - m - lse);
            if (o == y) d -= 1.0;
            Ls[t * N_OUT + o] = d / float(count);
        }
    }
    barrier();

    // the owned units' dZ1 = (dlogits · W2[j, :]) * (A1 > 0), with this step's W2 (before its update)
    for (uint k = t; k < COLS * QB * 4u; k += THREADS) {
        uint c = k / (QB * 4u), b = k % (QB * 4u);
        float d = 0.0;
        if (c < cols && b < count)
            for (uint o = 0u; o < N_OUT; o++) d += Ls[b * N_OUT + o] * W2v[3u * (j0 + c) + o / 4u][o % 4u];
        dZv[c * QB + b / 4u][b % 4u] = b < count && As[b * COLS + c] > 0.0 ? d : 0.0;
    }
    barrier();

    // The small sums: the owned rows of W2, b1's owned entries and b2, SP parts each (part p adds samples
    // p, p + SP, ...), so that no thread adds a whole batch alone; the parts are added in order below.
    for (uint k = t; k < SMALL * SP; k += THREADS) {
        uint out_ = k / SP, part = k % SP;
        float g = 0.0;
        for (uint b = part; b < count; b += SP)
            g += out_ < COLS * N_OUT ? As[b * COLS + out_ / N_OUT] * Ls[b * N_OUT + out_ % N_OUT]
               : out_ < COLS * N_OUT + COLS ? dZv[(out_ - COLS * N_OUT) * QB + b / 4u][b % 4u]
               : Ls[b * N_OUT + out_ - COLS * N_OUT - COLS];
        parts[k] = g;
    }

    // W1 jobs, each summed over the batch in sample order: words*BSPLIT of them (4 inputs x the owned units,
    // over part h of the batch); the BSPLIT parts are added below (BSPLIT 1: the job updates W1 itself).
    uint w1 = words * BSPLIT;
    uint per = ((count + BSPLIT - 1u) / BSPLIT + 3u) & ~3u;  // samples a W1 part sums, a multiple of 4
    for (uint job = t; job < w1; job += THREADS) {  // W1 rows 4w .. 4w+3, the owned columns, samples of part h
        uint w = job % words, h = job / words;
        uint first = h * per, last = min(first + per, count);
        float acc[4 * COLS];
        for (uint k = 0u; k < 4u * COLS; k++) acc[k] = 0.0;
        for (uint b0 = first; b0 < last; b0 += 4u * U) {   // b0 a multiple of 4
            uint x[4u * U];            // 4U reads in flight before the first is used
            for (uint u = 0u; u < 4u * U; u++) x[u] = b0 + u < last ? images[rowStart[b0 + u] + w] : 0u;
            for (uint u = 0u; u < U; u++) {
                uint bq = min((b0 + 4u * u) / 4u, QB - 1u);  // past the part: x is 0, any dZ will do
                for (uint c = 0u; c < COLS; c++) {
                    vec4 dz = dZv[c * QB + bq];    // dZ1 of 4 samples
                    for (uint v = 0u; v < 4u; v++) {
                        vec4 px = bytes4(x[4u * u + v]);
                        for (uint p = 0u; p < 4u; p++) acc[p * COLS + c] += px[p] * dz[v];
                    }
                }
            }
        }
#if BSPLIT == 1
        for (uint p = 0u; p < 4u; p++)         // the whole batch: update W1 at once
            for (uint c = 0u; c < COLS; c++) {
                uint in_ = 4u * w + p;
                if (c < cols && in_ < n_in) {
                    float v = updated(in_ * H + j0 + c, Wv[c * QW + w][p], acc[p * COLS + c] * TO_UNIT);
                    params[in_ * H + j0 + c] = v;
                    Wv[c * QW + w][p] = v;
                }
            }
#else
        for (uint k = 0u; k < 4u * COLS; k++) red[(h * words + w) * 4u * COLS + k] = acc[k];
#endif
    }
    barrier();
    for (uint out_ = t; out_ < SMALL; out_ += THREADS) {   // the small sums' parts, in order
        float g = 0.0;
        for (uint part = 0u; part < SP; part++) g += parts[out_ * SP + part];
        if (out_ < COLS * N_OUT) {                          // W2[j0 + c, o]: into copy w_out of head
            uint c = out_ / N_OUT, o = out_ % N_OUT, k = (j0 + c) * N_OUT + o;
            if (c < cols) head[w_out * HN + k] = updated(W2o + k, W2v[3u * (j0 + c) + o / 4u][o % 4u], g);
        } else if (out_ < COLS * N_OUT + COLS) {            // b1[j0 + c]
            uint c = out_ - COLS * N_OUT;
            if (c < cols) {
                float v = updated(b1o + j0 + c, bc[c], g);
                params[b1o + j0 + c] = v;
                bc[c] = v;
            }
        } else if (gl_WorkGroupID.x == 0u) {                // b2[o], by group 0: into copy w_out of head
            uint o = out_ - COLS * N_OUT - COLS, k = H * N_OUT + o;
            head[w_out * HN + k] = updated(W2o + k, b2v[o / 4u][o % 4u], g);
        }
    }
#if BSPLIT > 1
    for (uint k = t; k < n_in * COLS; k += THREADS) {  // W1[i, j0 + c]: the BSPLIT parts in a fixed order
        uint in_ = k / COLS, c = k % COLS, w = in_ / 4u, p = in_ % 4u;
        if (c < cols) {
            float g = 0.0;
            for (uint h = 0u; h < BSPLIT; h++) g += red[(h * words + w) * 4u * COLS + p * COLS + c];
            float v = updated(in_ * H + j0 + c, Wv[c * QW + w][p], g * TO_UNIT);
            params[in_ * H + j0 + c] = v;
            Wv[c * QW + w][p] = v;
        }
    }
#endif
}

void main() {
    uint j0 = gl_WorkGroupID.x * COLS, cols = min(COLS, n_hidden - min(j0, n_hidden));
    for (uint q = phase_first; q < phase_end; q++) {
        uint s = q / 2u, p = q % 2u, i = s - phase_first / 2u;
        uint start = s * batch_size, count = min(batch_size, n_samples - start);
        if (p == 0u) {
            if (q == phase_first) {
                load_own(j0, cols);
            } else {                 // after phase 1: only this group's own parameters, Wv and bc changed
                memoryBarrierShared();
                barrier();
            }
            layer1(start, count, j0, cols, i & 1u);
        } else {
            if (q > phase_first && !grid_barrier()) return;
            head_and_update(start, count, j0, cols, i, q == phase_first);
            barrier();               // red, Ls and W2v are reused by the next step
        }
    }
}
