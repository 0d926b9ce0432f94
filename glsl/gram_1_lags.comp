#version 430
// gram_1_lags.comp: for every step t of an epoch, the dot products of its batch's images with those of the
//   two steps before it: G[t, l] = Xt[t] · Xt[t-1-l]^T for l = 0, 1, where Xt[s] is step s's batch as rows
//   of floats in [0, 1] with a 1 appended (the input that meets the bias). train_2_lookahead needs them to
//   reach the next step's layer 1 without waiting for this step's update of W1
//
// Shapes    images: n_images rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian)
//           of word i*(n_in/4) + p/4, n_in = N_IN; order[n_samples] uint32, each value < n_images
//           gram[steps, 2, B_PAD, B_PAD]: rows past a batch's count = min(batch_size, n_samples -
//           s*batch_size) samples, and steps before the epoch's first, are rows of zeros (their products 0)
//           sizes: n_samples, batch_size, steps ≥ 1
// NumPy     X = images.view(np.uint8).reshape(-1, n_in) / 255
//           def Xt(s):  # step s's batch with a column of ones, B_PAD rows, zero past the batch
//               out = np.zeros((B_PAD, n_in + 1))
//               if s >= 0: rows = order[s*batch_size:(s + 1)*batch_size]; out[:len(rows)] = np.hstack([X[rows], np.ones((len(rows), 1))])
//               return out
//           gram[t, l] = Xt(t) @ Xt(t - 1 - l).T   for t in range(steps), l in (0, 1)
// Bindings  0 images uint[n_images*N_IN/4] (readonly)  2 order uint[n_samples] (readonly)
//           4 gram float[steps*2*B_PAD*B_PAD] (writeonly)
//           the binding numbers are train_2_lookahead's, which reads gram
// Uniforms  uint n_samples (length of order), batch_size, steps
//           steps = ceil(n_samples/batch_size), the steps of an epoch
// Dispatch  local (16, 16, 1); groups (ceil(2*B_PAD/64), ceil(B_PAD/64), steps)
//           group (x, y, t) owns rows 64y .. 64y+63 of step t and the 64 columns 64x .. 64x+63 of
//           [G[t, 0] | G[t, 1]] side by side (column c < B_PAD is row c of step t-1, column B_PAD + c row c
//           of step t-2). The inputs go by 32 at a time (8 packed words): all threads copy them, unpacked
//           to floats, for the group's 64 rows and 64 columns into shared memory, then thread (x, y) adds
//           the products for its 4×4 outputs, rows 4y .. 4y+3 × columns 4x .. 4x+3, four inputs a dot()
// Requires  N_IN % 4 == 0;  batch_size <= B_PAD
// Changed   first version
// Checked   relative error < 1e-5 against NumPy in float64, gram poisoned with NaN first, batches that are
//           not multiples of 64 and a leftover last batch (tests/test_lookahead.py)
// Tunables  N_IN a multiple of 4 (the packed words); B_PAD >= batch_size, train_2_lookahead's. Shared
//           memory: 2*64*9*16 + 2*64*4 = 18,944 bytes
#ifndef N_IN
#define N_IN 784
#endif
#ifndef B_PAD
#define B_PAD 128
#endif
#if N_IN % 4 != 0
#error N_IN must be a multiple of 4 (whole packed words of 4 pixels)
#endif

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 2) readonly buffer Order { uint order[]; };
layout(std430, binding = 4) writeonly buffer Gram { float gram[]; };

uniform uint n_samples;
uniform uint batch_size;
uniform uint steps;

const uint WORDS = N_IN / 4u;   // packed words a row; word WORDS is the appended 1
const uint NO_ROW = 0xFFFFFFFFu;

shared vec4 rows_s[64 * 9];      // the group's 64 rows, 8 words (32 inputs) a stage; 9: a spare, against bank conflicts
shared vec4 cols_s[64 * 9];      // the group's 64 columns (rows of the earlier steps), the same way
shared uint row_base[64], col_base[64];   // where each row's image starts in images[] (NO_ROW: a row of zeros)

uint image_start(int s, uint b) {   // images[] index of row b of step s's batch, NO_ROW past it
    if (s < 0 || b >= batch_size) return NO_ROW;
    uint at = uint(s) * batch_size + b;
    return at < n_samples ? order[at] * WORDS : NO_ROW;
}

vec4 word(uint start, uint w) {   // inputs 4w .. 4w+3 of a row as floats; w == WORDS: the 1, then zeros
    if (start == NO_ROW || w > WORDS) return vec4(0.0);
    if (w == WORDS) return vec4(1.0, 0.0, 0.0, 0.0);
    uint p = images[start + w];
    return vec4(float(p & 255u), float((p >> 8u) & 255u), float((p >> 16u) & 255u), float(p >> 24u)) / 255.0;
}

void main() {
    uint lid = gl_LocalInvocationIndex, x = gl_LocalInvocationID.x, y = gl_LocalInvocationID.y;
    uint t = gl_WorkGroupID.z, row0 = gl_WorkGroupID.y * 64u, col0 = gl_WorkGroupID.x * 64u;
    if (t >= steps) return;   // a dispatch of more groups than steps: nothing to do
    if (lid < 64u) {
        uint c = col0 + lid;   // column c: row c % B_PAD of step t - 1 - c / B_PAD
        row_base[lid] = row0 + lid < B_PAD ? image_start(int(t), row0 + lid) : NO_ROW;
        col_base[lid] = c < 2u * B_PAD ? image_start(int(t) - 1 - int(c / B_PAD), c % B_PAD) : NO_ROW;
    }
    barrier();

    vec4 acc[4];   // acc[i][j]: row 4y + i, column 4x + j of the tile
    for (uint i = 0u; i < 4u; i++) acc[i] = vec4(0.0);
    for (uint w0 = 0u; w0 <= WORDS; w0 += 8u) {
        for (uint e = lid; e < 512u; e += 256u) {   // 64 rows x 8 words, and the same for the columns
            uint r = e / 8u, w = w0 + e % 8u;
            rows_s[r * 9u + e % 8u] = word(row_base[r], w);
            cols_s[r * 9u + e % 8u] = word(col_base[r], w);
        }
        barrier();
        for (uint q = 0u; q < 8u; q++) {
            vec4 a[4], b[4];
            for (uint i = 0u; i < 4u; i++) {
                a[i] = rows_s[(4u * y + i) * 9u + q];
                b[i] = cols_s[(4u * x + i) * 9u + q];
            }
            for (uint i = 0u; i < 4u; i++)
                acc[i] += vec4(dot(a[i], b[0]), dot(a[i], b[1]), dot(a[i], b[2]), dot(a[i], b[3]));
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; i++) {
        uint r = row0 + 4u * y + i;
        for (uint j = 0u; j < 4u; j++) {
            uint c = col0 + 4u * x + j;
            if (r < B_PAD && c < 2u * B_PAD)
                gram[((t * 2u + c / B_PAD) * B_PAD + r) * B_PAD + c % B_PAD] = acc[i][j];
        }
    }
}
