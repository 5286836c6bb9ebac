// Debian's upstream mlir-opt runs our passes from the pass plugin. Plugin
// passes are registered while the command line is parsed, so they are named
// in --pass-pipeline rather than as flags of their own.
// RUN: %upstream_mlir_opt --load-dialect-plugin=%microscale_libs/MicroscaleDialectPlugin.so --load-pass-plugin=%microscale_libs/MicroscalePassPlugin.so %S/../Transforms/fold-constants.mlir --pass-pipeline='builtin.module(microscale-fold-constants)' | FileCheck %S/../Transforms/fold-constants.mlir
// RUN: %upstream_mlir_opt --load-dialect-plugin=%microscale_libs/MicroscaleDialectPlugin.so --load-pass-plugin=%microscale_libs/MicroscalePassPlugin.so %S/../Transforms/fold-constants.mlir --pass-pipeline='builtin.module(microscale-fold-constants{max-elements=1000})' | FileCheck %S/../Transforms/fold-constants.mlir --check-prefix=LIMIT
