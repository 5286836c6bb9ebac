// mx-numerics: seed 002's section 4 table from the reference library.

// Default synthetic set: invariants, and the seed's target on the pooled row.
// RUN: mx-numerics --csv | %python %S/check-numerics.py --seed-target | FileCheck %s --check-prefix=TARGET
// TARGET: checked 30 rows, 0 failures

// The CSV schema and the format spellings the issue asks for.
// RUN: mx-numerics --csv --rows 4 --cols 96 | FileCheck %s --check-prefix=CSV
// CSV: distribution,format,mean,p50,p90,p99,max,exact_blocks
// CSV-NEXT: gaussian,mxfp4,{{[0-9.]+}},{{[0-9.]+}},{{[0-9.]+}},{{[0-9.]+}},{{[0-9.]+}},{{$}}
// CSV-NEXT: gaussian,nvfp4,
// CSV-NEXT: gaussian,nvfp4_b32,
// CSV-NEXT: gaussian,nvfp4_b32_to_mxfp6_lut,{{([0-9.]+,){5}[0-9.]+$}}
// CSV-NEXT: gaussian,nvfp4_b32_to_mxfp6_hwcvt,
// CSV-NEXT: gaussian,mxfp6_e2m3,
// CSV: all,mxfp6_e2m3,

// Tensors from a .safetensors file: bf16 and f32 ones, integers skipped.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/safetensors.py weights %t/w.safetensors
// RUN: mx-numerics --no-synthetic --csv %t/w.safetensors | %python %S/check-numerics.py | FileCheck %s --check-prefix=FILE-CHECKED
// FILE-CHECKED: checked 12 rows, 0 failures
// RUN: mx-numerics --no-synthetic %t/w.safetensors | FileCheck %s --check-prefix=FILE
// FILE: distribution format
// FILE: layer.weight mxfp4
// FILE: layer.bias   mxfp4
// FILE-NOT: layer.index

// Errors are reported, never a crash or a silent row.
// RUN: not mx-numerics --no-synthetic 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: nothing to measure
// RUN: not mx-numerics %t/missing.safetensors 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}missing.safetensors
// RUN: %python %S/safetensors.py nonfinite %t/nan.safetensors
// RUN: not mx-numerics %t/nan.safetensors 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: error: {{.*}}nan.safetensors: tensor 'w' holds a non-finite value
// RUN: %python %S/safetensors.py corrupt %t/w.safetensors truncated %t/cut.safetensors
// RUN: not mx-numerics %t/cut.safetensors 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: error:
// RUN: not mx-numerics --rows 0 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: error: --rows x --cols must be between 1 and 2^28 values
