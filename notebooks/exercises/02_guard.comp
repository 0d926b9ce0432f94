#version 430
// 02_guard.comp: T = Aᵀ, the transpose, one thread per element (notebook 05's backprop reads W transposed)
//
// Shapes    A[M,N]  T[N,M]   float32, row-major, std430 (flat float arrays)
// NumPy     T = A.T          i.e.  T[n,m] = A[m,n]
// Bindings  0 A float[M*N] (readonly)  1 T float[N*M] (writeonly)
// Uniforms  uint M, N
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(N/LOCAL_X), ceil(M/LOCAL_Y), 1)
//           local size (16, 16, 1) as committed
//           thread x = column n of A (row of T), thread y = row m of A (column of T)
// Exercise  M and N need not be multiples of 16, so the last work group in x and in y has threads that
//           fall outside A: they must neither read nor write (the TODO in main). The checker fills T with
//           NaN and puts a NaN guard zone after it, so an element never written, or a write past the
//           end, shows.
// Checked   exercises.check("02_guard", "my_guard.comp"): M×N = 1×1, 1×70, 37×70, 515×1000 against NumPy
#ifndef LOCAL_X
#define LOCAL_X 16
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 16
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) writeonly buffer BufT { float T[]; };

uniform uint M;  // rows of A
uniform uint N;  // columns of A

void main() {
    uint n = gl_GlobalInvocationID.x;  // column of A, row of T
    uint m = gl_GlobalInvocationID.y;  // row of A, column of T
    // TODO: in the last work groups some threads have n >= N or m >= M: they must not read or write
    T[n * M + m] = A[m * N + n];
}
