#version 430
// 05_xent_grad.comp: the gradient of the mean softmax cross-entropy loss with respect to the logits,
//                    one thread per sample
//
// Shapes    logits[B,C] float32, labels[B] uint32 (each < C), dlogits[B,C] float32; row-major, std430
// NumPy     z = logits - logits.max(axis=1, keepdims=True)
//           p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
//           dlogits = (p - onehot) / B        where onehot[r, labels[r]] = 1, else 0
// Bindings  0 logits float[B*C] (readonly)  1 labels uint[B] (readonly)  2 dlogits float[B*C] (writeonly)
// Uniforms  uint B, C
// Dispatch  local (LOCAL, 1, 1); groups (ceil(B/LOCAL), 1, 1)
//           local size (64, 1, 1) as committed; thread x = sample r
// Exercise  the row max is there; write the gradient (the TODOs): the sum of exp over the row, then each
//           element (p - onehot) / B. Keep the max subtracted: some of the checker's logits are in the
//           hundreds, and exp(89) is already past float32's largest number.
// Checked   exercises.check("05_xent_grad", "my_xent_grad.comp"): B×C = 1×10, 37×10, 130×13, 5×3 (logits
//           in the hundreds), 4099×10 against NumPy
#ifndef LOCAL
#define LOCAL 64
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Logits { float logits[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) writeonly buffer DLogits { float dlogits[]; };

uniform uint B;  // samples
uniform uint C;  // classes

void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r >= B) return;
    uint row = r * C;
    float zmax = logits[row];
    for (uint c = 1u; c < C; ++c) zmax = max(zmax, logits[row + c]);

    float sum = 0.0;
    for (uint c = 0u; c < C; ++c) sum += exp(logits[row + c] - zmax);
    uint label = labels[r];
    for (uint c = 0u; c < C; ++c) {
        float p = exp(logits[row + c] - zmax) / sum;
        dlogits[row + c] = (p - (c == label ? 1.0 : 0.0)) / float(B);
    }
}
