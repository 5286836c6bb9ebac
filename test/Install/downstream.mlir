// Installs this build, builds examples/downstream against the installed tree
// (find_package(Microscale CONFIG)) and runs it: the steps of
// docs/use-from-your-compiler.md.
// RUN: %microscale_src_root/examples/downstream/build-and-run.sh %microscale_obj_root %t | FileCheck %s

// The weight was quantized and packed into the Hopper layouts by the
// downstream compiler's pipeline: only constants are left.
// CHECK: func.func @weights()
// CHECK-DAG: arith.constant dense<"0xFF2D{{[0-9A-F]+}}"> : tensor<2x64x512xi8>
// CHECK-DAG: arith.constant dense<"0x7C7C{{[0-9A-F]+}}"> : tensor<2x4x256xi8>
// CHECK-NOT: microscale.
// CHECK: return
