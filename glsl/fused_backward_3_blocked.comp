#version 430
// fused_backward_3_blocked.comp: every parameter's gradient and its optimizer update in one dispatch,
//   register-blocked: a thread sums the gradients of a 4×4 block of [W1; b1] over the batch, so every value
//   it reads from shared memory serves 4 multiply-adds, then updates those 16 weights in place
//   (SGD, momentum or Adam, chosen by OPTIMIZER); no gradient is ever stored
//
// Shapes    params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden:
//           W1 and b1 together are one (n_in+1)×H matrix, W2 and b2 one (H+1)×N_OUT matrix
//           state_m, state_v the same length (momentum's velocity in state_m; Adam's m and v)
//           A1[count,H]  dZ1[count,H]  dlogits[count,N_OUT] as the forward half wrote them, where
//           count = min(batch_size, n_samples - step*batch_size) samples are this step's batch
//           images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4 (integer division); order[n_samples] uint32, each value < n_images
//           sizes: n_in, n_hidden, n_samples, batch_size ≥ 1
// NumPy     start = step*batch_size;  X = images.view(np.uint8).reshape(-1, n_in)[order[start:start + count]] / 255
//           ones = np.ones((count, 1))
//           [dW1; db1] = np.hstack([X, ones]).T @ dZ1;  [dW2; db2] = np.hstack([A1, ones]).T @ dlogits
//           then per parameter p with gradient g:
//           OPTIMIZER 0: p -= lr * g;   1: m = mu * m + g;  p -= lr * m
//           2: m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//              p -= lr * (m / c1) / (np.sqrt(v / c2) + eps)
// Bindings  0 images uint[n_images*n_in/4] (readonly)  2 order uint[n_samples] (readonly)
//           3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (read-write)
//           4 state_m float[min(OPTIMIZER, 1)*((n_in + 1 + N_OUT)*n_hidden + N_OUT)] (read-write)
//           5 state_v float[(OPTIMIZER // 2)*((n_in + 1 + N_OUT)*n_hidden + N_OUT)] (read-write)
//           6 A1 float[batch_size*n_hidden] (readonly)  7 dZ1 float[batch_size*n_hidden] (readonly)
//           8 dlogits float[batch_size*N_OUT] (readonly)
//           A1 and dZ1 are also declared as vec4 arrays on bindings 6 and 7 (Hidden4, HiddenGrad4): one
//           buffer each, 16 bytes a read.
//           state_m is unused by SGD, state_v by SGD and momentum: any buffer will do there
// Uniforms  uint n_in (multiple of 4), n_hidden, n_samples, batch_size, step; float lr
//           float mu   (OPTIMIZER 1)
//           float beta1, beta2, one_minus_beta1, one_minus_beta2, eps, c1, c2   (OPTIMIZER 2)
//           c1 = 1 - beta1^t and c2 = 1 - beta2^t, with 1 - beta, computed on the CPU in float64
// Dispatch  local (TQ, KQ, BS); groups (ceil((n_hidden + 1)/(4*TQ)) + ceil((n_in + 1)/(4*KQ))*ceil(n_hidden/(4*TQ)), 1, 1)
//           the first ceil((H+1)/BN) groups (BN = 4*TQ) own BN rows each of [W2; b2]: a thread sums a 4×4
//           block of it (4 rows × 4 of the N_OUT columns, 3 vec4s a row) over every THREADS/(3*TQ)-th batch
//           row, from rows of A1 and dlogits staged in shared memory, then the slices' sums are added in a
//           fixed order. The rest each own a BK×BN block of [W1; b1] (BK = 4*KQ): the batch goes by in
//           stages of BS*BC rows; all threads copy a stage's BK columns of X (the row of ones for b1
//           included) and BN columns of dZ1 into shared memory, then slice z (local z) multiplies its BC
//           rows of them. Thread (x, y, z) owns inputs 4y .. 4y+3 × hidden units 4x .. 4x+3 of the
//           block: 16 running sums. At the end the BS partial sums of each gradient are added in shared
//           memory in a fixed order, then updated. A thread reads all the parameters (and optimizer
//           state) it updates before it writes any, so those reads wait for memory once, not once each.
//           No atomics: the same bits every run
// Requires  TQ*KQ*BS <= 1024;  4*KQ >= N_OUT;  n_in % 4 == 0;  n_hidden % 4 == 0 if VEC4
// Changed   vs fused_backward_1_update: a thread owns a 4×4 block of W1 (version 1: KPT inputs × 1 unit),
//           so a shared-memory read feeds 4 multiply-adds instead of 1; b1 is the row of [W1; b1] that X's
//           column of ones meets, so W1's blocks sum it (version 1 summed it in groups of its own, as it
//           does W2 and b2, a thread per gradient reading global memory in a loop over the batch: here
//           W2's groups read the batch from shared memory)
// Checked   relative error < 1e-5 against NumPy for SGD, momentum and Adam, A1, dZ1 and dlogits NaN past
//           the batch's rows, hidden sizes that are not multiples of 4*TQ (or of 4), batches of 1, 37
//           and 128, n_in 20 and 784 (tests/test_fused_tiled.py)
// Tunables  TQ*KQ*BS <= 1024 threads (checked below); with BN = 4*TQ, BK = 4*KQ,
//           16*max(BS*BC*(KQ + TQ), BS*BK*TQ) bytes of shared memory: <= 32 KiB everywhere, 48 KiB on
//           NVIDIA. VEC4 1 needs n_hidden % 4 == 0 (VEC4 0 reads dZ1 one float at a time: same sums, same
//           order). OPTIMIZER: 0 SGD, 1 momentum, 2 Adam. Defaults: 256 threads, 16 KiB; for 784-800-10
//           a GPU of 132 SMs gets 26 + 25 × 25 = 651 work groups
#ifndef TQ
#define TQ 8        // threads across the hidden units (local x), 4 units each: BN = 4*TQ units per work group
#endif
#ifndef KQ
#define KQ 8        // threads across the inputs (local y), 4 inputs each: BK = 4*KQ inputs per work group
#endif
#ifndef BS
#define BS 4        // slices of a stage's batch rows (local z), added in shared memory in a fixed order
#endif
#ifndef BC
#define BC 16       // batch rows a slice multiplies per stage
#endif
#ifndef VEC4
#define VEC4 1
#endif
#ifndef OPTIMIZER
#define OPTIMIZER 0
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if TQ * KQ * BS > 1024
#error TQ*KQ*BS must be <= 1024 (threads of a work group)
#endif
#if 4 * KQ < N_OUT
#error KQ must be >= N_OUT/4 (W2's groups stage a row of dlogits, 3 vec4s, where W1's stage KQ vec4s of X)
#endif

layout(local_size_x = TQ, local_size_y = KQ, local_size_z = BS) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 3) buffer Params { float params[]; };
layout(std430, binding = 4) buffer StateM { float state_m[]; };
layout(std430, binding = 5) buffer StateV { float state_v[]; };
layout(std430, binding = 6) readonly buffer Hidden { float A1[]; };
layout(std430, binding = 6) readonly buffer Hidden4 { vec4 A1_4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 7) readonly buffer HiddenGrad { float dZ1[]; };
layout(std430, binding = 7) readonly buffer HiddenGrad4 { vec4 dZ1_4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 8) readonly buffer LogitGrad { float dlogits[]; };

uniform uint n_in;
uniform uint n_hidden;
uniform uint n_samples;
uniform uint batch_size;
uniform uint step;
uniform float lr;
#if OPTIMIZER == 1
uniform float mu;
#elif OPTIMIZER == 2
uniform float beta1, beta2, one_minus_beta1, one_minus_beta2, eps, c1, c2;
#endif

const uint BN = 4u * TQ, BK = 4u * KQ;   // hidden units and inputs of a W1 block
const uint THREADS = TQ * KQ * BS;
const uint ROWS = BS * BC;               // batch rows of a stage
const uint XS = ROWS * KQ;               // staged X: [ROWS][KQ] vec4, 4 inputs each
const uint DS = ROWS * TQ;               // staged dZ1: [ROWS][TQ] vec4, 4 hidden units each
const uint X_LOADS = (ROWS * KQ + THREADS - 1u) / THREADS;  // packed words a thread loads per stage
const uint D_LOADS = (DS + THREADS - 1u) / THREADS;         // vec4s of dZ1 a thread loads per stage
const uint SUMS = BS * BK * TQ;          // the partial sums at the end: [BS][BK][TQ] vec4
const uint ONES = 255u;                  // the packed word of X's column of ones: pixel 255 = 1.0, then zeros

shared vec4 tile[max(XS + DS, SUMS)];    // a stage: X at 0, dZ1 at XS; after the last stage, the partial sums

uint lid, H, words, start, count, k0, j0;  // set in main: k0, j0 the block's first input and hidden unit
uint xw[X_LOADS];  // the next stage's loads, in flight while this one is multiplied: packed image words ...
vec4 dw[D_LOADS];  // ... and dZ1 vec4s

// Parameters p + i*stride + c of the rows i < rows and columns c < cols (at most 4 × 4), each with its
// gradient g[i][c], updated as NumPy's step does. Every value is read before any is written: a write to a
// buffer may alias any later read of another one, so an update a parameter at a time (read, then write,
// then the next read) would wait for each read in turn; here the reads go out together.
void update(uint p, uint stride, vec4 g[4], uint rows, uint cols) {
    float w[16];
#if OPTIMIZER >= 1
    float m[16];
#endif
#if OPTIMIZER == 2
    float v[16];
#endif
    for (uint i = 0u; i < 4u; i++)
        for (uint c = 0u; c < 4u; c++) {
            bool real = i < rows && c < cols;
            uint at = p + i * stride + c;
            w[4u * i + c] = real ? params[at] : 0.0;
#if OPTIMIZER >= 1
            m[4u * i + c] = real ? state_m[at] : 0.0;
#endif
#if OPTIMIZER == 2
            v[4u * i + c] = real ? state_v[at] : 0.0;
#endif
        }
    for (uint i = 0u; i < 4u; i++)
        for (uint c = 0u; c < 4u; c++) {
            if (i >= rows || c >= cols) continue;
            uint at = p + i * stride + c;
            float gc = g[i][c];
#if OPTIMIZER == 0
            params[at] = w[4u * i + c] - lr * gc;
#elif OPTIMIZER == 1
            float vel = mu * m[4u * i + c] + gc;
            state_m[at] = vel;
            params[at] = w[4u * i + c] - lr * vel;
#else
            float mm = beta1 * m[4u * i + c] + one_minus_beta1 * gc;
            float vv = beta2 * v[4u * i + c] + one_minus_beta2 * gc * gc;
            state_m[at] = mm;
            state_v[at] = vv;
            params[at] = w[4u * i + c] - lr * (mm / c1) / (sqrt(vv / c2) + eps);
#endif
        }
}

vec4 hidden_grad(uint b, uint j) {  // dZ1[b, j:j+4]; past column H-1 zeros (VEC4 1 needs H % 4 == 0)
#if VEC4
    return dZ1_4[(b * H + j) / 4u];
#else
    uint at = b * H + j;
    return vec4(dZ1[at], j + 1u < H ? dZ1[at + 1u] : 0.0, j + 2u < H ? dZ1[at + 2u] : 0.0,
                j + 3u < H ? dZ1[at + 3u] : 0.0);
#endif
}

// Stage s's loads into registers: batch rows s*ROWS .., word q of a row is inputs k0 + 4q .. k0 + 4q + 3
// (word n_in/4 is the column of ones, for b1; beyond it zeros); rows past the batch are zeros.
void load(uint s) {
    for (uint i = 0u; i < X_LOADS; i++) {
        uint w = lid + i * THREADS, q = k0 / 4u + w % KQ, b = s * ROWS + w / KQ;
        bool real = w < ROWS * KQ && b < count;
        xw[i] = real && q < words ? images[order[start + b] * words + q] : real && q == words ? ONES : 0u;
    }
    for (uint i = 0u; i < D_LOADS; i++) {
        uint w = lid + i * THREADS, b = s * ROWS + w / TQ, j = j0 + 4u * (w % TQ);
        dw[i] = (w < DS && b < count && j < H) ? hidden_grad(b, j) : vec4(0.0);
    }
}

// The loaded stage from registers into shared memory, the pixels unpacked to [0, 1].
void store() {
    for (uint i = 0u; i < X_LOADS; i++) {
        uint w = lid + i * THREADS, p = xw[i];
        if (w < ROWS * KQ)
            tile[w] =
                vec4(float(p & 255u), float((p >> 8u) & 255u), float((p >> 16u) & 255u), float(p >> 24u)) / 255.0;
    }
    for (uint i = 0u; i < D_LOADS; i++) {
        uint w = lid + i * THREADS;
        if (w < DS) tile[XS + w] = dw[i];
    }
}

// A1's 4 columns j .. j+3 of batch row b as the W2 blocks read them: column H is the column of ones (for
// b2), columns past it zeros, rows past the batch zeros (VEC4 1: one 16-byte read, as H % 4 == 0)
vec4 hidden_row(uint b, uint j) {
    if (b >= count || j > H) return vec4(0.0);
#if VEC4
    return j == H ? vec4(1.0, 0.0, 0.0, 0.0) : A1_4[(b * H + j) / 4u];
#else
    uint at = b * H + j;
    vec4 a;
    for (uint c = 0u; c < 4u; c++) a[c] = j + c < H ? A1[at + c] : j + c == H ? 1.0 : 0.0;
    return a;
#endif
}

const uint OQ = (N_OUT + 3u) / 4u;                           // vec4s of a dlogits row (padded to 12)
const uint HROWS = max(XS + DS, SUMS) / (TQ + OQ);           // batch rows of a W2 block's stage: as many as fit
const uint A_LOADS = (HROWS * TQ + THREADS - 1u) / THREADS;  // A1 vec4s a thread loads per stage ...
const uint L_LOADS = (HROWS * OQ + THREADS - 1u) / THREADS;  // ... and dlogits vec4s
vec4 aw[A_LOADS], lw[L_LOADS];                              // the next stage's, in flight

// Batch rows s*HROWS .. of A1 (hidden units j0 .. j0+BN-1, the column of ones at H) and of dlogits into
// registers; every read is issued before any is used
void head_load(uint s) {
    for (uint i = 0u; i < A_LOADS; i++) {
        uint w = lid + i * THREADS;
        aw[i] = w < HROWS * TQ ? hidden_row(s * HROWS + w / TQ, j0 + 4u * (w % TQ)) : vec4(0.0);
    }
    for (uint i = 0u; i < L_LOADS; i++) {
        uint w = lid + i * THREADS, b = s * HROWS + w / OQ, o = 4u * (w % OQ);
        vec4 d = vec4(0.0);
        for (uint c = 0u; c < 4u; c++)
            d[c] = w < HROWS * OQ && b < count && o + c < N_OUT ? dlogits[b * N_OUT + o + c] : 0.0;
        lw[i] = d;
    }
}

void head_store() {  // dlogits rows at 0, A1 rows after them
    for (uint i = 0u; i < A_LOADS; i++) {
        uint w = lid + i * THREADS;
        if (w < HROWS * TQ) tile[HROWS * OQ + w] = aw[i];
    }
    for (uint i = 0u; i < L_LOADS; i++) {
        uint w = lid + i * THREADS;
        if (w < HROWS * OQ) tile[w] = lw[i];
    }
}

// [dW2; db2] for rows j0 .. j0+BN-1 of [W2; b2] (row H is b2, met by A1's column of ones): thread t sums
// a 4×4 block (hidden units j0 + 4jq .., outputs 4oq ..) over batch rows slice, slice + SLICES, ... of each
// stage of HROWS rows (as many as the shared tile holds: 93 at the defaults, so two stages at batch 128),
// from A1 and dlogits staged as vec4s (dlogits padded to 12 a row), the next stage's reads in flight
// meanwhile; then the SLICES partial sums of each block in a fixed order, and the update.
void head_block() {
    const uint SLICES = THREADS / (OQ * TQ);
    uint jq = lid % TQ, oq = (lid / TQ) % OQ, slice = lid / (OQ * TQ);
    vec4 acc[4];  // acc[i]: hidden unit j0 + 4jq + i, outputs 4oq .. 4oq+3
    for (uint i = 0u; i < 4u; i++) acc[i] = vec4(0.0);
    uint stages = (count + HROWS - 1u) / HROWS;
    head_load(0u);
    for (uint s = 0u; s < stages; s++) {
        head_store();
        barrier();
        if (s + 1u < stages) head_load(s + 1u);  // in flight while this stage is multiplied
        for (uint r = slice; r < HROWS && slice < SLICES; r += SLICES) {
            vec4 a = tile[HROWS * OQ + r * TQ + jq], d = tile[r * OQ + oq];
            acc[0] += a.x * d;
            acc[1] += a.y * d;
            acc[2] += a.z * d;
            acc[3] += a.w * d;
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; i++) tile[lid * 4u + i] = acc[i];  // THREADS*4 vec4s: SUMS, always room
    barrier();
    if (lid >= OQ * TQ) return;
    vec4 sum[4];
    for (uint i = 0u; i < 4u; i++) {
        sum[i] = tile[lid * 4u + i];
        for (uint sl = 1u; sl < SLICES; sl++) sum[i] += tile[(sl * OQ * TQ + lid) * 4u + i];
    }
    uint j = j0 + 4u * jq;  // rows j .. j+3 of [W2; b2], those up to H real
    update((n_in + 1u) * H + j * N_OUT + 4u * oq, N_OUT, sum, j <= H ? min(4u, H + 1u - j) : 0u,
           min(4u, N_OUT - 4u * oq));
}

void main() {
    lid = gl_LocalInvocationIndex;
    H = n_hidden;
    words = n_in / 4u;
    start = step * batch_size;
    count = min(batch_size, n_samples - start);
    uint head_groups = (H + 1u + BN - 1u) / BN;
    uint g = gl_WorkGroupID.x;
    if (g < head_groups) {  // the same branch for the whole group, so the barriers are reached by all
        j0 = g * BN;
        head_block();
        return;
    }
    uint block = g - head_groups, blocks_j = (H + BN - 1u) / BN;
    k0 = (block / blocks_j) * BK;
    j0 = (block % blocks_j) * BN;
    uint x = gl_LocalInvocationID.x, y = gl_LocalInvocationID.y, z = gl_LocalInvocationID.z;

    vec4 acc[4];  // acc[i]: input k0 + 4y + i, hidden units j0 + 4x .. 4x+3
    for (uint i = 0u; i < 4u; i++) acc[i] = vec4(0.0);
    uint stages = (count + ROWS - 1u) / ROWS;
    load(0u);
    store();
    barrier();
    for (uint s = 0u; s < stages; s++) {
        if (s + 1u < stages) load(s + 1u);  // in flight while this stage is multiplied
        for (uint rr = 0u; rr < BC; rr++) {
            uint r = z * BC + rr;              // this slice's row of the stage
            vec4 xq = tile[r * KQ + y];        // inputs 4y .. 4y+3 of the row
            vec4 d = tile[XS + r * TQ + x];    // dZ1 of hidden units 4x .. 4x+3 of the row
            acc[0] += xq.x * d;
            acc[1] += xq.y * d;
            acc[2] += xq.z * d;
            acc[3] += xq.w * d;
        }
        barrier();  // every slice is done with this stage
        if (s + 1u < stages) {
            store();
            barrier();
        }
    }

    // The BS partial sums of each gradient in a fixed order, then the update: an iteration takes 4 units.
    for (uint i = 0u; i < 4u; i++) tile[(z * BK + 4u * y + i) * TQ + x] = acc[i];
    barrier();
    for (uint o = lid; o < BK * TQ; o += THREADS) {
        uint k = k0 + o / TQ, j = j0 + 4u * (o % TQ);  // k == n_in: the row of b1
        if (k > n_in || j >= H) continue;
        vec4 sum[4] = vec4[4](tile[o], vec4(0.0), vec4(0.0), vec4(0.0));  // one row of [W1; b1]
        for (uint slice = 1u; slice < BS; slice++) sum[0] += tile[slice * BK * TQ + o];
        update(k * H + j, 0u, sum, 1u, min(4u, H - j));
    }
}
