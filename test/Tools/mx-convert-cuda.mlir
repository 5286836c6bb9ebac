// mx-convert --device cuda: the conversion compiled by microscale-gpu-to-ptx
// into one kernel, run by the MLIR-free CUDA runtime. Without a GPU driver
// it compiles, then stops with a message, a non-zero exit and no output;
// the kernel it compiled can be saved (--cuda-save-kernel) and run
// elsewhere (bench/gpu/run-mx-convert-checks.sh does so on the H200,
// against mx-convert --device host's output).
// UNSUPPORTED: cuda-driver
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -c 131072 /dev/urandom > %t/in.bin
// RUN: not mx-convert --device cuda --cuda-save-kernel %t/k --type 2x256x512xf4E2M1FN --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=NODRIVER
// NODRIVER: mx-convert: error: --device cuda: cannot load the CUDA driver (libcuda.so.1): no NVIDIA GPU driver on this machine
// RUN: not test -e %t/out.bin
// The staged kernel: 32 blocks of 128 threads, the two buffers only.
// RUN: FileCheck %s --check-prefix=LAUNCH --input-file %t/k.launch
// LAUNCH: convert_storage_0 32 128 0 32768 131072 131072
// RUN: test -s %t/k.image

// Scales: the byte tile kernel (one tile of 16 x 128 scales per batch, 256
// threads; blackwell_scale pads nothing here), PTX text by request.
// RUN: head -c 4096 /dev/urandom > %t/scales.bin
// RUN: not mx-convert --device cuda --cuda-format isa --cuda-save-kernel %t/s --type 2x16x128xf8E8M0FNU --to '#microscale.blackwell_scale' %t/scales.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=NODRIVER
// RUN: FileCheck %s --check-prefix=SCALES --input-file %t/s.launch
// SCALES: convert_storage_0 2 256 0 4096 4096 4096
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/s.image
// PTX: .entry convert_storage_0(

// An empty tensor launches nothing and needs no GPU.
// RUN: mx-convert --device cuda --type 0x256x512xf4E2M1FN --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' /dev/null -o %t/empty.bin
// RUN: test -e %t/empty.bin && not test -s %t/empty.bin

// Bad flags.
// RUN: not mx-convert --device tpu --type 2x256x512xf4E2M1FN --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: mx-convert: error: --device must be host or cuda, got 'tpu'
// RUN: not mx-convert --device cuda --cuda-format elf --type 2x256x512xf4E2M1FN --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: mx-convert: error: --cuda-format must be auto, bin or isa, got 'elf'
// RUN: not mx-convert --device cuda --cuda-chip sm_12 --type 2x256x512xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: mx-convert: error: --device cuda: compiling the conversion for sm_12 failed

// A checkpoint: the shards' temporaries are written when the first
// conversion fails; they are removed, and so is the directory made for OUT.
// RUN: %python %S/safetensors.py gptoss %t/ckpt
// RUN: not mx-convert --device cuda %t/ckpt -o %t/converted --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' --scales-to '#microscale.hopper_scale<mx_axis = -2, num_warps = 8>' 2>&1 | FileCheck %s --check-prefix=NODRIVER
// RUN: not ls %t/converted
