// The GPU benchmarks are plain C++ with no MLIR (they run where MLIR is
// not): they must build everywhere and skip cleanly without a GPU.
// RUN: g++ -O1 -std=c++17 -I%microscale_src_root/include %microscale_src_root/bench/gpu/gpu-convert-bench.cpp %microscale_src_root/lib/Reference/*.cpp %microscale_src_root/lib/Runtime/CUDA/CudaDriver.cpp -ldl -o %t.convert
// RUN: g++ -O1 -std=c++17 -I%microscale_src_root/include %microscale_src_root/bench/gpu/dequant-bench.cpp %microscale_src_root/lib/Reference/*.cpp %microscale_src_root/lib/Runtime/CUDA/CudaDriver.cpp -ldl -o %t.dequant
// RUN: g++ -O1 -std=c++17 -I%microscale_src_root/include -I%microscale_src_root/bench/gpu %microscale_src_root/bench/gpu/run-saved-kernel.cpp %microscale_src_root/lib/Runtime/CUDA/*.cpp -ldl -o %t.saved
// RUN: %t.convert %t.nokernels | FileCheck %s
// RUN: %t.dequant %t.nokernels | FileCheck %s
// CHECK: SKIP: cannot load the CUDA driver (libcuda.so.1): no NVIDIA GPU driver on this machine
// RUN: not %t.saved %t/missing %t/in %t/expected 2>&1 | FileCheck %s --check-prefix=SAVED
// SAVED: no kernel image or launch
// UNSUPPORTED: cuda-driver
