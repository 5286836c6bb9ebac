// RUN: mx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{mx_axis must be -1 or -2, got 0}}
func.func private @f() attributes {test.l = #microscale.hopper_value<mx_axis = 0, mma_version = 3>}

// -----

// expected-error @+1 {{mma_version must be 2 (mma.sync) or 3 (wgmma), got 1}}
func.func private @f() attributes {test.l = #microscale.hopper_value<mx_axis = -2, mma_version = 1>}

// -----

// expected-error @+1 {{mx_axis must be -1 or -2, got -3}}
func.func private @f() attributes {test.l = #microscale.hopper_scale<mx_axis = -3, num_warps = 4>}

// -----

// expected-error @+1 {{num_warps must be a power of two in [1, 32], got 6}}
func.func private @f() attributes {test.l = #microscale.hopper_scale<mx_axis = -2, num_warps = 6>}

// -----

// expected-error @+1 {{block_k must be an even number of FP4 elements in [2, 65536], got 127}}
func.func private @f() attributes {test.l = #microscale.blackwell_shuffled_value<block_k = 127, block_n = 256>}

// -----

// expected-error @+1 {{block_n must be in [1, 65536], got 0}}
func.func private @f() attributes {test.l = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 0>}

// -----

// expected-error @+1 {{layout #microscale.hopper_scale<mx_axis = -2, num_warps = 8> cannot hold element values (it is a scale layout)}}
func.func private @f(!microscale.qtensor<256x512, mxfp4, axis = 0, values = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>)

// -----

// expected-error @+1 {{layout #microscale.blackwell_value cannot hold scales (it is an element-value layout)}}
func.func private @f(!microscale.qtensor<256x512, mxfp4, axis = 0, scales = #microscale.blackwell_value>)

// -----

// The Hopper weight layout for mx_axis = -2 on a tensor blocked along its
// last axis.
// expected-error @+1 {{value layout #microscale.hopper_value<mx_axis = -2, mma_version = 3> requires block axis 0 but the tensor is blocked along axis 1}}
func.func private @f(!microscale.qtensor<256x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>)

// -----

// expected-error @+1 {{scale layout #microscale.cdna4_scale requires block axis 1 but the tensor is blocked along axis 2}}
func.func private @f(!microscale.qtensor<2x256x512, mxfp4, axis = 2, scales = #microscale.cdna4_scale>)

// -----

// expected-error @+1 {{value layout #microscale.hopper_value<mx_axis = -2, mma_version = 3> does not fit logical shape [256, 512]: hopper_value holds 4-bit codes only, got 8-bit codes}}
func.func private @f(!microscale.qtensor<256x512, mxfp8_e4m3, axis = 0, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>>)

// -----

// Triton's own wording for the odd non-MX extent of the canonical source.
// expected-error @+1 {{value layout #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256> does not fit logical shape [64, 3]: FP4 packing dimension -1 must have an even size, got 3}}
func.func private @f(!microscale.qtensor<64x3, mxfp4, axis = 0, values = #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>>)

// -----

// A rank-1 tensor has no [.., K, N] for the Blackwell layouts.
// expected-error @+1 {{value layout #microscale.blackwell_value does not fit logical shape [64]}}
func.func private @f(!microscale.qtensor<64, mxfp4, axis = 0, values = #microscale.blackwell_value>)

// -----

// expected-error @+1 {{num_warps must be a power of two in [1, 32], got 64}}
func.func private @f() attributes {test.l = #microscale.hopper_scale<mx_axis = -2, num_warps = 64>}

// -----

// expected-error @+1 {{block_k must be an even number of FP4 elements in [2, 65536], got 9223372036854775806}}
func.func private @f() attributes {test.l = #microscale.blackwell_shuffled_value<block_k = 9223372036854775806, block_n = 1>}
