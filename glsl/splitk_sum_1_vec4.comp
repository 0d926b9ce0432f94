#version 430
// splitk_sum_1_vec4.comp: C = P[0] + P[1] + ... + P[pieces-1], the pieces of a split-K matmul added in order
//   (the second dispatch of matmul_8_splitk.comp), four neighbouring elements per invocation
//
// Shapes    P[pieces,M,N]  C[M,N]   float32, row-major, std430 (flat float arrays)
//           sizes: M, N, pieces ≥ 1
// NumPy     C = P[0].copy();  for z in range(1, pieces): C += P[z]   (this order: the same bits every run)
// Bindings  2 C float[M*N] (writeonly)  3 P float[pieces*M*N] (readonly)
//           C and P are also declared as vec4 arrays on the same bindings (BufC4, BufP4)
// Uniforms  uint M, N, pieces
// Dispatch  local (LOCAL, 1, 1); groups (ceil(M*N/(4*LOCAL)) or more, 1, 1)
//           invocation i adds elements 4i .. 4i+3 of every piece (as one vec4 when M*N % 4 == 0, so that
//           every piece starts on a 16-byte boundary; else one float at a time)
// Changed   first version: matmul_8_splitk.comp leaves its pieces in P, this adds them. It reads pieces*M*N floats and
//           writes M*N: bound by memory, not arithmetic
// Checked   against the same sum in NumPy, bit for bit, C poisoned with NaN first, M*N not a multiple of 4
//           or of 4*LOCAL (tests/test_matmul_splitk.py)
// Tunables  LOCAL: invocations per work group (a multiple of 32)
#ifndef LOCAL
#define LOCAL 256
#endif

layout(local_size_x = LOCAL) in;

layout(std430, binding = 2) writeonly buffer BufC { float C[]; };
layout(std430, binding = 2) writeonly buffer BufC4 { vec4 C4[]; };
layout(std430, binding = 3) readonly buffer BufP { float P[]; };
layout(std430, binding = 3) readonly buffer BufP4 { vec4 P4[]; };

uniform uint M;
uniform uint N;
uniform uint pieces;

void main() {
    uint size = M * N;
    uint at = 4u * gl_GlobalInvocationID.x;
    if (at >= size) return;
    if ((size & 3u) == 0u) {
        vec4 sum = P4[at / 4u];
        for (uint z = 1u; z < pieces; ++z) sum += P4[(z * size + at) / 4u];
        C4[at / 4u] = sum;
    } else {
        for (uint e = at; e < min(at + 4u, size); ++e) {
            float sum = P[e];
            for (uint z = 1u; z < pieces; ++z) sum += P[z * size + e];
            C[e] = sum;
        }
    }
}
