#version 430
// 04_splitk_pieces.comp: the pieces of a split-K matmul (matmul_8_splitk's idea), one thread per output of a
//                        piece: work group z of the dispatch sums only its piece of k
//
// Shapes    A[M,K]  B[K,N]  P[ceil(K/KS),M,N]   float32, row-major, std430 (flat float arrays)
// NumPy     P[z] = A[:, z*KS:(z+1)*KS] @ B[z*KS:(z+1)*KS, :]   for z in range(ceil(K/KS))
//           i.e.  P[z*M*N + m*N + n] = sum over k in z*KS .. min(K, z*KS + KS) - 1 of A[m,k] * B[k,n]
// Bindings  0 A float[M*K] (readonly)  1 B float[K*N] (readonly)  2 P float[ceil(K/KS)*M*N] (writeonly)
// Uniforms  uint M, N, K, KS
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X), ceil(M/LOCAL_Y), ceil(K/KS))
//           local size (16, 16, 1) as committed
//           thread x = column n, thread y = row m, work group z (gl_WorkGroupID.z) = the piece
// Exercise  the starter is matmul_1: every thread sums all of k and writes C[m,n]. Fill in the two TODOs:
//           the loop runs over this work group's piece of k only (the last piece is shorter when KS does not
//           divide K), and the sum goes to piece z of P. Adding the pieces (splitk_sum_1_vec4.comp) gives
//           A @ B. The checker fills P with NaN, so a piece never written shows.
// Checked   exercises.check("04_splitk_pieces", "my_splitk_pieces.comp"): M×K×N, KS = 1×1×1, 1; 37×70×13, 16;
//           1×300×77, 300; 77×300×1, 7; 129×257×65, 64; 200×1024×300, 256 against NumPy
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufP { float P[]; };

uniform uint M;
uniform uint N;
uniform uint K;
uniform uint KS;  // the k each piece sums over

void main() {
    uint n = gl_GlobalInvocationID.x;
    uint m = gl_GlobalInvocationID.y;
    if (n >= N || m >= M) return;
    float sum = 0.0;
    // TODO: sum over this work group's piece of k only: z = gl_WorkGroupID.z covers k = z*KS .. z*KS + KS - 1,
    //       and no k at or past K
    for (uint k = 0u; k < K; ++k) sum += A[m * K + k] * B[k * N + n];
    // TODO: write the sum to piece z of P, which starts at element z*M*N
    P[m * N + n] = sum;
}
