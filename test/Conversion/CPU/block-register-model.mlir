// The host's register model (register-file-bytes; the JIT sets it from the
// host, 2048 with AVX-512): without it the largest block with whole lines on
// both sides, 128 x 128 nibbles in 128 vectors, which spill; with it a block
// of 128 x 32 nibbles (32 vectors, each loaded as four 16-byte runs that the
// band's next block continues) and fewer routing steps per byte.
// RUN: mx-opt %s --microscale-cpu-lower-storage | FileCheck %s --check-prefix=NONE
// RUN: mx-opt %s --microscale-cpu-lower-storage=register-file-bytes=2048 | FileCheck %s --check-prefix=AVX512
// RUN: mx-opt %s --microscale-lower-storage-conversions=register-file-bytes=2048 | FileCheck %s --check-prefix=AVX512
// NONE-LABEL: func @strided_to_blackwell_shuffled
// NONE-COUNT-128: vector.load %arg0{{.*}} vector<64xi8>
// NONE-NOT: vector.load %arg0
// AVX512-LABEL: func @strided_to_blackwell_shuffled
// AVX512-NOT: vector<64xi8> = vector.load %arg0
// AVX512-COUNT-128: vector.load %arg0{{.*}} vector<16xi8>
// AVX512-NOT: vector.load %arg0
func.func @strided_to_blackwell_shuffled(%src: memref<131072xi8>, %dst: memref<131072xi8>) {
  microscale.convert_storage values %src, %dst
      : !microscale.qtensor<2x256x512, mxfp4, axis = 1>
     -> !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>,
        memref<131072xi8>, memref<131072xi8>
  return
}
