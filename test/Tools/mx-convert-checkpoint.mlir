// mx-convert on a whole sharded checkpoint (issue 19): gpt-oss's tensor
// names, 2 layers of 4 experts (hidden 128, intermediate 64), 3 shards and
// model.safetensors.index.json. One command converts every MX tensor and
// copies the rest; converting back gives the checkpoint again, byte for
// byte and shape for shape.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/safetensors.py gptoss %t/ckpt | FileCheck %s --check-prefix=MADE
// MADE: 41 tensors, {{[0-9]+}} bytes, 3 shards in {{.*}}ckpt

// The layouts are given in a spelling of their own; the metadata records
// them in normal form. Off a terminal, --progress prints a line per tensor
// and a summary.
// RUN: mx-convert %t/ckpt -o %t/hopper --progress \
// RUN:   --to '#microscale.hopper_value<mma_version=3, mx_axis=-2>' \
// RUN:   --scales-to '#microscale.hopper_scale<num_warps=8,mx_axis=-2>' 2> %t/progress.txt
// RUN: FileCheck %s --check-prefix=PROGRESS < %t/progress.txt
// (Tensors are counted as they are done: one whose conversion is still
// compiling waits while the tensors after it are copied.)
// PROGRESS-DAG: mx-convert: [1/41] copy model.embed_tokens.weight, 65.5 kB in {{[0-9.]+}} s, {{.*}}/s so far, ETA {{[0-9]+}} s
// PROGRESS-DAG: mx-convert: [{{[0-9]+}}/41] convert model.layers.0.mlp.experts.gate_up_proj_blocks, 32.8 kB in
// PROGRESS-DAG: mx-convert: [{{[0-9]+}}/41] copy lm_head.weight, 65.5 kB
// PROGRESS: mx-convert: wrote {{.*}}hopper: 8 tensors converted, 33 copied, 578.1 kB in {{[0-9.]+}} s

// Off a terminal and without --progress: nothing on stderr.
// RUN: mx-convert %t/ckpt -o %t/quiet --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' \
// RUN:   --scales-to '#microscale.hopper_scale<mx_axis = -2, num_warps = 8>' 2> %t/quiet.txt
// RUN: count 0 < %t/quiet.txt

// The same shards and an index with the new total size and the same map.
// RUN: ls %t/hopper | FileCheck %s --check-prefix=FILES
// FILES: model-00001-of-00003.safetensors
// FILES-NEXT: model-00002-of-00003.safetensors
// FILES-NEXT: model-00003-of-00003.safetensors
// FILES-NEXT: model.safetensors.index.json
// FILES-NOT: mx-convert
// RUN: %python %S/safetensors.py checkindex %t/hopper %t/ckpt | FileCheck %s --check-prefix=INDEX
// INDEX: total_size matches the shards
// INDEX: weight_map is the reference's

// Converted tensors take their layouts' storage shapes and record what
// they are, and where they came from; bf16 tensors are copied.
// RUN: %python %S/safetensors.py show %t/hopper/model-00002-of-00003.safetensors | FileCheck %s --check-prefix=SHOW
// SHOW: model.layers.0.mlp.experts.down_proj_blocks U8 [4, 64, 256]
// SHOW: model.layers.0.mlp.experts.down_proj_scales U8 [4, 8, 64]
// SHOW: model.layers.0.mlp.experts.gate_up_proj_blocks U8 [4, 64, 256]
// SHOW: model.layers.0.mlp.experts.gate_up_proj_scales U8 [4, 8, 128]
// SHOW: model.layers.0.mlp.router.weight BF16 [4, 128]
// SHOW: metadata format = pt
// SHOW: metadata microscale.model.layers.0.mlp.experts.down_proj_blocks = 4x64x128xf4E2M1FN #microscale.hopper_value<mx_axis = -2, mma_version = 3>; originally [4, 128, 2, 16] in #microscale.strided<major_dim = -2>
// SHOW: metadata microscale.model.layers.0.mlp.experts.gate_up_proj_scales = 4x4x128xf8E8M0FNU #microscale.hopper_scale<mx_axis = -2, num_warps = 8>; originally [4, 128, 4] in #microscale.strided<major_dim = -2>

// A converted tensor's bytes are those of the raw-byte conversion of the
// same tensor (one converted after others, from the buffer they shared).
// RUN: %python %S/safetensors.py get %t/ckpt/model-00003-of-00003.safetensors model.layers.1.mlp.experts.down_proj_blocks %t/down.bin
// RUN: mx-convert --type 4x64x128xf4E2M1FN --from '#microscale.strided<major_dim = -2>' --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' %t/down.bin -o %t/down.hopper
// RUN: %python %S/safetensors.py get %t/hopper/model-00003-of-00003.safetensors model.layers.1.mlp.experts.down_proj_blocks %t/down.out
// RUN: cmp %t/down.hopper %t/down.out

// Back to the checkpoint's layout, from the index: the checkpoint again
// (shapes, bytes, metadata; the records are gone), and the same index.
// RUN: mx-convert %t/hopper/model.safetensors.index.json -o %t/back \
// RUN:   --to '#microscale.strided<major_dim = -2>' --scales-to '#microscale.strided<major_dim = -2>'
// RUN: %python %S/safetensors.py compare %t/ckpt %t/back | FileCheck %s --check-prefix=SAME
// SAME: identical (3 files, 41 tensors)
// RUN: %python %S/safetensors.py checkindex %t/back %t/ckpt | FileCheck %s --check-prefix=INDEX
// RUN: %python %S/safetensors.py show %t/back/model-00003-of-00003.safetensors | FileCheck %s --check-prefix=BACK
// BACK: model.layers.1.mlp.experts.down_proj_blocks U8 [4, 128, 2, 16]
// BACK-NOT: microscale.

// Through another layout and back: the origin is kept on the way.
// RUN: mx-convert %t/hopper -o %t/blackwell --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale'
// RUN: mx-convert %t/blackwell -o %t/back2 --to '#microscale.strided<major_dim = -2>' --scales-to '#microscale.strided<major_dim = -2>'
// RUN: %python %S/safetensors.py compare %t/ckpt %t/back2 | FileCheck %s --check-prefix=SAME

// --tensor globs select among the U8 tensors; the rest is copied.
// RUN: mx-convert %t/ckpt -o %t/glob --progress --tensor 'model.layers.1.*_blocks' \
// RUN:   --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=GLOB
// GLOB: wrote {{.*}}glob: 2 tensors converted, 39 copied
// RUN: %python %S/safetensors.py show %t/glob/model-00003-of-00003.safetensors | FileCheck %s --check-prefix=GLOB-SHOW
// GLOB-SHOW: model.layers.1.mlp.experts.down_proj_blocks U8 [4, 128, 128]
// GLOB-SHOW: model.layers.1.mlp.experts.down_proj_scales U8 [4, 128, 2]
// RUN: not mx-convert %t/ckpt -o %t/fail --tensor 'model.layers.7.*' --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=NOMATCH
// NOMATCH: mx-convert: error: '{{.*}}ckpt' has no tensor of dtype U8 matching 'model.layers.7.*'
// RUN: not mx-convert %t/ckpt -o %t/fail --tensor 'model.layers.[0' --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=BADGLOB
// BADGLOB: mx-convert: error: --tensor: 'model.layers.[0' is not a valid glob

// A *_blocks / *_scales pair whose shapes disagree is refused, naming both.
// RUN: %python %S/safetensors.py gptoss %t/badpair --bad-pair
// RUN: not mx-convert %t/badpair -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=PAIR
// PAIR: mx-convert: error: tensors 'model.layers.1.mlp.experts.down_proj_blocks' [4, 128, 2, 16] and 'model.layers.1.mlp.experts.down_proj_scales' [4, 128, 3] disagree

// Indexes that do not match their shards.
// RUN: cp -r %t/ckpt %t/missing && %python %S/safetensors.py index %t/missing missing
// RUN: not mx-convert %t/missing -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: mx-convert: error: '{{.*}}missing{{/|\\}}model.safetensors.index.json' is not a valid checkpoint index: tensor 'model.layers.9.mlp.experts.down_proj_blocks' is mapped to 'model-00001-of-00003.safetensors', which has no tensor of that name
// RUN: cp -r %t/ckpt %t/wrong && %python %S/safetensors.py index %t/wrong wrongshard
// RUN: not mx-convert %t/wrong -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=WRONG
// WRONG: is not a valid checkpoint index: 'model-00001-of-00003.safetensors' holds tensor 'model.embed_tokens.weight', which "weight_map" maps to 'model-00003-of-00003.safetensors'
// RUN: cp -r %t/ckpt %t/escape && %python %S/safetensors.py index %t/escape escape
// RUN: not mx-convert %t/escape/model.safetensors.index.json -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=ESCAPE
// ESCAPE: is not a valid checkpoint index: tensor 'lm_head.weight' is mapped to '../model-00003-of-00003.safetensors', which is not a file name in the index's directory
// RUN: cp -r %t/ckpt %t/noshard && %python %S/safetensors.py index %t/noshard noshard
// RUN: not mx-convert %t/noshard -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=NOSHARD
// NOSHARD: is not a valid checkpoint index: cannot read '{{.*}}model-00003-of-00003.safetensors': No such file or directory
// RUN: cp -r %t/ckpt %t/unlisted && %python %S/safetensors.py index %t/unlisted unlisted
// RUN: not mx-convert %t/unlisted -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=UNLISTED
// UNLISTED: is not a valid checkpoint index: 'model-00001-of-00003.safetensors' holds tensor 'model.embed_tokens.weight', which "weight_map" does not list
// RUN: echo '{"weight_map": []}' > %t/bad.index.json
// RUN: not mx-convert %t/bad.index.json -o %t/fail --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=NOMAP
// NOMAP: mx-convert: error: '{{.*}}bad.index.json' is not a valid checkpoint index: no "weight_map" object

// A checkpoint without MX tensors, and a layout that cannot hold the
// scales: refused before anything is written, the directory for OUT not
// even created. (A failure once the shards are being written, when they and
// the directory are removed again: mx-convert-cuda.mlir.)
// RUN: mkdir %t/plain && %python %S/safetensors.py weights %t/plain/model.safetensors
// RUN: not mx-convert %t/plain -o %t/fail --to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=NOMX
// NOMX: mx-convert: error: '{{.*}}plain' has no MX tensors (no U8 *_blocks / *_scales pairs, no microscale records in its metadata): name them with --tensor
// RUN: not mx-convert %t/ckpt -o %t/fail --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_value' 2>&1 | FileCheck %s --check-prefix=ROLE
// ROLE: mx-convert: error: --to: #microscale.blackwell_value cannot hold scales
// RUN: not ls %t/fail

// OUT for shards is a directory: an existing one keeps its other files and
// has the shards replaced; a file, or IN's own directory, is refused.
// RUN: mkdir %t/existing && echo keep > %t/existing/README && echo old > %t/existing/model-00001-of-00003.safetensors
// RUN: mx-convert %t/ckpt -o %t/existing --to '#microscale.strided<major_dim = -2>' --scales-to '#microscale.strided<major_dim = -2>'
// RUN: %python %S/safetensors.py compare %t/ckpt %t/existing | FileCheck %s --check-prefix=SAME
// RUN: FileCheck %s --check-prefix=KEEP < %t/existing/README
// KEEP: keep
// RUN: not mx-convert %t/ckpt -o %t/existing/README --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=NOTDIR
// NOTDIR: mx-convert: error: cannot write '{{.*}}README': a sharded checkpoint is written to a directory, and this is not one
// RUN: not mx-convert %t/ckpt -o %t/ckpt --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=INPLACE
// INPLACE: mx-convert: error: cannot write '{{.*}}ckpt': it is the directory of IN; write the converted checkpoint elsewhere

// One shard on its own, under any name: read as safetensors by its bytes.
// RUN: cp %t/ckpt/model-00002-of-00003.safetensors %t/shard.bin
// RUN: mx-convert %t/shard.bin -o %t/shard.out --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' --progress 2>&1 | FileCheck %s --check-prefix=SHARD
// SHARD: wrote {{.*}}shard.out: 4 tensors converted, 15 copied
// To stdout: through a pipe (written, not copied by the kernel) and into a
// file, the same bytes as to a file. Shards need a directory.
// RUN: mx-convert %t/shard.bin -o - --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' | cat > %t/piped.out
// RUN: mx-convert %t/shard.bin -o - --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' > %t/redirected.out
// RUN: cmp %t/piped.out %t/shard.out
// RUN: cmp %t/redirected.out %t/shard.out
// RUN: not mx-convert %t/ckpt -o - --to '#microscale.blackwell_value' --scales-to '#microscale.blackwell_scale' 2>&1 | FileCheck %s --check-prefix=STDOUT
// STDOUT: mx-convert: error: -o -: a sharded checkpoint is written to a directory
