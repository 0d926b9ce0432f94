#version 430
// grid_barrier_1_atomic.comp: `rounds` grid-wide barriers in one dispatch, built on one atomic counter:
//   at each barrier every work group adds 1 to the counter, then waits until all n_groups have arrived.
//   It measures what a grid barrier costs, and checks that it works: before barrier r each group writes
//   its slot, after it each group reads its neighbour's slot and must see round r's value
//
// Shapes    sync[4] uint, zero before the dispatch: sync[0] arrivals so far; sync[1] flags: 1 a wait gave up
//           (some group never arrived: not every work group was resident at once), 2 a group read a stale
//           slot; sync[2] the most polls one wait took.  seen[n_groups] uint, one slot a group
//           sizes: n_groups ≥ 1
// NumPy     afterwards, when all groups were resident: sync[0] == rounds * n_groups, sync[1] == 0,
//           seen == np.full(n_groups, rounds)
// Bindings  0 sync uint[4] (read-write)  1 seen uint[n_groups] (read-write)
// Uniforms  uint n_groups (the dispatch's group count), rounds
// Dispatch  local (THREADS, 1, 1); groups (n_groups, 1, 1)
//           correct only when all n_groups work groups are resident on the GPU at once: a waiting group
//           keeps its place on the GPU, and a group still queued for a place can never arrive. No API
//           promises residency (so GL, Vulkan and a plain CUDA launch offer no grid barrier); a wait gives
//           up after SPIN_LIMIT polls and sets flag 1, and every group then stops: no hang
// Requires  THREADS <= 1024
// Changed   first version
// Checked   counter, flags and slots as in NumPy above, for 1 group on llvmpipe and up to a few per SM on
//           the GPU; flag 1 set, and the dispatch ending, when llvmpipe cannot run them all at once
//           (tests/test_grid_barrier.py)
// Tunables  THREADS <= 1024; SPIN_LIMIT polls of the counter before a wait gives up
#ifndef THREADS
#define THREADS 256
#endif
#ifndef SPIN_LIMIT
#define SPIN_LIMIT 1000000
#endif
#if THREADS > 1024
#error THREADS must be <= 1024 (threads of a work group)
#endif

layout(local_size_x = THREADS, local_size_y = 1, local_size_z = 1) in;

// coherent: reads and writes go to memory every work group sees (not an SM's private cache);
// volatile: every poll of the counter really reads it (the compiler may not keep it in a register)
layout(std430, binding = 0) coherent volatile buffer Sync { uint sync[]; };
layout(std430, binding = 1) coherent buffer Seen { uint seen[]; };

uniform uint n_groups;  // work groups in the dispatch
uniform uint rounds;    // barriers to cross

shared uint stop;       // the flags one invocation read for its whole group

// Every invocation of every work group calls this at the same point; it returns once all n_groups work
// groups have called it for the `round`-th time (counting from 0), or false when a wait gave up.
bool grid_barrier(uint round) {
    memoryBarrierBuffer();  // this invocation's buffer writes are visible to the other groups ...
    barrier();              // ... for every invocation of the group, before the group arrives
    if (gl_LocalInvocationIndex == 0u) {
        uint polls = 0u, target = (round + 1u) * n_groups;
        atomicAdd(sync[0], 1u);
        while (sync[0] < target && sync[1] == 0u && polls < SPIN_LIMIT) polls++;
        if (sync[0] < target) atomicOr(sync[1], 1u);  // gave up (or a driver cut the loop short: llvmpipe
                                                      // ends any loop after 65535 iterations)
        atomicMax(sync[2], polls);
        stop = sync[1] & 1u;
    }
    barrier();              // the whole group waits for its first invocation
    memoryBarrierBuffer();
    return stop == 0u;
}

void main() {
    uint g = gl_WorkGroupID.x;
    for (uint r = 0u; r < rounds; r++) {
        if (gl_LocalInvocationIndex == 0u) seen[g] = r + 1u;
        if (!grid_barrier(r)) return;
        if (gl_LocalInvocationIndex == 0u && seen[(g + 1u) % n_groups] < r + 1u) atomicOr(sync[1], 2u);
    }
}
