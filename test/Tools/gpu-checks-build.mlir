// The GPU checks (bench/gpu: kernel-check under compute-sanitizer,
// stream-check, device-check) and the CUDA runtime's stream API they use are
// plain C++ with no MLIR: they must build everywhere and skip cleanly
// without a GPU (device-check also with one GPU: "skipped: 1 GPU").
// RUN: rm -rf %t && mkdir -p %t && cd %t && g++ -O0 -std=c++17 -I%microscale_src_root/include -c %microscale_src_root/lib/Reference/*.cpp %microscale_src_root/lib/Runtime/CUDA/CudaDriver.cpp %microscale_src_root/lib/Runtime/CUDA/ConversionKernel.cpp
// RUN: g++ -O0 -std=c++17 -I%microscale_src_root/include %microscale_src_root/bench/gpu/kernel-check.cpp %t/*.o -ldl -o %t/kernel-check
// RUN: g++ -O0 -std=c++17 -I%microscale_src_root/include %microscale_src_root/bench/gpu/stream-check.cpp %t/*.o -ldl -o %t/stream-check
// RUN: g++ -O0 -std=c++17 -I%microscale_src_root/include %microscale_src_root/bench/gpu/device-check.cpp %t/*.o -ldl -o %t/device-check
// RUN: %t/kernel-check %t/nokernels | FileCheck %s
// RUN: %t/stream-check %t/nokernels | FileCheck %s
// RUN: %t/device-check %t/nokernels | FileCheck %s
// CHECK: SKIP: cannot load the CUDA driver (libcuda.so.1): no NVIDIA GPU driver on this machine
// UNSUPPORTED: cuda-driver
