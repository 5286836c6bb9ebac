// RUN: mx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{quantized tensor must have rank >= 1}}
func.func private @f(!microscale.qtensor<, mxfp4, axis = 0>)

// -----

// expected-error @+1 {{expected static shape}}
func.func private @f(!microscale.qtensor<?x32, mxfp4, axis = 1>)

// -----

// expected-error @+1 {{block axis 2 is out of range for rank 2}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = 2>)

// -----

// expected-error @+1 {{block axis -1 is out of range for rank 2}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = -3>)

// -----

// expected-error @+1 {{block size 32 does not divide the extent 48 of block axis 1}}
func.func private @f(!microscale.qtensor<64x48, mxfp4, axis = 1>)

// -----

// expected-error @+1 {{block size 16 does not divide the extent 40 of block axis 0}}
func.func private @f(!microscale.qtensor<40x32, nvfp4, axis = 0>)

// -----

// Triton's own wording for an odd FP4 packing extent.
// expected-error @+1 {{value layout #microscale.strided does not fit logical shape [64, 33]: FP4 packing dimension -1 must have an even size, got 33}}
func.func private @f(!microscale.qtensor<64x33, mxfp4, axis = 0>)

// -----

// expected-error @+1 {{FP4 packing dimension -2 must have an even size, got 3}}
func.func private @f(!microscale.qtensor<3x64, mxfp4, axis = 1, values = #microscale.strided<major_dim = -2>>)

// -----

// expected-error @+1 {{FP6 packing dimension -1 must have a size divisible by 4, got 34}}
func.func private @f(!microscale.qtensor<64x34, mxfp6_e2m3, axis = 0>)

// -----

// expected-error @+1 {{expected a microscale layout attribute, got 3 : i32}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = 1, values = 3 : i32>)

// -----

// expected-error @+1 {{expected 'values' or 'scales', got 'layout'}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = 1, layout = #microscale.strided>)

// -----

// expected-error @+1 {{'values' is given twice}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = 1, values = #microscale.strided, values = #microscale.strided>)

// -----

// expected-error @+1 {{expected ','}}
func.func private @f(!microscale.qtensor<64x32, mxfp4>)

// -----

// expected-error @+1 {{expected 'axis'}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, block_axis = 1>)

// -----

// expected-error @+1 {{unknown microscaling format 'fp4'}}
func.func private @f(!microscale.qtensor<64x32, fp4, axis = 1>)

// -----

// Storage sizes are int64: tensors that could overflow them are refused.
// expected-error @+1 {{quantized tensor is too large: more than 2^48 elements}}
func.func private @f(!microscale.qtensor<4611686018427387904x64, mxfp4, axis = 1>)

// -----

// An empty tensor whose other extents multiply past 2^48 (its strides would
// overflow int64): found by the type-parser fuzzer.
// expected-error @+1 {{quantized tensor is too large: more than 2^48 elements (counting the non-zero extents)}}
func.func private @empty_but_huge(!microscale.qtensor<0x6x17x20x6x17x25x88x64x1025x88x64x1024x64x258, mxfp4, axis = 0>)
