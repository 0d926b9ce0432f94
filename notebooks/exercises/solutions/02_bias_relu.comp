#version 430
// 02_bias_relu.comp: one dense layer with its epilogue, Y = relu(X·W + b): bias and ReLU applied to the
//                    sum in a register, before the one store
//
// Shapes    X[B,K]  W[K,N]  b[N]  Y[B,N]   float32, row-major, std430 (flat float arrays)
// NumPy     Y = np.maximum(X @ W + b, 0)
// Bindings  0 X float[B*K] (readonly)  1 W float[K*N] (readonly)  2 b float[N] (readonly)
//           3 Y float[B*N] (writeonly)
// Uniforms  uint B, K, N
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X), ceil(B/LOCAL_Y), 1)
//           local size (16, 16, 1) as committed
//           thread x = output column n, thread y = sample (row of X and of Y)
// Exercise  the loop already computes (X·W)[row, n]; write the epilogue (the TODO in main): add the bias
//           of column n, then take the ReLU, both before the store, so the layer stays one dispatch
// Checked   exercises.check("02_bias_relu", "my_bias_relu.comp"): B×K×N = 1×784×128, 37×70×13, 33×5×16,
//           1000×200×130 against NumPy
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Input { float X[]; };
layout(std430, binding = 1) readonly buffer Weights { float W[]; };
layout(std430, binding = 2) readonly buffer Bias { float b[]; };
layout(std430, binding = 3) writeonly buffer Output { float Y[]; };

uniform uint B;  // samples (rows of X and Y)
uniform uint K;  // inputs per sample
uniform uint N;  // outputs per sample

void main() {
    uint n = gl_GlobalInvocationID.x;    // output column
    uint row = gl_GlobalInvocationID.y;  // sample
    if (n >= N || row >= B) return;      // the last work groups stick out past Y

    float sum = 0.0;
    for (uint k = 0u; k < K; ++k) {
        sum += X[row * K + k] * W[k * N + n];
    }
    sum = max(sum + b[n], 0.0);          // the epilogue: bias, then ReLU, in a register
    Y[row * N + n] = sum;
}
