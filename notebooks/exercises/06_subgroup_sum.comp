#version 430
// 06_subgroup_sum.comp: the sum of each work group's LOCAL elements of x, added within a subgroup by
//                       subgroupAdd, then across the work group's subgroups through shared memory
//
// Shapes    x[n]  partial[G] with G = ceil(n/LOCAL)   float32
// NumPy     partial = np.pad(x, (0, G * LOCAL - n)).reshape(G, LOCAL).sum(axis=1)   (x.sum() == partial.sum())
// Bindings  0 x float[n] (readonly)  1 partial float[ceil(n/LOCAL)] (writeonly)
// Uniforms  uint n
// Dispatch  local (LOCAL, 1, 1); groups (ceil(n/LOCAL), 1, 1)
//           local size (256, 1, 1) as committed; one thread per element
// Needs     GL_KHR_shader_subgroup_arithmetic, which GPU drivers (NVIDIA, AMD, Intel) offer and Mesa's
//           llvmpipe lacks; on a context without it the checker says so instead of running the shader
// Exercise  a subgroup is a set of threads the hardware runs together, gl_SubgroupSize of them (32 on
//           NVIDIA GPUs, other sizes elsewhere). subgroupAdd(v) returns the sum of v over the calling
//           thread's subgroup, with no shared memory and no barrier. Fill in the TODOs: each subgroup's sum
//           into one slot of `sums` (by one of its threads), a barrier, then thread 0 adds the
//           gl_NumSubgroups slots. Threads past n add 0; none returns early (all must reach the barrier).
// Checked   exercises.check("06_subgroup_sum", "my_subgroup_sum.comp"): n = 1, 257, 1000, 100003 against
//           NumPy (float64)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#ifndef LOCAL
#define LOCAL 256
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Input { float x[]; };
layout(std430, binding = 1) writeonly buffer Partial { float partial[]; };

uniform uint n;  // elements of x

shared float sums[LOCAL];  // one slot per subgroup; LOCAL slots cover even a subgroup of 1 thread

void main() {
    uint i = gl_GlobalInvocationID.x;
    float v = i < n ? x[i] : 0.0;
    // TODO 1: the sum of v over this thread's subgroup, stored by one of its threads in sums[gl_SubgroupID]
    // TODO 2: wait until every subgroup has stored its sum
    if (gl_LocalInvocationIndex == 0u) {
        float total = v;  // TODO 3: the sum of the gl_NumSubgroups slots of sums
        partial[gl_WorkGroupID.x] = total;
    }
}
