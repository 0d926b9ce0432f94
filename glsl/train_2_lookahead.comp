#version 430
// train_2_lookahead.comp: one SGD step of the N_IN-H-10 MLP in ONE dispatch. The step's layer 1 does not
//   wait for the previous step's update of W1, because algebra already knows what that update does to it:
//     with Xt = [X, 1] (the batch with a column of ones) and W = [W1; b1], SGD sets W_t = W_{t-1} - lr·Xt_{t-1}^T dZ1_{t-1}, so
//     Xt_t W_t = Xt_t W_{t-1} - lr·(Xt_t Xt_{t-1}^T)·dZ1_{t-1} = Q_t - lr·G[t,0]·dZ1_{t-1}
//   Q_t = Xt_t W_{t-1} is computed one dispatch early (from W_{t-2}, by the same identity with G[t,1]), and
//   the dot products G (gram_1_lags.comp) depend only on the images, so layer 1's long sum over the 785
//   inputs leaves the chain from one step to the next: what remains on it is a sum over the batch. Three
//   kinds of work group share the dispatch, each reading only what earlier dispatches wrote:
//     chain  rows of step t: Z1 = (sum of Q_t's parts) - lr·G[t,0]·dZ1_{t-1}, [W2; b2]_t, logits, softmax
//            cross-entropy, dlogits, dZ1_t, and this group's part of the next [W2; b2] gradient
//     W1     a 32×32 block of W_t = W_{t-1} - lr·Xt_{t-1}^T dZ1_{t-1}
//     Q      a 32×32 tile of one part of Q_{t+1} = Xt_{t+1} W_{t-1} - lr·G[t+1,1]·dZ1_{t-1}: parts 0 .. S-1
//            sum a quarter (S = 4) of the inputs each, part S the term with G
//   step -1 (before the first) computes Q_0 and hands step 0 a zero dZ1 and [W2; b2] gradient; step = steps
//   (after the last) only writes W and [W2; b2]
//
// Shapes    images: n_images rows of N_IN/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(N_IN/4) + p/4; labels[n_images] uint32; order[n_samples] uint32, each < n_images.
//           Step t's batch is count = min(batch_size, n_samples - t*batch_size) samples from position
//           t*batch_size; batch-sized buffers have B_PAD rows, rows past count hold zeros.
//           params: two copies, each [W1 (N_IN×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32 (H = HIDDEN),
//           copy c at float c*param_stride: step t reads copy (t+1)%2 (the weights W_{t-1}) and writes copy
//           t%2. gram[steps, 2, B_PAD, B_PAD] from gram_1_lags. The step's outputs alternate the same way
//           (copy t%2 written, (t+1)%2 read): dZ1[2, B_PAD, H],
//           w2parts[2, B_PAD/RC, (H+1)*N_OUT] (each chain group's sum over its rows of [A1, 1]^T dlogits),
//           Q[2, S+1, B_PAD, H] (copy (t+1)%2 holds Q_{t+1}'s parts); losses[n_samples], one a sample at its
//           epoch position. Before step -1: both params copies hold the weights, dZ1 holds finite values
//           sizes: n_samples, batch_size, steps, param_stride ≥ 1
// NumPy     the same arithmetic as one plain SGD step a dispatch (mean cross-entropy over the batch):
//           X = images.view(np.uint8).reshape(-1, N_IN)[order[t*batch_size:][:count]] / 255;  y likewise
//           A1 = relu(X @ W1 + b1);  logits = A1 @ W2 + b2;  z = logits - logits.max(1, keepdims=True)
//           losses = log(exp(z).sum(1)) - z[range(count), y];  dlogits = (softmax(logits) - eye(N_OUT)[y]) / count
//           dZ1 = (dlogits @ W2.T) * (A1 > 0);  W1 -= lr * X.T @ dZ1;  b1 -= lr * dZ1.sum(0)
//           W2 -= lr * A1.T @ dlogits;  b2 -= lr * dlogits.sum(0)
//           in another order of rounding, so the weights agree with it to float32 rounding, not bit for bit
// Bindings  0 images uint[n_images*N_IN/4] (readonly)  1 labels uint[n_images] (readonly)
//           2 order uint[n_samples] (readonly)  3 params float[2*param_stride] (read-write)
//           4 gram float[steps*2*B_PAD*B_PAD] (readonly)  7 dZ1 float[2*B_PAD*HIDDEN] (read-write)
//           9 losses float[n_samples] (writeonly)
//           12 Q float[2*(S + 1)*B_PAD*HIDDEN] (read-write)
//           13 w2parts float[2*(B_PAD/RC)*(HIDDEN + 1)*N_OUT] (read-write)
//           params, gram, dZ1 and Q are also declared as vec4 arrays (16 bytes a read)
// Uniforms  uint n_samples (length of order), batch_size, steps, param_stride, roles; int step; float lr
//           steps = ceil(n_samples/batch_size), the steps of an epoch; step runs from -1 to steps;
//           param_stride a multiple of 4, >= (N_IN + 1 + N_OUT)*HIDDEN + N_OUT. roles: bit 0 the chain
//           groups, bit 1 the W1 groups, bit 2 the Q groups run; 7 trains, anything else is only for timing
//           a kind of group alone (the weights are then wrong)
// Dispatch  local (256, 1, 1); groups (B_PAD/RC + ceil((N_IN + 1)/32)*ceil(HIDDEN/32) + (S + 1)*(B_PAD/32)*ceil(HIDDEN/32), 1, 1)
//           the chain groups first (group g owns batch rows g*RC .. g*RC+RC-1), then the W1 blocks, then
//           the Q tiles. No atomics and no grid barrier: the dispatch's end is the step's only sync point,
//           and every sum runs in a fixed order, so the same seed gives the same bits
// Requires  N_IN % 4 == 0;  HIDDEN % 4 == 0;  B_PAD % 32 == 0;  B_PAD % RC == 0;  3*RC*N_OUT <= 256;
//           batch_size <= B_PAD;  param_stride % 4 == 0;  param_stride >= (N_IN + 1 + N_OUT)*HIDDEN + N_OUT
// Changed   vs train_1_persistent: one dispatch a step with no grid barrier, every work group resident or
//           not. train_1_persistent keeps a dispatch running across steps and makes its groups wait for each other at
//           barriers built on atomics; here nothing in a dispatch waits for another group, because the
//           layer-1 product that needed the whole updated W1 is computed one step ahead (the identity above).
//           A chain group issues all of its reads from memory before it uses any
//           (one wait for memory instead of one a loop)
// Checked   relative error < 1e-5 against plain SGD in NumPy (float64) over two epochs, Q and w2parts
//           poisoned with NaN first, hidden sizes 8, 36 and 128, batches 37, 64 and 128 and a leftover last
//           batch, n_in 20 and 784; the same bits on a second run (tests/test_lookahead.py, on llvmpipe and an NVIDIA GPU)
// Tunables  RC rows a chain group (3*RC*N_OUT <= 256, B_PAD % RC == 0); S parts of Q's input range;
//           HIDDEN % 4 == 0; B_PAD >= batch_size, a multiple of 32; N_IN % 4 == 0. Shared memory, each
//           array rounded up to 16 bytes: 4*(RC*(B_PAD + HIDDEN + 1) + (HIDDEN + 1)*N_OUT + 3*RC*N_OUT + B_PAD)
//           + 16,384 bytes: 31,248 at 784-128-10, batch 128; over NVIDIA's 49,152 past HIDDEN 376 at RC 8
#ifndef N_IN
#define N_IN 784
#endif
#ifndef HIDDEN
#define HIDDEN 128
#endif
#ifndef B_PAD
#define B_PAD 128
#endif
#ifndef RC
#define RC 8
#endif
#ifndef S
#define S 4
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#pragma optionNV(unroll all)
#if N_IN % 4 != 0 || HIDDEN % 4 != 0 || B_PAD % 32 != 0 || B_PAD % RC != 0 || 3 * RC * N_OUT > 256
#error needs N_IN % 4 == 0, HIDDEN % 4 == 0, B_PAD % 32 == 0, B_PAD % RC == 0 and 3*RC*N_OUT <= 256
#endif

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) buffer Params { float params[]; };
layout(std430, binding = 3) buffer Params4 { vec4 params4[]; };   // the same buffer, 16 bytes a read
layout(std430, binding = 4) readonly buffer Gram { float gram[]; };
layout(std430, binding = 4) readonly buffer Gram4 { vec4 gram4[]; };
layout(std430, binding = 7) buffer HiddenGrad { float dZ1[]; };
layout(std430, binding = 7) buffer HiddenGrad4 { vec4 dZ1_4[]; };
layout(std430, binding = 9) writeonly buffer Losses { float losses[]; };
layout(std430, binding = 12) buffer Ahead { float Q[]; };
layout(std430, binding = 12) buffer Ahead4 { vec4 Q4[]; };   // the same buffer, the view this shader uses
layout(std430, binding = 13) buffer W2Parts { float w2parts[]; };

uniform uint n_samples;
uniform uint batch_size;
uniform uint steps;
uniform uint param_stride;
uniform uint roles;
uniform int step;
uniform float lr;

const uint THREADS = 256u, H = HIDDEN, H4 = HIDDEN / 4u, WORDS = N_IN / 4u;
const uint CHAINS = B_PAD / RC;                  // chain groups
const uint W2N = (HIDDEN + 1u) * N_OUT;          // [W2; b2] as one (H+1)×N_OUT matrix
const uint W2_AT = (N_IN + 1u) * HIDDEN;         // where W2 starts in a params copy
const uint NO_ROW = 0xFFFFFFFFu;

shared vec4 g4_s[RC * B_PAD / 4];  // chain: the group's rows of G[t, 0]
shared uint y_s[RC];               // chain: the labels of the group's rows
shared float z_s[RC * HIDDEN];     // chain: the group's rows of Z1
shared float w2_s[W2N];            // chain: [W2; b2]_t
shared float logit_s[3 * RC * N_OUT];   // chain: three partial sums of each logit, then dlogits
shared vec4 tile[1024];            // every kind: staged operands, 16 KiB
shared uint row_start[B_PAD];      // W1 and Q: where each batch row's image starts in images[]

uint lid;

uint count_of(int t) {   // samples in step t's batch; 0 outside the epoch
    return t < 0 || t >= int(steps) ? 0u : min(batch_size, n_samples - uint(t) * batch_size);
}

uint copy_of(int t) { return uint(t + 2) & 1u; }   // which copy step t writes (t >= -2)

void set_row_starts(int t) {   // row_start[b] for step t's batch (NO_ROW past it)
    uint count = count_of(t);
    for (uint b = lid; b < B_PAD; b += THREADS)
        row_start[b] = b < count ? order[uint(t) * batch_size + b] * WORDS : NO_ROW;
}

vec4 input_word(uint b, uint w) {   // inputs 4w .. 4w+3 of staged row b as floats; w == WORDS: the 1
    uint start = row_start[b];
    if (start == NO_ROW || w > WORDS) return vec4(0.0);
    if (w == WORDS) return vec4(1.0, 0.0, 0.0, 0.0);
    uint p = images[start + w];
    return vec4(float(p & 255u), float((p >> 8u) & 255u), float((p >> 16u) & 255u), float(p >> 24u)) / 255.0;
}

// Step -1's outputs, for step 0: a zero dZ1 (rows r0 .. r0+RC-1) and a zero part of the [W2; b2] gradient.
void hand_zeros(uint g) {
    uint now = copy_of(-1);
    for (uint o = lid; o < RC * H; o += THREADS) dZ1[(now * B_PAD + g * RC) * H + o] = 0.0;
    for (uint o = lid; o < W2N; o += THREADS) w2parts[(now * CHAINS + g) * W2N + o] = 0.0;
}

// The chain: rows r0 .. r0+RC-1 of step t, from Q_t, G[t, 0], dZ1_{t-1} and the previous [W2; b2]. The
// chain is a series of dependent steps, so every read from memory it needs is issued first, all at once:
// one wait for memory instead of one a loop
void chain(uint g, int t) {
    uint r0 = g * RC, now = copy_of(t), before = copy_of(t - 1), count = count_of(t);
    const uint W2_PER = (W2N + THREADS - 1u) / THREADS;               // [W2; b2] entries a thread
    const uint G_PER = (RC * B_PAD / 4u + THREADS - 1u) / THREADS;     // vec4s of G[t, 0]'s rows a thread
    const uint OUTS = (RC * H4 + THREADS - 1u) / THREADS;              // vec4s of Z1 a thread
    const uint D_PER = (B_PAD * H4 + THREADS - 1u) / THREADS;          // vec4s of dZ1_{t-1} a thread
    const uint ROWS = min(1024u / H4 / 4u * 4u, B_PAD), STAGES = (B_PAD + ROWS - 1u) / ROWS;   // dZ1_{t-1} rows a stage of tile
    vec4 gs[G_PER], q[OUTS], d[D_PER];   // (step t == steps reads none of them)
    bool last = t == int(steps);
    for (uint i = 0u; i < G_PER; i++) {   // this group's RC rows of G[t, 0]
        uint e = lid + i * THREADS;
        gs[i] = !last && e < RC * B_PAD / 4u ? gram4[((uint(t) * 2u * B_PAD + r0) * B_PAD) / 4u + e] : vec4(0.0);
    }
    for (uint i = 0u; i < OUTS; i++) {    // thread o owns 4 hidden units of one row: Q_t there, summed over its parts
        uint o = lid + i * THREADS;
        q[i] = vec4(0.0);
        if (!last && o < RC * H4) for (uint s = 0u; s <= S; s++) q[i] += Q4[((now * (S + 1u) + s) * B_PAD + r0 + o / H4) * H4 + o % H4];
    }
    for (uint i = 0u; i < D_PER; i++) {   // all of dZ1_{t-1}
        uint e = lid + i * THREADS;
        d[i] = !last && e < B_PAD * H4 ? dZ1_4[before * B_PAD * H4 + e] : vec4(0.0);
    }
    if (lid < RC && !last) {
        uint b = r0 + lid;
        y_s[lid] = b < count ? labels[order[uint(t) * batch_size + b]] : 0u;
    }
    // [W2; b2]_t = [W2; b2]_{t-1} - lr * (the chain groups' parts of its gradient, in group order)
    float w2[W2_PER];
    for (uint i = 0u; i < W2_PER; i++) {
        uint o = lid + i * THREADS;
        w2[i] = 0.0;
        if (o < W2N) {
            float grad = 0.0;
            for (uint p = 0u; p < CHAINS; p++) grad += w2parts[(before * CHAINS + p) * W2N + o];
            w2[i] = params[before * param_stride + W2_AT + o] - lr * grad;
        }
    }
    if (last) {   // after the last step: only the final [W2; b2]
        if (g == 0u) for (uint i = 0u; i < W2_PER; i++) if (lid + i * THREADS < W2N) params[now * param_stride + W2_AT + lid + i * THREADS] = w2[i];
        return;
    }
    for (uint i = 0u; i < W2_PER; i++) if (lid + i * THREADS < W2N) w2_s[lid + i * THREADS] = w2[i];
    for (uint i = 0u; i < G_PER; i++) if (lid + i * THREADS < RC * B_PAD / 4u) g4_s[lid + i * THREADS] = gs[i];

    // Z1 = Q_t - lr * G[t, 0] dZ1_{t-1}: dZ1_{t-1} passes through tile ROWS rows a stage
    vec4 gd[OUTS];
    for (uint i = 0u; i < OUTS; i++) gd[i] = vec4(0.0);
    for (uint stage = 0u; stage < STAGES; stage++) {
        barrier();   // the last stage's reads of tile are done (and g4_s is written)
        for (uint i = 0u; i < D_PER; i++) {
            uint e = lid + i * THREADS;
            if (e / (ROWS * H4) == stage && e < B_PAD * H4) tile[e % (ROWS * H4)] = d[i];
        }
        barrier();
        for (uint i = 0u; i < OUTS; i++) {
            uint o = lid + i * THREADS, r = o / H4, c = o % H4;
            if (o < RC * H4) for (uint b4 = 0u; b4 < ROWS / 4u && stage * ROWS + 4u * b4 < B_PAD; b4++) {
                vec4 gv = g4_s[(r * B_PAD + stage * ROWS) / 4u + b4];
                gd[i] += gv.x * tile[(4u * b4) * H4 + c] + gv.y * tile[(4u * b4 + 1u) * H4 + c]
                       + gv.z * tile[(4u * b4 + 2u) * H4 + c] + gv.w * tile[(4u * b4 + 3u) * H4 + c];
            }
        }
    }
    for (uint i = 0u; i < OUTS; i++) {
        uint o = lid + i * THREADS;
        if (o < RC * H4) {
            vec4 z = q[i] - lr * gd[i];
            for (uint c = 0u; c < 4u; c++) z_s[4u * o + c] = z[c];   // row o / H4, unit 4*(o % H4) + c
        }
    }
    barrier();
    if (g == 0u) for (uint o = lid; o < W2N; o += THREADS) params[now * param_stride + W2_AT + o] = w2_s[o];

    // logits: thread (part, r, c) sums a third of the hidden units of row r's logit c
    const uint THIRD = (H + 2u) / 3u;
    if (lid < 3u * RC * N_OUT) {
        uint part = lid / (RC * N_OUT), r = lid % (RC * N_OUT) / N_OUT, c = lid % N_OUT;
        float sum = 0.0;
        for (uint j = part * THIRD; j < min(H, part * THIRD + THIRD); j++) sum += max(z_s[r * H + j], 0.0) * w2_s[j * N_OUT + c];
        logit_s[lid] = sum;
    }
    barrier();
    // softmax cross-entropy: a thread a row; dlogits replace the row's logits in logit_s
    if (lid < RC) {
        uint b = r0 + lid;
        float l[N_OUT];
        for (uint c = 0u; c < N_OUT; c++) {
            uint e = lid * N_OUT + c;
            l[c] = w2_s[H * N_OUT + c] + logit_s[e] + logit_s[RC * N_OUT + e] + logit_s[2u * RC * N_OUT + e];
        }
        if (b < count) {
            float m = l[0], e = 0.0;
            for (uint c = 1u; c < N_OUT; c++) m = max(m, l[c]);
            for (uint c = 0u; c < N_OUT; c++) e += exp(l[c] - m);
            uint y = y_s[lid];
            losses[uint(t) * batch_size + b] = log(e) - (l[y] - m);
            for (uint c = 0u; c < N_OUT; c++) l[c] = (exp(l[c] - m) / e - (c == y ? 1.0 : 0.0)) / float(count);
        } else {
            for (uint c = 0u; c < N_OUT; c++) l[c] = 0.0;
        }
        for (uint c = 0u; c < N_OUT; c++) logit_s[lid * N_OUT + c] = l[c];
    }
    barrier();
    // dZ1_t = (dlogits W2_t^T) * (Z1 > 0), and this group's part of the next [W2; b2] gradient
    for (uint o = lid; o < RC * H; o += THREADS) {
        uint r = o / H, j = o % H;
        float d = 0.0;
        for (uint c = 0u; c < N_OUT; c++) d += logit_s[r * N_OUT + c] * w2_s[j * N_OUT + c];
        dZ1[(now * B_PAD + r0 + r) * H + j] = z_s[o] > 0.0 ? d : 0.0;
    }
    for (uint o = lid; o < W2N; o += THREADS) {
        uint j = o / N_OUT, c = o % N_OUT;
        float sum = 0.0;
        for (uint r = 0u; r < RC; r++)
            sum += (j < H ? max(z_s[r * H + j], 0.0) : (r0 + r < count ? 1.0 : 0.0)) * logit_s[r * N_OUT + c];
        w2parts[(now * CHAINS + g) * W2N + o] = sum;
    }
}

// A 32×32 block of W_t = W_{t-1} - lr * Xt_{t-1}^T dZ1_{t-1}: thread (x, y, z) sums inputs 4y .. 4y+3 ×
// hidden units 4x .. 4x+3 over rows z*16 .. z*16+15 of each 64-row stage; the 4 slices are added at the end.
void w1_block(uint block, int t) {
    uint now = copy_of(t), before = copy_of(t - 1), count = count_of(t - 1);
    uint across = (H + 31u) / 32u, k0 = block / across * 32u, j0 = block % across * 32u;
    uint x = lid % 8u, y = lid / 8u % 8u, z = lid / 64u;
    set_row_starts(t - 1);
    barrier();
    vec4 acc[4], xs[2], ds[2];
    for (uint i = 0u; i < 4u; i++) acc[i] = vec4(0.0);
    for (uint i = 0u; i < 2u; i++) {   // stage 0's loads: 64 rows x 8 words of Xt, 64 rows x 8 vec4 of dZ1
        uint e = lid + i * THREADS, b = e / 8u, j = j0 + 4u * (e % 8u);
        xs[i] = input_word(b, k0 / 4u + e % 8u);
        ds[i] = b < count && j < H ? dZ1_4[(before * B_PAD + b) * H4 + j / 4u] : vec4(0.0);
    }
    for (uint b0 = 0u; b0 < count; b0 += 64u) {
        for (uint i = 0u; i < 2u; i++) {
            tile[lid + i * THREADS] = xs[i];
            tile[512u + lid + i * THREADS] = ds[i];
        }
        barrier();
        if (b0 + 64u < count) for (uint i = 0u; i < 2u; i++) {   // the next stage's, while this one is multiplied
            uint e = lid + i * THREADS, b = b0 + 64u + e / 8u, j = j0 + 4u * (e % 8u);
            xs[i] = b < B_PAD ? input_word(b, k0 / 4u + e % 8u) : vec4(0.0);
            ds[i] = b < count && j < H ? dZ1_4[(before * B_PAD + b) * H4 + j / 4u] : vec4(0.0);
        }
        for (uint rr = 0u; rr < 16u; rr++) {
            uint r = z * 16u + rr;
            vec4 xq = tile[r * 8u + y], d = tile[512u + r * 8u + x];
            acc[0] += xq.x * d; acc[1] += xq.y * d; acc[2] += xq.z * d; acc[3] += xq.w * d;
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; i++) tile[(z * 32u + 4u * y + i) * 8u + x] = acc[i];
    barrier();
    uint k = k0 + lid / 8u, j = j0 + 4u * (lid % 8u);   // 256 threads: one per 4 weights of the block
    if (k <= N_IN && j < H) {
        vec4 grad = tile[lid] + tile[256u + lid] + tile[512u + lid] + tile[768u + lid];
        uint at = k * H + j;
        params4[(now * param_stride + at) / 4u] = params4[(before * param_stride + at) / 4u] - lr * grad;
    }
}

// A 32×32 tile (rows b0.., hidden units j0..) of part `part` of Q_{t+1}: thread (x, y) owns row y, units 4x .. 4x+3
void q_tile(uint tile_index, int t) {
    uint before = copy_of(t - 1), across = (H + 31u) / 32u, per_part = B_PAD / 32u * across;
    uint part = tile_index / per_part, b0 = tile_index % per_part / across * 32u, j0 = tile_index % across * 32u;
    uint x = lid % 8u, y = lid / 8u, j = j0 + 4u * x;
    vec4 acc = vec4(0.0);
    if (part < S) {   // Xt_{t+1} W_{t-1} over this part's words w0 .. w1-1 (word WORDS: the 1 meeting b1)
        set_row_starts(t + 1);
        barrier();
        uint per = (WORDS + S) / S, w0 = part * per, w1 = min(w0 + per, WORDS + 1u);
        uint w = w0 + x, k = 4u * w0 + y;   // this thread's loads: word w of row b0 + y, row k of W
        vec4 xs = w < w1 ? input_word(b0 + y, w) : vec4(0.0);
        vec4 ws = k <= N_IN && k < 4u * w1 && j < H ? params4[(before * param_stride + k * H + j) / 4u] : vec4(0.0);
        for (uint wc = w0; wc < w1; wc += 8u) {
            tile[lid] = xs;
            tile[256u + lid] = ws;
            barrier();
            w = wc + 8u + x;
            k = 4u * (wc + 8u) + y;
            if (wc + 8u < w1) {   // the next 8 words' loads, while these are multiplied
                xs = w < w1 ? input_word(b0 + y, w) : vec4(0.0);
                ws = k <= N_IN && k < 4u * w1 && j < H ? params4[(before * param_stride + k * H + j) / 4u] : vec4(0.0);
            }
            for (uint i = 0u; i < 8u; i++) {
                vec4 a = tile[y * 8u + i];
                acc += a.x * tile[256u + 32u * i + x] + a.y * tile[256u + 32u * i + 8u + x]
                     + a.z * tile[256u + 32u * i + 16u + x] + a.w * tile[256u + 32u * i + 24u + x];
            }
            barrier();
        }
    } else {          // -lr * G[t+1, 1] dZ1_{t-1}, 32 batch rows at a time
        for (uint c0 = 0u; c0 < B_PAD; c0 += 32u) {
            tile[lid] = gram4[((uint(t + 1) * 2u + 1u) * B_PAD + b0 + y) * B_PAD / 4u + c0 / 4u + x];
            tile[256u + lid] = j < H ? dZ1_4[(before * B_PAD + c0 + y) * H4 + j / 4u] : vec4(0.0);
            barrier();
            for (uint i = 0u; i < 8u; i++) {
                vec4 a = tile[y * 8u + i];
                acc += a.x * tile[256u + 32u * i + x] + a.y * tile[256u + 32u * i + 8u + x]
                     + a.z * tile[256u + 32u * i + 16u + x] + a.w * tile[256u + 32u * i + 24u + x];
            }
            barrier();
        }
        acc *= -lr;
    }
    if (j < H) Q4[((copy_of(t + 1) * (S + 1u) + part) * B_PAD + b0 + y) * H4 + j / 4u] = acc;
}

void main() {
    lid = gl_LocalInvocationIndex;
    uint g = gl_WorkGroupID.x, w1_blocks = (N_IN + 32u) / 32u * ((H + 31u) / 32u);
    if (g < CHAINS) {                       // the same branch for a whole group: its barriers are reached by all
        if (step >= 0 && (roles & 1u) != 0u) chain(g, step);
        else if (step == -1) hand_zeros(g);
    } else if (g < CHAINS + w1_blocks) {
        if (step >= 0 && (roles & 2u) != 0u) w1_block(g - CHAINS, step);
    } else if (step + 1 < int(steps) && (roles & 4u) != 0u) {
        q_tile(g - CHAINS - w1_blocks, step);
    }
}
