#version 430
// fused_predict_2_softmax.comp: the ten probabilities of each image, straight from uint8 images:
//   layer 1, ReLU, layer 2 and the softmax in one dispatch, S images per work group
//
// Shapes    images: count rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian) of
//           word i*(n_in/4) + p/4 (integer division);   probabilities[count,N_OUT] float32, row-major
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           sizes: n_in, n_hidden, count ≥ 1
// NumPy     X = images.view(np.uint8).reshape(count, n_in) / 255
//           logits = np.maximum(X @ W1 + b1, 0) @ W2 + b2;  z = logits - logits.max(1, keepdims=True)
//           probabilities = np.exp(z) / np.exp(z).sum(1, keepdims=True)
// Bindings  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)  10 images uint[count*n_in/4] (readonly)
//           11 probabilities float[count*N_OUT] (writeonly)
//           params is also declared as a vec4 array on binding 3 (Params4); the binding numbers are
//           fused_predict_1_argmax's, so a trainer's params buffer binds here as it is
// Uniforms  uint n_in (multiple of 4, <= MAX_IN), n_hidden (<= MAX_H), count
// Dispatch  local (JT, KS, 1); groups (ceil(count/S), 1, 1)
//           threads split as in fused_forward_1_xent (4 hidden units a thread, W1 read as vec4 where
//           n_hidden % 4 == 0); then one thread per (image, class) writes its probability
// Requires  JT*KS >= S*N_OUT;  JT*KS <= 1024;  n_in % 4 == 0;  n_in <= MAX_IN;  n_hidden <= MAX_H;
//           n_hidden % 4 == 0 if VEC4
// Changed   vs fused_predict_1_argmax: the softmax of the logits, every class's probability, instead of the
//           index of the largest; stable: the row's largest logit is subtracted before exp, so the
//           probabilities sum to 1 within float32 rounding however large the logits
// Checked   relative error < 1e-5 against NumPy's float64 softmax on a blank image, a single dot, ink on
//           every edge, count 1, 3 and 37, outputs poisoned with NaN first (tests/test_digits.py)
// Tunables  as fused_predict_1_argmax: 4 * S * (MAX_IN + KS*4*JT + MAX_H + N_OUT) bytes of shared memory;
//           JT*KS <= 1024 and >= S*N_OUT (checked below); VEC4 1 needs n_hidden % 4 == 0
#ifndef S
#define S 2
#endif
#ifndef JT
#define JT 32
#endif
#ifndef KS
#define KS 16
#endif
#ifndef MAX_IN
#define MAX_IN 784
#endif
#ifndef MAX_H
#define MAX_H 256
#endif
#ifndef VEC4
#define VEC4 1
#endif
#ifndef N_OUT
#define N_OUT 10
#endif
#if JT * KS < S * N_OUT
#error JT*KS must be >= S*N_OUT: one thread per logit of the work group's S samples (raise KS or JT, or lower S)
#endif
#if JT * KS > 1024
#error JT*KS must be <= 1024 (threads of a work group)
#endif

layout(local_size_x = JT, local_size_y = KS, local_size_z = 1) in;

layout(std430, binding = 3) readonly buffer Params { float params[]; };
layout(std430, binding = 3) readonly buffer Params4 { vec4 params4[]; };  // the same buffer, 16 bytes a read
layout(std430, binding = 10) readonly buffer EvalImages { uint images[]; };
layout(std430, binding = 11) writeonly buffer Probabilities { float probabilities[]; };

uniform uint n_in;
uniform uint n_hidden;
uniform uint count;

const uint THREADS = JT * KS;
const uint CW = 4u * JT;
const uint P = S * N_OUT;
const uint PARTS = THREADS / P;

shared float Xs[S * MAX_IN];
shared float partial[KS * S * CW];
shared float Zs[S * MAX_H];
shared float Ls[S * N_OUT];

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint jt = gl_LocalInvocationID.x;
    uint ks = gl_LocalInvocationID.y;
    uint H = n_hidden;
    uint words = n_in / 4u;
    uint first = gl_WorkGroupID.x * S;
    uint b1o = n_in * H, W2o = b1o + H, b2o = W2o + H * N_OUT;

    for (uint w = lid; w < S * words; w += THREADS) {
        uint s = w / words, q = w % words;
        uint pixels4 = first + s < count ? images[(first + s) * words + q] : 0u;
        for (uint i = 0u; i < 4u; i++) Xs[s * MAX_IN + 4u * q + i] = float((pixels4 >> (8u * i)) & 255u) / 255.0;
    }
    barrier();

    uint chunk = (n_in + KS - 1u) / KS;
    uint k0 = min(n_in, ks * chunk), k1 = min(n_in, k0 + chunk);
    for (uint j0 = 0u; j0 < H; j0 += CW) {
        uint j = j0 + 4u * jt;  // this thread's first hidden unit
        vec4 acc[S];
        for (uint s = 0u; s < S; s++) acc[s] = vec4(0.0);
        if (j < H) {
            for (uint k = k0; k < k1; k++) {
#if VEC4
                vec4 w = params4[(k * H + j) / 4u];  // W1[k, j:j+4]: threads next in x read next 16 bytes
#else
                uint at = k * H + j;
                vec4 w = vec4(params[at], j + 1u < H ? params[at + 1u] : 0.0,
                              j + 2u < H ? params[at + 2u] : 0.0, j + 3u < H ? params[at + 3u] : 0.0);
#endif
                for (uint s = 0u; s < S; s++) acc[s] += Xs[s * MAX_IN + k] * w;
            }
        }
        for (uint s = 0u; s < S; s++) {
            for (uint c = 0u; c < 4u; c++) partial[(ks * S + s) * CW + 4u * jt + c] = acc[s][c];
        }
        barrier();
        for (uint o = lid; o < S * CW; o += THREADS) {
            uint s = o / CW, jj = o % CW;
            if (j0 + jj < H) {
                float z = 0.0;
                for (uint q = 0u; q < KS; q++) z += partial[(q * S + s) * CW + jj];  // fixed order
                Zs[s * MAX_H + j0 + jj] = z + params[b1o + j0 + jj];
            }
        }
        barrier();
    }

    if (lid < P * PARTS) {
        uint p = lid % P, part = lid / P, s = p / N_OUT, o = p % N_OUT;
        float acc = 0.0;
        for (uint j = part; j < H; j += PARTS) acc += max(Zs[s * MAX_H + j], 0.0) * params[W2o + j * N_OUT + o];
        partial[part * P + p] = acc;
    }
    barrier();
    if (lid < P) {
        float z = 0.0;
        for (uint q = 0u; q < PARTS; q++) z += partial[q * P + lid];
        Ls[lid] = z + params[b2o + lid % N_OUT];
    }
    barrier();

    uint s = lid / N_OUT, o = lid % N_OUT;
    if (lid < P && first + s < count) {  // one thread per (image, class)
        float top = Ls[s * N_OUT];
        for (uint c = 1u; c < N_OUT; c++) top = max(top, Ls[s * N_OUT + c]);
        float total = 0.0;
        for (uint c = 0u; c < N_OUT; c++) total += exp(Ls[s * N_OUT + c] - top);  // the same order in every thread
        probabilities[(first + s) * N_OUT + o] = exp(Ls[lid] - top) / total;
    }
}
