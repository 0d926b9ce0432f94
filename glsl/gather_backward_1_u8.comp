#version 430
// gather_backward_1_u8.comp: weight and bias gradients of the first layer, dW = Xᵀ·dZ and db = Σ_rows dZ,
//   with the batch X gathered again from the resident uint8-packed images through the order buffer
//
// Shapes    images: n_images rows of Wd = ceil(K/4) uint32 words: pixel p of image i is byte p%4
//           (little-endian) of word i*Wd + p/4 (integer division), rows zero-padded to whole words
//           order[start + B] uint32, each value < n_images;   dZ[B,N]  ->  dW[K,N]  db[N]   float32, row-major
//           sizes: B, K, N ≥ 1
// NumPy     X = images.view(np.uint8).reshape(n_images, -1)[order[start:start + B], :K] / 255
//           dW = X.T @ dZ;  db = dZ.sum(axis=0)
// Bindings  0 images uint[n_images*ceil(K/4)] (readonly)  1 order uint[start + B] (readonly)
//           10 dZ float[B*N] (readonly)  11 dW float[K*N] (writeonly)  12 db float[N] (writeonly)
//           numbers from a training step's one binding layout, so every buffer is bound once, not per step
// Uniforms  uint B (rows), K (pixels per image), N (hidden units), start (batch start in order)
// Dispatch  local (LX, BS, 1); groups (ceil(N/LX), ceil(K/4) + 1, 1)
//           work group (gx, w) computes dW rows 4w .. 4w+3 (the 4 pixels of word w) for LX columns;
//           the last row of groups (w = ceil(K/4)) computes db. It copies word w of LX*BS samples at a
//           time into shared memory (one gathered read per thread), then its BS thread rows each sum
//           every BS-th sample; the partial sums are added in shared memory in a fixed order (deterministic)
// Changed   first version: dense_backward_1_relu's dW and db for a layer whose input is the gathered
//           uint8 batch; one word (4 pixels) read per sample gives 4 gradient rows; no gradient into the images
// Checked   relative error < 1e-5 against NumPy (tests/test_backprop.py)
#ifndef LX
#define LX 64  // output columns per work group (local x)
#endif
#ifndef BS
#define BS 4   // batch slices (local y), added in shared memory
#endif

layout(local_size_x = LX, local_size_y = BS, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Images { uint images[]; };
layout(std430, binding = 1) readonly buffer Order { uint order[]; };
layout(std430, binding = 10) readonly buffer GradOut { float dZ[]; };
layout(std430, binding = 11) writeonly buffer GradW { float dW[]; };
layout(std430, binding = 12) writeonly buffer GradB { float db[]; };

uniform uint B;      // samples in this batch
uniform uint K;      // pixels per image
uniform uint N;      // hidden units
uniform uint start;  // this batch is order[start : start + B]

shared uint words_of_batch[LX * BS];  // word w of the samples of the current chunk of the batch
shared float partial[BS * 4 * LX];

void main() {
    uint x = gl_LocalInvocationID.x;
    uint s = gl_LocalInvocationID.y;
    uint n = gl_WorkGroupID.x * LX + x;
    uint w = gl_WorkGroupID.y;  // word index: pixels 4w .. 4w+3; w == words: the bias
    uint words = (K + 3u) / 4u;

    vec4 acc = vec4(0.0);
    for (uint chunk = 0u; chunk < B; chunk += LX * BS) {  // the batch, LX*BS samples at a time
        uint mine = chunk + s * LX + x;
        if (w < words) words_of_batch[s * LX + x] = mine < B ? images[order[start + mine] * words + w] : 0u;
        barrier();  // the chunk's words are in shared memory
        uint end = min(B, chunk + LX * BS);
        if (n < N) {
            if (w < words) {
                for (uint b = chunk + s; b < end; b += BS) {
                    uint word = words_of_batch[b - chunk];  // the same word for the whole row: a broadcast
                    vec4 pixels = vec4(uvec4(word, word >> 8u, word >> 16u, word >> 24u) & 0xFFu) / 255.0;
                    acc += pixels * dZ[b * N + n];
                }
            } else {
                for (uint b = chunk + s; b < end; b += BS) acc.x += dZ[b * N + n];
            }
        }
        barrier();  // done with the chunk before the next one overwrites it
    }
    for (uint q = 0u; q < 4u; ++q) partial[(s * 4u + q) * LX + x] = acc[q];
    barrier();

    // 4*LX outputs per work group; thread (x, s) finishes pixels q = s, s + BS, ... of column x
    for (uint q = s; q < 4u; q += BS) {
        float sum = 0.0;
        for (uint t = 0u; t < BS; ++t) sum += partial[(t * 4u + q) * LX + x];
        if (n < N) {
            if (w < words) {
                if (4u * w + q < K) dW[(4u * w + q) * N + n] = sum;
            } else if (q == 0u) {
                db[n] = sum;
            }
        }
    }
}
