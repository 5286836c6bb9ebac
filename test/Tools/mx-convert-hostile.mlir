// Hostile and off-spec inputs (issue 16): each refused with a message that
// says why, a non-zero exit, and nothing written.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/safetensors.py make %t/ckpt.safetensors

// A header nested 40,000 deep: refused before the (recursive) JSON parser
// sees it.
// RUN: %python %S/safetensors.py hostile nested %t/nested.safetensors
// RUN: not mx-convert %t/nested.safetensors -o %t/out.safetensors --tensor w --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: mx-convert: error: '{{.*}}nested.safetensors' is not a valid safetensors file: the JSON header nests deeper than 64 levels

// F32 [2^62] in 0 bytes: the byte count overflows, it does not wrap to 0.
// RUN: %python %S/safetensors.py hostile huge %t/huge.safetensors
// RUN: not mx-convert %t/huge.safetensors -o %t/out.safetensors --tensor w --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: mx-convert: error: '{{.*}}huge.safetensors' is not a valid safetensors file: tensor 'w' has 0 bytes, but its dtype and shape need more than 2^63

// Overlapping data_offsets.
// RUN: %python %S/safetensors.py hostile overlap %t/overlap.safetensors
// RUN: not mx-convert %t/overlap.safetensors -o %t/out.safetensors --tensor a --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: mx-convert: error: '{{.*}}overlap.safetensors' is not a valid safetensors file: tensors 'a' and 'b' overlap in the data (data_offsets)

// __metadata__ maps strings to strings.
// RUN: %python %S/safetensors.py hostile metadata %t/metadata.safetensors
// RUN: not mx-convert %t/metadata.safetensors -o %t/out.safetensors --tensor w --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=METADATA
// METADATA: mx-convert: error: '{{.*}}metadata.safetensors' is not a valid safetensors file: __metadata__ value 'step' is not a string

// *_blocks and *_scales whose shapes disagree, whichever is converted.
// RUN: %python %S/safetensors.py hostile pair %t/pair.safetensors
// RUN: not mx-convert %t/pair.safetensors -o %t/out.safetensors --tensor m_blocks --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=PAIR
// RUN: not mx-convert %t/pair.safetensors -o %t/out.safetensors --tensor m_scales --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=PAIR
// PAIR: mx-convert: error: tensors 'm_blocks' [2, 64, 2, 16] and 'm_scales' [2, 64, 3] disagree

// A tensor named twice would be converted twice.
// RUN: not mx-convert %t/ckpt.safetensors -o %t/out.safetensors --tensor block.0.mlp1_weight_blocks,block.0.mlp1_weight_blocks --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: mx-convert: error: --tensor: 'block.0.mlp1_weight_blocks' is named more than once

// --from and --type that contradict the record mx-convert left in the
// metadata are refused; flags that agree with it are fine.
// RUN: mx-convert %t/ckpt.safetensors -o %t/blackwell.safetensors --tensor block.0.mlp1_weight_blocks --to '#microscale.blackwell_value'
// RUN: not mx-convert %t/blackwell.safetensors -o %t/out.safetensors --tensor block.0.mlp1_weight_blocks --from '#microscale.strided<major_dim = -2>' --to '#microscale.strided' 2>&1 | FileCheck %s --check-prefix=FROM
// FROM: mx-convert: error: --from: tensor 'block.0.mlp1_weight_blocks' is recorded in the metadata as #microscale.blackwell_value, not #microscale.strided<major_dim = -2> (leave --from out)
// RUN: not mx-convert %t/blackwell.safetensors -o %t/out.safetensors --tensor block.0.mlp1_weight_blocks --type 2x64x32xf4E2M1FN --to '#microscale.strided' 2>&1 | FileCheck %s --check-prefix=RECTYPE
// RECTYPE: mx-convert: error: --type: tensor 'block.0.mlp1_weight_blocks' is recorded in the metadata as 2x64x64xf4E2M1FN, not 2x64x32xf4E2M1FN (leave --type out)
// RUN: mx-convert %t/blackwell.safetensors -o %t/back.safetensors --tensor block.0.mlp1_weight_blocks --from '#microscale.blackwell_value' --type 2x64x64xf4E2M1FN --to '#microscale.strided<major_dim = -2>'
// RUN: %python %S/safetensors.py get %t/ckpt.safetensors block.0.mlp1_weight_blocks %t/blocks.in
// RUN: %python %S/safetensors.py get %t/back.safetensors block.0.mlp1_weight_blocks %t/blocks.back
// RUN: cmp %t/blocks.in %t/blocks.back

// Outputs far larger than the input are refused before anything is
// allocated: 2 bytes padded to 2 GiB of 65536 x 65536 tiles.
// RUN: printf '\x00\x00' > %t/two.bin
// RUN: not mx-convert --type 2x2xf4E2M1FN --to '#microscale.blackwell_shuffled_value<block_k = 65536, block_n = 65536>' %t/two.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=GROWTH
// GROWTH: mx-convert: error: converting '{{.*}}two.bin' (2 bytes) to #microscale.blackwell_shuffled_value<block_k = 65536, block_n = 65536> would write 2147483648 bytes, more than the limit of 8 x the input + 64 MiB

// --type shapes of terabytes, and shapes whose element count overflows:
// a message, not "LLVM ERROR: out of memory".
// RUN: not mx-convert --type 1000x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2xf4E2M1FN --to '#microscale.strided' %t/two.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=TERA
// TERA: mx-convert: error: '{{.*}}two.bin' has 2 bytes, but a 1000x{{[2x]+}}f4E2M1FN tensor in #microscale.strided has 8589934592000 storage bytes
// RUN: not mx-convert --type 4611686018427387904x4xf4E2M1FN --to '#microscale.strided' %t/two.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: mx-convert: error: --type: 4611686018427387904x4xf4E2M1FN has more than 2^48 elements
// RUN: not mx-convert --type 4611686018427387904x4xf8E8M0FNU --to '#microscale.strided' %t/two.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=OVERFLOW-SCALES
// OVERFLOW-SCALES: mx-convert: error: --type: 4611686018427387904x4xf8E8M0FNU has more than 2^48 elements

// Spellings nested deep enough to overflow the stack of MLIR's recursive
// parser (a few thousand levels) are refused before it sees them.
// RUN: not mx-convert --type 2x2xf4E2M1FN --to '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[' %t/two.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: mx-convert: error: --to: '{{\[+}}...' nests deeper than 32 levels

// RUN: not ls %t/out.bin %t/out.safetensors
// RUN: not ls %t/out.bin.mx-convert-* %t/out.safetensors.mx-convert-*
