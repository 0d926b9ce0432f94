#version 430
// 03_unpack_u8.comp: X = pixels / 255, the pixels read as bytes packed four to a uint32 word (4x less
//                    to upload than float32); one thread per word unpacks its four pixels
//
// Shapes    words[B,KW] uint32 with KW = ceil(K/4) words per row;  X[B,K] float32;  row-major, std430
// Packing   pixel k of row r is byte k % 4 of word words[r * KW + k / 4], byte 0 being the least
//           significant 8 bits (little-endian, as NumPy's .view("<u4") packs them). When K is not a
//           multiple of 4, a row's last word ends in 4*KW - K padding bytes, which hold anything (not 0).
// NumPy     X = words.view(np.uint8).reshape(B, 4 * KW)[:, :K] / 255
// Bindings  0 words uint[B*ceil(K/4)] (readonly)  1 X float[B*K] (writeonly)
// Uniforms  uint B, K   (KW = ceil(K/4) words a row: (K + 3) / 4 in the shader)
// Dispatch  local (LOCAL_X, LOCAL_Y, 1); groups (ceil(ceil(K/4)/LOCAL_X), ceil(B/LOCAL_Y), 1)
//           local size (64, 4, 1) as committed
//           thread x = word j of a row (pixels 4j to 4j+3), thread y = row r
// Exercise  take byte i of the word apart (the TODO in the loop): shift, mask, convert, scale. A padding
//           byte is not a pixel: writing it would land on the next row's first pixel.
// Checked   exercises.check("03_unpack_u8", "my_unpack_u8.comp"): B×K = 1×784, 1×5, 3×1, 37×70, 129×13,
//           1000×783 against NumPy
#ifndef LOCAL_X
#define LOCAL_X 64
#endif
#ifndef LOCAL_Y
#define LOCAL_Y 4
#endif

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Packed { uint words[]; };
layout(std430, binding = 1) writeonly buffer Pixels { float X[]; };

uniform uint B;  // rows (images)
uniform uint K;  // pixels per row

void main() {
    uint j = gl_GlobalInvocationID.x;    // word within the row
    uint row = gl_GlobalInvocationID.y;
    uint KW = (K + 3u) / 4u;             // words per row
    if (j >= KW || row >= B) return;
    uint word = words[row * KW + j];
    for (uint i = 0u; i < 4u; ++i) {
        uint k = 4u * j + i;             // the pixel that byte i holds
        if (k >= K) break;               // padding bytes at the end of the row
        X[row * K + k] = float((word >> (8u * i)) & 0xFFu) / 255.0;
    }
}
