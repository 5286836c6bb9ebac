// The library layering of docs/design.md holds on the source tree: the
// target-neutral libraries (Reference, IR, Utils, Transforms) neither include
// nor link a target dialect, and no target includes another target's code.
// RUN: %python %microscale_src_root/tools/scripts/check-layering.py %microscale_src_root | FileCheck %s
// CHECK: layering: ok
//
// The check finds each kind of violation (a tree planted with them).
// RUN: not %python %microscale_src_root/tools/scripts/check-layering.py %S/Inputs/violations | FileCheck %s --check-prefix=BAD
// BAD-DAG: lib/Conversion/CPU/Bad.cpp:1: the CPU target includes NVVM
// BAD-DAG: lib/Dialect/Microscale/Utils/CMakeLists.txt: links the target library MLIRLLVMDialect
// BAD-DAG: lib/Dialect/Microscale/Utils/CMakeLists.txt: links the target library MLIRArithToLLVM
// BAD-DAG: Utils/Bad.cpp:3: includes a target header
// BAD-DAG: Utils/Bad.cpp:4: includes a target header
// BAD-DAG: Utils/Bad.cpp:5: target-specific code
// BAD-DAG: Utils/Bad.cpp:6: target-specific code
