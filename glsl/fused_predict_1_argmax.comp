#version 430
// fused_predict_1_argmax.comp: predicted class of each image, straight from the resident uint8 images:
//   layer 1, ReLU, layer 2 and the argmax in one dispatch, S images per work group
//
// Shapes    images: count rows of n_in/4 uint32 words: pixel p of image i is byte p%4 (little-endian) of
//           word i*(n_in/4) + p/4 (integer division);   predictions[count] uint32
//           params = [W1 (n_in×H) | b1 (H) | W2 (H×N_OUT) | b2 (N_OUT)] float32, flat, row-major, H = n_hidden
//           sizes: n_in, n_hidden, count ≥ 1
// NumPy     X = images.view(np.uint8).reshape(count, n_in) / 255
//           predictions = (np.maximum(X @ W1 + b1, 0) @ W2 + b2).argmax(axis=1)
// Bindings  3 params float[(n_in + 1 + N_OUT)*n_hidden + N_OUT] (readonly)  10 images uint[count*n_in/4] (readonly)
//           11 predictions uint[count] (writeonly)
//           params is also declared as a vec4 array on binding 3 (Params4); 10 and 11 sit beside
//           fused_forward_1_xent's bindings 0-9, which can stay bound
// Uniforms  uint n_in (multiple of 4, <= MAX_IN), n_hidden (<= MAX_H), count
// Dispatch  local (JT, KS, 1); groups (ceil(count/S), 1, 1)
//           threads split as in fused_forward_1_xent (4 hidden units a thread, W1 read as vec4 where
//           n_hidden % 4 == 0)
// Requires  JT*KS >= S*N_OUT;  JT*KS <= 1024;  n_in % 4 == 0;  n_in <= MAX_IN;  n_hidden <= MAX_H;
//           n_hidden % 4 == 0 if VEC4
// Changed   first version: fused_forward_1_xent's forward half with no labels, no loss and no backward;
//           the first largest logit wins (as np.argmax)
// Checked   equal to NumPy's argmax of the forward pass (tests/test_fused.py)
// Tunables  as fused_forward_1_xent: 4 * S * (MAX_IN + KS*4*JT + MAX_H + N_OUT) bytes of shared memory;
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
layout(std430, binding = 11) writeonly buffer Predictions { uint predictions[]; };

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

    if (lid < S && first + lid < count) {
        uint best = 0u;
        for (uint o = 1u; o < N_OUT; o++) {
            if (Ls[lid * N_OUT + o] > Ls[lid * N_OUT + best]) best = o;
        }
        predictions[first + lid] = best;
    }
}
