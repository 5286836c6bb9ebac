// When a step of examples/downstream/build-and-run.sh fails, its output is
// shown (here: installing from a build tree that does not exist), not
// swallowed.
// RUN: not %microscale_src_root/examples/downstream/build-and-run.sh %t/no-build %t/work 2>&1 | FileCheck %s
// CHECK: build-and-run.sh: failed: cmake --install {{.*}}no-build
// CHECK: CMake Error: {{.*}}no-build
