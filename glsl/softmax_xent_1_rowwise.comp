#version 430
// softmax_xent_1_rowwise.comp: softmax cross-entropy of a batch: per-sample loss, dL/dlogits, and the
//   batch's loss sum and correct count written to one slot of a small stats buffer
//
// Shapes    logits[B,C]  dlogits[B,C]  losses[B]   float32;  stats[2*slot + 2] float32 (2 floats a slot)
//           labels[n_images] uint32, one per resident image;  order[start + B] uint32, each value < n_images
//           sizes: B, C ≥ 1
// NumPy     z = logits - logits.max(1, keepdims=True);  logp = z - np.log(np.exp(z).sum(1, keepdims=True))
//           y = labels[order[start:start + B]];  losses = -logp[np.arange(B), y]
//           dlogits = (np.exp(logp) - np.eye(C)[y]) / B          (the gradient of the batch's mean loss)
//           stats[2*slot] = losses.sum();  stats[2*slot + 1] = (logits.argmax(1) == y).sum()
// Bindings  1 order uint[start + B] (readonly)  2 labels uint[n_images] (readonly)
//           8 logits float[B*C] (readonly)  9 dlogits float[B*C] (writeonly)  15 losses float[B] (writeonly)
//           16 stats float[2*slot + 2] (writeonly)
//           numbers from a training step's one binding layout, so every buffer is bound once, not per step
// Uniforms  uint B (rows), C (classes), start (batch start in order), slot (stats slot: the step)
// Dispatch  local (LOCAL, 1, 1); groups (1, 1, 1)
//           one work group, thread t takes rows t, t + LOCAL, ...; its loss and correct count are then
//           summed by a tree in shared memory, always in the same order, so the batch loss is
//           deterministic (no atomics). Defaults: the lowest median of a sweep on an NVIDIA GPU of 132 SMs
// Requires  (LOCAL & (LOCAL - 1)) == 0;  LOCAL <= 1024
// Changed   first version. Stable: the row max is subtracted before exp, so large logits do not overflow;
//           a NaN or infinite logit gives a NaN loss, which a trainer's divergence check can catch
// Checked   relative error < 1e-5 against NumPy (tests/test_backprop.py)
// Tunables  LOCAL a power of two, <= 1024 (checked below)
#ifndef LOCAL
#define LOCAL 128  // threads of the one work group: a power of two (the tree halves it)
#endif
#if (LOCAL & (LOCAL - 1)) != 0
#error LOCAL must be a power of two (the reduction tree halves it)
#endif
#if LOCAL > 1024
#error LOCAL must be <= 1024 (threads of the work group)
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 1) readonly buffer Order { uint order[]; };
layout(std430, binding = 2) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 8) readonly buffer Logits { float logits[]; };
layout(std430, binding = 9) writeonly buffer DLogits { float dlogits[]; };
layout(std430, binding = 15) writeonly buffer Losses { float losses[]; };
layout(std430, binding = 16) writeonly buffer Stats { float stats[]; };

uniform uint B;      // rows: samples in the batch
uniform uint C;      // classes
uniform uint start;  // labels of this batch: labels[order[start + i]]
uniform uint slot;   // where the batch's loss sum and correct count go: stats[2*slot], stats[2*slot + 1]

shared float loss_sum[LOCAL];
shared float correct_sum[LOCAL];

void main() {
    uint t = gl_LocalInvocationID.x;
    float my_loss = 0.0, my_correct = 0.0;
    for (uint i = t; i < B; i += LOCAL) {
        uint row = i * C;
        uint y = labels[order[start + i]];
        float m = logits[row];
        uint best = 0u;
        for (uint c = 1u; c < C; ++c) {  // the row max, and the first class reaching it (NumPy's argmax)
            float v = logits[row + c];
            if (v > m) { m = v; best = c; }
        }
        float total = 0.0;
        for (uint c = 0u; c < C; ++c) total += exp(logits[row + c] - m);
        float log_total = log(total);
        float loss = log_total - (logits[row + y] - m);  // -log softmax(logits)[y]
        losses[i] = loss;
        for (uint c = 0u; c < C; ++c) {
            float p = exp(logits[row + c] - m - log_total);
            dlogits[row + c] = (p - (c == y ? 1.0 : 0.0)) / float(B);
        }
        my_loss += loss;
        my_correct += (best == y) ? 1.0 : 0.0;
    }
    loss_sum[t] = my_loss;
    correct_sum[t] = my_correct;
    for (uint half_size = LOCAL / 2u; half_size > 0u; half_size /= 2u) {
        barrier();  // the previous level's sums are written
        if (t < half_size) {
            loss_sum[t] += loss_sum[t + half_size];
            correct_sum[t] += correct_sum[t + half_size];
        }
    }
    if (t == 0u) {
        stats[2u * slot] = loss_sum[0];
        stats[2u * slot + 1u] = correct_sum[0];
    }
}
