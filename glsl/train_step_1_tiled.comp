#version 430
// train_step_1_tiled.comp: one SGD or momentum training step of the n_in-H-10 MLP as two phases spread
//   over GROUPS work groups: phase 1 tiles Z1 = X·W1 + b1 over (samples × hidden units), split-K inside a
//   work group and reduced across lanes (subgroup shuffles, or the same exchanges through shared memory),
//   and writes A1 and per-tile partial logits; phase 2 finishes the logits, the softmax cross-entropy and
//   dlogits in every work group, then tiles the weight gradients (dW1 = Xᵀ·dZ1, db1, dW2, db2) and
//   updates each weight in place. PHASE 1 and PHASE 2 are the two dispatches of a step; PHASE 0 runs
//   n_steps steps in one dispatch with a grid-wide barrier (atomics, spin limit) after each phase;
//   PHASE 3 only crosses n_steps grid barriers (a residency probe)
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); labels[n_images] uint32; order[n_samples] uint32,
//           the epoch's sample order, each value < n_images
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden;
//           state_m the same length (momentum's velocity)
//           A1[batch_size,H]  dlogits[batch_size,N_OUT]  losses[n_samples] (one per sample, at its epoch position)
//           parts[ceil(H/HT), batch_size, N_OUT]: the logits summed over one HT-wide slice of the hidden
//           units (slice 0 also holds b2), HT = 4*THREADS/KS;  W2s[H,N_OUT]: this step's W2, copied in phase 1
//           counter[2] uint: counter[0] the step phase 1 runs next (0-based within the epoch), counter[1]
//           the step phase 2 runs; sync[4] uint: grid barrier arrivals, generation, flags (1 a barrier timed
//           out, 2 the step loop ended early), spare
// NumPy     steps = ceil(n_samples/batch_size);  s = counter[0]   (PHASE 0: s = first_step + i, i < n_steps)
//           start = s*batch_size;  count = min(batch_size, n_samples - start);  rows = order[start:start + count]
//           X = images.view(np.uint8).reshape(-1, n_in)[rows] / 255;  y = labels[rows]
//           A1 = np.maximum(X @ W1 + b1, 0);  logits = A1 @ W2 + b2
//           z = logits - logits.max(1, keepdims=True);  logp = z - np.log(np.exp(z).sum(1, keepdims=True))
//           losses[start:start + count] = -logp[np.arange(count), y]
//           dlogits = (np.exp(logp) - np.eye(N_OUT)[y]) / count;  dZ1 = (dlogits @ W2.T) * (A1 > 0)
//           g = {W1: X.T @ dZ1, b1: dZ1.sum(0), W2: A1.T @ dlogits, b2: dlogits.sum(0)}
//           OPTIMIZER 0: p -= lr * g;   1: m = mu * m + g;  p -= lr * m
//           counter[0] = (s + 1) % steps
// Bindings  0 images uint[n_images*n_in/4] (readonly)  1 labels uint[n_images] (readonly)
//           2 order uint[n_samples] (readonly)  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (read-write)
//           4 state_m float[OPTIMIZER*((n_in + 1 + N_OUT)*n_hidden + N_OUT)] (read-write)
//           6 A1 float[batch_size*n_hidden] (read-write)
//           7 parts float[ceil(n_hidden*KS/(4*THREADS))*batch_size*N_OUT] (read-write)
//           8 dlogits float[batch_size*N_OUT] (writeonly)  9 losses float[n_samples] (writeonly)
//           10 W2s float[n_hidden*N_OUT] (read-write)  11 counter uint[2] (read-write)  12 sync uint[4] (read-write)
//           params is also declared as a vec4 array on binding 3 (Params4): one buffer, 16 bytes a read.
//           state_m is unused by SGD (any buffer will do); dlogits is written by work group 0 only, for checks
// Uniforms  uint n_in (multiple of 4, <= MAX_IN), n_hidden, n_samples (length of order), batch_size (<= MAX_B)
//           float lr; float mu (OPTIMIZER 1)
//           uint first_step, n_steps (PHASE 0 and 3: the steps of this dispatch, within one epoch)
// Dispatch  local (THREADS, 1, 1); groups (GROUPS, 1, 1)
//           any GROUPS works for PHASE 1 and 2: a work group takes tiles g, g + GROUPS, g + 2*GROUPS, ...
//           Phase 1 tile (bt, jt): BT samples × HT hidden units; thread (ks, q) = lane lid % KS of quad
//           lid / KS sums 4 hidden units (one vec4 of a W1 row) for BT samples over the inputs k ≡ ks mod KS.
//           Phase 2 tile (kt, jt): TK inputs × TJ hidden units of W1, thread (lid % TJ, lid / TJ) owns
//           TK*TJ/THREADS of them; tile row kt = 0 holds b1, W2 and b2 of those hidden units instead.
//           PHASE 0 and 3 need all GROUPS work groups resident at once (at most one per SM is safe);
//           a grid barrier that waits SPIN_LIMIT polls sets sync[2] and every group stops (no hang)
// Changed   first version: the step of fused_forward_1_xent + fused_backward_1_update re-cut so that
//           every phase spreads over many work groups: the forward pass is tiled over hidden units too
//           (a group reads a BT-sample slice of X and an HT-wide slice of W1, not all of W1) and hands
//           on per-slice partial logits, which every group of phase 2 finishes itself; the per-step
//           uniform is gone (the GPU advances counter), so a step is run, barrier, run, barrier
// Checked   relative error < 1e-5 against NumPy for SGD and momentum, SUBGROUP 1 and 0, PHASE 0 and
//           PHASE 1+2 bitwise equal (tests/test_fast_mlp.py)
// Tunables  THREADS = KS*HT/4; KS a power of 2 <= 32 that divides 4*BT; TK a multiple of 4 and of
//           THREADS/TJ; TJ divides THREADS (all checked below). Shared memory 4*max(max(BT*MAX_IN,
//           2*BT*THREADS) + BT*HT, MAX_B*N_OUT + BC*(TK + TJ)) bytes (<= 32 KiB everywhere, 48 KiB on NVIDIA).
//           SUBGROUP 0 forces the shared-memory exchange even where subgroup shuffles exist
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#pragma optionNV(unroll all)
#define PHASE 1
#define THREADS 256
#define KS 32
#define BT 8
#define TJ 32
#define TK 32
#define BC 32
#define GROUPS 132
#define MAX_IN 784
#define MAX_B 128
#define OPTIMIZER 0
#define SUBGROUP 1
#define SPIN_LIMIT 1000000
#define N_OUT 10

#define HT (4 * THREADS / KS)
#define V (4 * BT)
#if SUBGROUP && defined(GL_KHR_shader_subgroup_shuffle)
#define USE_SUBGROUP 1
#else
#define USE_SUBGROUP 0
#endif
#if PHASE == 0 || PHASE == 3
#define COHERENT coherent
#else
#define COHERENT
#endif
#if KS != 1 && KS != 2 && KS != 4 && KS != 8 && KS != 16 && KS != 32
#error KS must be a power of 2 <= 32 (lanes of one subgroup exchange partial sums)
#endif
#if (V % KS) != 0
#error 4*BT must be a multiple of KS (each lane ends with 4*BT/KS of the tile's sums)
#endif
#if (4 * THREADS) % KS != 0 || THREADS > 1024
#error THREADS*4 must be a multiple of KS, and THREADS <= 1024
#endif
#if THREADS % TJ != 0 || TK % (THREADS / TJ) != 0 || TK % 4 != 0
#error TJ must divide THREADS, and TK must be a multiple of THREADS/TJ and of 4
#endif
#if OPTIMIZER != 0 && OPTIMIZER != 1
#error OPTIMIZER must be 0 (SGD) or 1 (momentum)
#endif

layout(local_size_x = THREADS, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) COHERENT buffer Params { float params[]; };
layout(std430, binding = 3) COHERENT buffer Params4 { vec4 params4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 4) buffer StateM { float state_m[]; };  // each weight's own thread, every step
layout(std430, binding = 6) COHERENT buffer Hidden { float A1[]; };
layout(std430, binding = 7) COHERENT buffer Parts { float parts[]; };
layout(std430, binding = 8) writeonly buffer LogitGrad { float dlogits[]; };
layout(std430, binding = 9) writeonly buffer Losses { float losses[]; };
layout(std430, binding = 10) COHERENT buffer W2Snapshot { float W2s[]; };
layout(std430, binding = 11) buffer Counter { uint counter[]; };
layout(std430, binding = 12) coherent buffer Sync { uint sync[]; };

uniform uint n_in;
uniform uint n_hidden;
uniform uint n_samples;
uniform uint batch_size;
uniform float lr;
#if OPTIMIZER == 1
uniform float mu;
#endif
#if PHASE == 0 || PHASE == 3
uniform uint first_step, n_steps;
#endif

const uint TKT = THREADS / TJ;   // thread rows of a phase-2 tile
const uint KPT = TK / TKT;       // inputs per thread in a phase-2 tile
const uint SMALL = (TJ * (N_OUT + 1) + N_OUT + THREADS - 1) / THREADS;  // b1/W2/b2 sums per thread

#define XS (BT * MAX_IN > THREADS * 2 * BT ? BT * MAX_IN : THREADS * 2 * BT)  // X rows, or the lane exchange
#define SMEM1 (XS + BT * HT)
#define SMEM2 (MAX_B * N_OUT + BC * (TK + TJ))
shared float smem[SMEM1 > SMEM2 ? SMEM1 : SMEM2];  // phase 1: X rows, lane exchange, A1 tile at XS;
                                                   // phase 2: dlogits, then X and dZ1 chunks
shared bool sync_ok;

uint lid;

// Reduce-scatter over the KS lanes lid % KS of one quad: each lane holds V partial sums and ends with
// the full sums of V/KS of them, lane ks holding sums ks*V/KS ... (ks+1)*V/KS - 1 in v[0 .. V/KS - 1].
// Round h: lanes with bit h set keep the upper half of their values, the others the lower half, and
// each adds its partner's (lane XOR h) copy of the half it keeps: V/2 + V/4 + ... exchanges in all, not
// V*log2(KS). The partner's values come by subgroup shuffle, or else through shared memory (smem from 0,
// one barrier a round); both add the same numbers in the same order. Every thread must call it.
void reduce_scatter(inout float v[V], uint ks, bool lanes) {
    uint cnt = V;
    for (uint h = KS / 2u; h > 0u; h /= 2u) {
        cnt /= 2u;
        bool upper = (ks & h) != 0u;
#if USE_SUBGROUP
        if (lanes) {
            for (uint i = 0u; i < cnt; i++) {
                float send = upper ? v[i] : v[i + cnt];
                v[i] = (upper ? v[i + cnt] : v[i]) + subgroupShuffleXor(send, h);
            }
            continue;
        }
#endif
        barrier();   // everyone is done reading shared memory (X rows, or the last round's values)
        for (uint i = 0u; i < cnt; i++) smem[lid * (V / 2u) + i] = upper ? v[i] : v[i + cnt];
        barrier();
        for (uint i = 0u; i < cnt; i++) v[i] = (upper ? v[i + cnt] : v[i]) + smem[(lid ^ h) * (V / 2u) + i];
    }
}

void update(uint p, float g) {
#if OPTIMIZER == 0
    params[p] -= lr * g;
#else
    float m = mu * state_m[p] + g;
    state_m[p] = m;
    params[p] -= lr * m;
#endif
}

// ---------------------------------------------------------------------------------------------
// Phase 1: A1 and partial logits, tile by tile
// ---------------------------------------------------------------------------------------------
void forward_phase(uint start, uint count) {
    uint H = n_hidden, words = n_in / 4u;
    uint nJ = (H + HT - 1u) / HT, nB = (count + BT - 1u) / BT;
    uint W2o = n_in * H + H, b2o = W2o + H * N_OUT;
    uint ks = lid % KS, quad = lid / KS;
#if USE_SUBGROUP
    bool lanes = gl_SubgroupSize >= KS;   // the same for the whole dispatch
#else
    bool lanes = false;
#endif
    for (uint tile = gl_WorkGroupID.x; tile < nJ * nB; tile += gl_NumWorkGroups.x) {
        uint jt = tile % nJ, bt = tile / nJ;   // neighbouring groups share X rows, read other W1 columns
        uint b0 = bt * BT, j0 = jt * HT, j = j0 + 4u * quad;
        for (uint w = lid; w < BT * words; w += THREADS) {   // gather BT rows of X, four pixels a word
            uint s = w / words, q = w % words;
            uint pixels4 = 0u;
            if (b0 + s < count) pixels4 = images[order[start + b0 + s] * words + q];
            for (uint i = 0u; i < 4u; i++) smem[s * MAX_IN + 4u * q + i] = float((pixels4 >> (8u * i)) & 255u) / 255.0;
        }
        barrier();
        float v[V];
        for (uint i = 0u; i < V; i++) v[i] = 0.0;
        if (j < H) {
            for (uint k = ks; k < n_in; k += KS) {   // lanes next to each other read rows next to each other
                vec4 w;
                uint at = k * H + j;
                if ((H & 3u) == 0u) w = params4[at / 4u];   // W1[k, j:j+4], 16 bytes
                else w = vec4(params[at], j + 1u < H ? params[at + 1u] : 0.0,
                              j + 2u < H ? params[at + 2u] : 0.0, j + 3u < H ? params[at + 3u] : 0.0);
                for (uint s = 0u; s < BT; s++) {
                    float x = smem[s * MAX_IN + k];
                    for (uint c = 0u; c < 4u; c++) v[4u * s + c] += x * w[c];
                }
            }
        }
        reduce_scatter(v, ks, lanes);   // every thread takes part (uniform control flow)
        for (uint r = 0u; r < V / KS; r++) {
            uint i = ks * (V / KS) + r, s = i / 4u, jj = 4u * quad + (i % 4u), jx = j0 + jj;
            float a = 0.0;
            if (b0 + s < count && jx < H) {
                a = max(v[r] + params[n_in * H + jx], 0.0);
                A1[(b0 + s) * H + jx] = a;
            }
            smem[XS + s * HT + jj] = a;
        }
        barrier();
        for (uint p = lid; p < BT * N_OUT; p += THREADS) {   // logits of this slice of hidden units
            uint s = p / N_OUT, o = p % N_OUT;
            if (b0 + s < count) {
                float acc = jt == 0u ? params[b2o + o] : 0.0;
                for (uint jj = 0u; jj < HT && j0 + jj < H; jj++)
                    acc += smem[XS + s * HT + jj] * params[W2o + (j0 + jj) * N_OUT + o];
                parts[(jt * batch_size + b0 + s) * N_OUT + o] = acc;
            }
        }
        if (bt == 0u) {   // this step's W2, for phase 2's dZ1 while W2 itself is being updated
            for (uint p = lid; p < HT * N_OUT; p += THREADS) {
                if (j0 * N_OUT + p < H * N_OUT) W2s[j0 * N_OUT + p] = params[W2o + j0 * N_OUT + p];
            }
        }
        barrier();
    }
}

// ---------------------------------------------------------------------------------------------
// Phase 2: softmax cross-entropy for the whole batch (every group), then gradient tiles and updates
// ---------------------------------------------------------------------------------------------
void dz1_chunk(uint jt, uint b0, uint count, uint start, uint kt, bool load_x) {
    // smem: [0, MAX_B*N_OUT) dlogits; then X chunk [BC][TK]; then dZ1 chunk [BC][TJ]
    uint H = n_hidden, words = n_in / 4u, xo = MAX_B * N_OUT, dzo = xo + BC * TK;
    if (load_x) {
        for (uint w = lid; w < BC * (TK / 4u); w += THREADS) {
            uint bb = w / (TK / 4u), q = w % (TK / 4u), b = b0 + bb, k = kt * TK + 4u * q;
            uint pixels4 = 0u;
            if (b < count && k < n_in) pixels4 = images[order[start + b] * words + k / 4u];
            for (uint i = 0u; i < 4u; i++) smem[xo + bb * TK + 4u * q + i] = float((pixels4 >> (8u * i)) & 255u) / 255.0;
        }
    }
    for (uint w = lid; w < BC * TJ; w += THREADS) {
        uint b = b0 + w / TJ, jx = jt * TJ + w % TJ;
        float d = 0.0;
        if (b < count && jx < H && A1[b * H + jx] > 0.0) {
            for (uint o = 0u; o < N_OUT; o++) d += smem[b * N_OUT + o] * W2s[jx * N_OUT + o];
        }
        smem[dzo + w] = d;
    }
}

void backward_phase(uint start, uint count) {
    uint H = n_hidden;
    uint nJT = (H + HT - 1u) / HT;
    uint xo = MAX_B * N_OUT, dzo = xo + BC * TK;
    for (uint b = lid; b < count; b += THREADS) {   // logits = sum of the slices, in slice order
        float l[N_OUT];
        for (uint o = 0u; o < N_OUT; o++) l[o] = 0.0;
        for (uint jt = 0u; jt < nJT; jt++) {
            for (uint o = 0u; o < N_OUT; o++) l[o] += parts[(jt * batch_size + b) * N_OUT + o];
        }
        float m = l[0];
        for (uint o = 1u; o < N_OUT; o++) m = max(m, l[o]);
        float total = 0.0;
        for (uint o = 0u; o < N_OUT; o++) total += exp(l[o] - m);
        float lse = log(total);
        uint y = labels[order[start + b]];
        if (gl_WorkGroupID.x == 0u) losses[start + b] = lse - (l[y] - m);
        for (uint o = 0u; o < N_OUT; o++) {
            float d = exp(l[o] - m - lse);
            if (o == y) d -= 1.0;
            d /= float(count);
            smem[b * N_OUT + o] = d;
            if (gl_WorkGroupID.x == 0u) dlogits[b * N_OUT + o] = d;
        }
    }
    barrier();

    uint nK = (n_in + TK - 1u) / TK, nJ = (H + TJ - 1u) / TJ;
    uint jj = lid % TJ, kq = lid / TJ;
    for (uint tile = gl_WorkGroupID.x; tile < (nK + 1u) * nJ; tile += gl_NumWorkGroups.x) {
        uint kt = tile / nJ, jt = tile % nJ;   // row kt = 0: b1, W2, b2 (short, so they start first)
        if (kt == 0u) {
            float acc[SMALL];
            for (uint r = 0u; r < SMALL; r++) acc[r] = 0.0;
            for (uint b0 = 0u; b0 < count; b0 += BC) {
                dz1_chunk(jt, b0, count, start, 0u, false);
                barrier();
                uint nb = min(BC, count - b0);
                for (uint r = 0u; r < SMALL; r++) {
                    uint p = lid + r * THREADS;
                    if (p < TJ) {                                   // db1[j] = sum_b dZ1[b, j]
                        for (uint bb = 0u; bb < nb; bb++) acc[r] += smem[dzo + bb * TJ + p];
                    } else if (p < TJ * (N_OUT + 1u)) {             // dW2[j, o] = sum_b A1[b, j] dlogits[b, o]
                        uint jx = jt * TJ + (p - TJ) / N_OUT, o = (p - TJ) % N_OUT;
                        if (jx < H) {
                            for (uint bb = 0u; bb < nb; bb++)
                                acc[r] += A1[(b0 + bb) * H + jx] * smem[(b0 + bb) * N_OUT + o];
                        }
                    } else if (p < TJ * (N_OUT + 1u) + N_OUT) {     // db2[o] = sum_b dlogits[b, o]
                        for (uint bb = 0u; bb < nb; bb++) acc[r] += smem[(b0 + bb) * N_OUT + p - TJ * (N_OUT + 1u)];
                    }
                }
                barrier();
            }
            for (uint r = 0u; r < SMALL; r++) {
                uint p = lid + r * THREADS;
                if (p < TJ) {
                    if (jt * TJ + p < H) update(n_in * H + jt * TJ + p, acc[r]);
                } else if (p < TJ * (N_OUT + 1u)) {
                    uint jx = jt * TJ + (p - TJ) / N_OUT, o = (p - TJ) % N_OUT;
                    if (jx < H) update(n_in * H + H + jx * N_OUT + o, acc[r]);
                } else if (p < TJ * (N_OUT + 1u) + N_OUT && jt == 0u) {
                    update(n_in * H + H + H * N_OUT + p - TJ * (N_OUT + 1u), acc[r]);
                }
            }
        } else {   // dW1[k, j] = sum_b X[b, k] dZ1[b, j] over a TK×TJ tile
            uint k0 = (kt - 1u) * TK, j = jt * TJ + jj;
            float acc[KPT];
            for (uint i = 0u; i < KPT; i++) acc[i] = 0.0;
            for (uint b0 = 0u; b0 < count; b0 += BC) {
                dz1_chunk(jt, b0, count, start, kt - 1u, true);
                barrier();
                uint nb = min(BC, count - b0);
                for (uint bb = 0u; bb < nb; bb++) {
                    float d = smem[dzo + bb * TJ + jj];
                    for (uint i = 0u; i < KPT; i++) acc[i] += smem[xo + bb * TK + kq * KPT + i] * d;
                }
                barrier();
            }
            for (uint i = 0u; i < KPT; i++) {
                uint k = k0 + kq * KPT + i;
                if (k < n_in && j < H) update(k * H + j, acc[i]);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Grid-wide barrier (PHASE 0 and 3): valid only while every work group of the dispatch is resident.
// sync[0] counts arrivals (the last to arrive resets it), sync[1] is the generation the others wait
// to see change, sync[2] is set when a wait passes SPIN_LIMIT polls: then every group stops.
// ---------------------------------------------------------------------------------------------
bool grid_barrier() {
    memoryBarrier();   // this thread's writes reach memory every group sees ...
    barrier();         // ... for every thread of the group, before thread 0 arrives
    if (lid == 0u) {
        bool ok = atomicAdd(sync[2], 0u) == 0u;
        if (ok) {
            uint generation = atomicAdd(sync[1], 0u);
            memoryBarrier();
            if (atomicAdd(sync[0], 1u) == gl_NumWorkGroups.x - 1u) {
                atomicExchange(sync[0], 0u);
                memoryBarrier();
                atomicAdd(sync[1], 1u);
            } else {
                for (uint spins = 0u; spins < SPIN_LIMIT; spins++) {
                    if (atomicAdd(sync[1], 0u) != generation) break;
                    if ((spins & 1023u) == 1023u && atomicAdd(sync[2], 0u) != 0u) break;   // another timed out
                }
                // still the old generation: timed out (here, or a driver's own loop limit: llvmpipe's)
                if (atomicAdd(sync[1], 0u) == generation) {
                    atomicOr(sync[2], 1u);
                    ok = false;
                }
            }
            memoryBarrier();
        }
        sync_ok = ok;
    }
    barrier();
    return sync_ok;
}

void main() {
    lid = gl_LocalInvocationID.x;
    uint steps = (n_samples + batch_size - 1u) / batch_size;
#if PHASE == 1
    uint s = counter[0];
    if (gl_WorkGroupID.x == 0u && lid == 0u) counter[1] = s;
    forward_phase(s * batch_size, min(batch_size, n_samples - s * batch_size));
#elif PHASE == 2
    uint s = counter[1];
    backward_phase(s * batch_size, min(batch_size, n_samples - s * batch_size));
    if (gl_WorkGroupID.x == 0u && lid == 0u) counter[0] = (s + 1u) % steps;
#elif PHASE == 0
    bool ok = true;
    uint done = 0u;
    for (uint i = 0u; i < n_steps && ok; i++) {
        uint s = first_step + i, start = s * batch_size, count = min(batch_size, n_samples - start);
        forward_phase(start, count);
        ok = grid_barrier();
        if (ok) {
            backward_phase(start, count);
            ok = grid_barrier();
        }
        if (ok) done++;
    }
    if (gl_WorkGroupID.x == 0u && lid == 0u) {
        counter[0] = (first_step + n_steps) % steps;
        counter[1] = (first_step + n_steps + steps - 1u) % steps;
        if (ok && done != n_steps) atomicOr(sync[2], 2u);   // a driver cut the loop short (llvmpipe: 65535 iterations)
        if (!ok || done != n_steps) {   // mark the chunk's losses so the CPU's next check sees it
            for (uint b = first_step * batch_size; b < min(n_samples, (first_step + n_steps) * batch_size); b++)
                losses[b] = uintBitsToFloat(0x7fc00000u);
        }
    }
#else
    for (uint i = 0u; i < n_steps; i++) {
        if (!grid_barrier()) break;
    }
#endif
}
