#version 430
// 06_weight_decay.comp: one SGD step with L2 weight decay, in place: p -= lr * (g + decay * p) for the
//                       weights, p -= lr * g for the biases (biases are not decayed)
//
// Shapes    params[n]  grads[n]   float32; params holds one layer's weights then its biases, back to back:
//           elements [0, n_weights) are weights (W.ravel()), elements [n_weights, n) biases (b)
// NumPy     params[:n_weights] -= lr * (grads[:n_weights] + decay * params[:n_weights])
//           params[n_weights:] -= lr * grads[n_weights:]
// Bindings  17 params float[n] (read-write)  18 grads float[n] (readonly)
//           the numbers update_1_sgd uses
// Uniforms  uint n, n_weights; float lr, decay
// Dispatch  local (LOCAL, 1, 1); groups (ceil(n/LOCAL), 1, 1)
//           local size (256, 1, 1) as committed; one thread per element
// Exercise  the starter is update_1_sgd: add the decay (the TODO), to the weights only. The decay is the
//           gradient of the penalty (decay/2)·Σ W², which pulls weights towards 0; a bias only shifts a
//           unit's threshold, so decaying it does little against overfitting and it is left alone. The
//           checker uses lr 0.25 and decay 0.1, far above a usual decay (around 1e-4), so a decay missing,
//           or applied to the biases, shows clearly above float32 rounding.
// Checked   exercises.check("06_weight_decay", "my_weight_decay.comp"): weights K×N plus N biases for
//           K×N = 1×1, 37×13, 5×300, 784×128 against NumPy
#ifndef LOCAL
#define LOCAL 256
#endif

layout(local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 17) buffer Params { float params[]; };
layout(std430, binding = 18) readonly buffer Grads { float grads[]; };

uniform uint n;          // elements to update
uniform uint n_weights;  // the first n_weights elements are weights, the rest biases
uniform float lr;        // learning rate
uniform float decay;     // L2 weight decay (lambda)

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= n) return;  // the last group sticks out past the end
    float p = params[i];
    float g = grads[i];
    // TODO: L2 weight decay: a weight's step also gets decay * p; a bias's does not
    params[i] = p - lr * g;
}
