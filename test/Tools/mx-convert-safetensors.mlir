// mx-convert on a .safetensors checkpoint in the MXFP4 convention (values
// `*_blocks` uint8 [E, N, K/32, 16], scales `*_scales` uint8 [E, N, K/32]).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/safetensors.py make %t/ckpt.safetensors
// RUN: mx-convert %t/ckpt.safetensors -o %t/hopper.safetensors \
// RUN:   --tensor block.0.mlp1_weight_blocks,block.0.mlp1_weight_scales \
// RUN:   --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' \
// RUN:   --scales-to '#microscale.hopper_scale<mx_axis = -2, num_warps = 8>'
// RUN: %python %S/safetensors.py show %t/hopper.safetensors | FileCheck %s

// The converted tensors have their layouts' storage shapes; the others are
// copied through; the metadata records what each converted tensor is.
// CHECK: block.0.mlp1_weight_blocks U8 [2, 64, 256]
// CHECK: block.0.mlp1_weight_scales U8 [2, 8, 64]
// CHECK: block.0.norm F32 [3]
// CHECK: metadata format = pt
// CHECK: metadata microscale.block.0.mlp1_weight_blocks = 2x64x64xf4E2M1FN #microscale.hopper_value<mx_axis = -2, mma_version = 3>
// CHECK: metadata microscale.block.0.mlp1_weight_scales = 2x2x64xf8E8M0FNU #microscale.hopper_scale<mx_axis = -2, num_warps = 8>

// The bytes are those of the raw-byte conversion of the same tensor, and the
// untouched tensor is byte-identical.
// RUN: %python %S/safetensors.py get %t/ckpt.safetensors block.0.mlp1_weight_blocks %t/blocks.bin
// RUN: mx-convert --type 2x64x64xf4E2M1FN --from '#microscale.strided<major_dim = -2>' --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' %t/blocks.bin -o %t/blocks.hopper
// RUN: %python %S/safetensors.py get %t/hopper.safetensors block.0.mlp1_weight_blocks %t/blocks.out
// RUN: cmp %t/blocks.hopper %t/blocks.out
// RUN: %python %S/safetensors.py get %t/ckpt.safetensors block.0.norm %t/norm.in
// RUN: %python %S/safetensors.py get %t/hopper.safetensors block.0.norm %t/norm.out
// RUN: cmp %t/norm.in %t/norm.out

// --type names one tensor's logical type.
// RUN: not mx-convert %t/hopper.safetensors -o %t/back.safetensors \
// RUN:   --tensor block.0.mlp1_weight_blocks,block.0.mlp1_weight_scales \
// RUN:   --type 2x64x64xf4E2M1FN --to '#microscale.strided<major_dim = -2>' 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: mx-convert: error: --type applies to one tensor; 2 are selected

// Round trip back to the checkpoint's own layout: the same bytes. The
// converted file says what its tensors are, so no --type or --from is needed.
// RUN: mx-convert %t/hopper.safetensors -o %t/back.safetensors \
// RUN:   --tensor block.0.mlp1_weight_blocks,block.0.mlp1_weight_scales \
// RUN:   --to '#microscale.strided<major_dim = -2>' --scales-to '#microscale.strided<major_dim = -2>'
// RUN: %python %S/safetensors.py get %t/back.safetensors block.0.mlp1_weight_blocks %t/blocks.back
// RUN: cmp %t/blocks.bin %t/blocks.back
// RUN: %python %S/safetensors.py get %t/ckpt.safetensors block.0.mlp1_weight_scales %t/scales.bin
// RUN: %python %S/safetensors.py get %t/back.safetensors block.0.mlp1_weight_scales %t/scales.back
// RUN: cmp %t/scales.bin %t/scales.back

// Bad files and bad requests: a reason, a non-zero exit, nothing written.
// RUN: %python %S/safetensors.py corrupt %t/ckpt.safetensors truncated %t/truncated.safetensors
// RUN: not mx-convert %t/truncated.safetensors -o %t/bad.safetensors --tensor block.0.mlp1_weight_blocks --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: mx-convert: error: '{{.*}}truncated.safetensors' is not a valid safetensors file: tensor '{{.*}}' has data_offsets outside the {{[0-9]+}} data bytes (truncated?)
// RUN: %python %S/safetensors.py corrupt %t/ckpt.safetensors header %t/header.safetensors
// RUN: not mx-convert %t/header.safetensors -o %t/bad.safetensors --tensor x --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=HEADER
// HEADER: mx-convert: error: '{{.*}}header.safetensors' is not a valid safetensors file
// RUN: %python %S/safetensors.py corrupt %t/ckpt.safetensors shortsize %t/short.safetensors
// RUN: not mx-convert %t/short.safetensors -o %t/bad.safetensors --tensor x --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: is not a valid safetensors file: shorter than its 8-byte header size
// RUN: not mx-convert %t/ckpt.safetensors -o %t/bad.safetensors --tensor nope --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: mx-convert: error: '{{.*}}ckpt.safetensors' has no tensor named 'nope'
// RUN: not mx-convert %t/ckpt.safetensors -o %t/bad.safetensors --tensor block.0.norm --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: mx-convert: error: tensor 'block.0.norm' has dtype F32; packed FP4 values and E8M0 scales are stored as U8
// RUN: not mx-convert %t/ckpt.safetensors -o %t/bad.safetensors --tensor block.0.mlp1_weight_scales --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=NOSCALES
// NOSCALES: mx-convert: error: --scales-to: no layout given for tensor 'block.0.mlp1_weight_scales'
// RUN: not ls %t/bad.safetensors
// RUN: not ls %t/bad.safetensors.mx-convert-partial
