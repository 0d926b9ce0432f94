#version 430
// maxnorm_1_columns.comp: the max-norm constraint on W1 in place: every hidden unit's incoming weights
//   (a column of W1) rescaled to Euclidean norm max_norm where their norm is larger; b1 is left alone
//
// Shapes    params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden;
//           only W1, the first n_in*H floats, is read and written
//           sizes: n_in, n_hidden ≥ 1
// NumPy     norms = np.sqrt((W1 * W1).sum(0));  over = norms > max_norm
//           W1[:, over] *= max_norm / norms[over]
// Bindings  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (read-write)
// Uniforms  uint n_in, n_hidden; float max_norm
// Dispatch  local (TJ, TK, 1); groups (ceil(n_hidden/TJ) or more, 1, 1)
//           a work group owns TJ neighbouring columns; thread (x, y) sums the squares of rows y, y + TK,
//           y + 2*TK, ... of column x (threads next in x read neighbouring floats of one W1 row); the TK
//           partial sums of a column are added in shared memory in a fixed order, and the same threads
//           rescale the rows they read. No atomics: the same bits every run
// Requires  TJ*TK <= 1024
// Changed   first version: run after the update dispatch of a training step (its own dispatch, because
//           a column's norm needs all of its n_in rows, which the update spreads over many work groups)
// Checked   relative error < 1e-5 against NumPy; every column norm <= max_norm afterwards, columns under
//           it untouched bit for bit (tests/test_dropout.py)
// Tunables  TJ*TK <= 1024 threads (checked below); TJ*TK*4 bytes of shared memory
#ifndef TJ
#define TJ 32
#endif
#ifndef TK
#define TK 16
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if TJ * TK > 1024
#error TJ*TK must be <= 1024 (threads of a work group)
#endif

layout(local_size_x = TJ, local_size_y = TK, local_size_z = 1) in;

layout(std430, binding = 3) buffer Params { float params[]; };

uniform uint n_in;
uniform uint n_hidden;
uniform float max_norm;  // c: the largest norm a hidden unit's incoming weight vector may have

shared float sums[TK * TJ];

void main() {
    uint x = gl_LocalInvocationID.x, y = gl_LocalInvocationID.y;
    uint H = n_hidden;
    uint j = gl_WorkGroupID.x * TJ + x;  // this thread's column (hidden unit)
    float ss = 0.0;
    if (j < H) {
        for (uint k = y; k < n_in; k += TK) {
            float w = params[k * H + j];
            ss += w * w;
        }
    }
    sums[y * TJ + x] = ss;
    barrier();
    if (j >= H) return;  // after the only barrier: threads past the last column can leave
    float total = 0.0;
    for (uint q = 0u; q < TK; q++) total += sums[q * TJ + x];  // fixed order, the same in every thread
    float norm = sqrt(total);
    if (norm > max_norm) {
        float scale = max_norm / norm;
        for (uint k = y; k < n_in; k += TK) params[k * H + j] *= scale;
    }
}
