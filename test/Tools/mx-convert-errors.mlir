// Bad input: a message naming the problem, a non-zero exit, no output file.
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -c 8192 /dev/urandom > %t/in.bin
// RUN: head -c 8191 %t/in.bin > %t/truncated.bin
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/truncated.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: mx-convert: error: '{{.*}}truncated.bin' has 8191 bytes, but a 2x64x128xf4E2M1FN tensor in #microscale.strided has 8192 storage bytes
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.hopper' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: mx-convert: error: --to: cannot parse '#microscale.hopper' as an attribute
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.format<mxfp4>' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=NOTLAYOUT
// NOTLAYOUT: mx-convert: error: --to: '#microscale.format<mxfp4>' is not a microscale layout
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.cdna4_scale' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=ROLE
// ROLE: mx-convert: error: --to: #microscale.cdna4_scale cannot hold FP4 values
// RUN: not mx-convert --type 2x3x128xf4E2M1FN --from '#microscale.strided<major_dim = -2>' --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=ODD
// ODD: mx-convert: error: value layout #microscale.strided<major_dim = -2> does not fit logical shape [2, 3, 128]: FP4 packing dimension -2 must have an even size, got 3
// Shapes the user gave, named as such (issue 19): an odd FP4 extent along
// the block axis (not "block size 2 does not divide", a block size the user
// never gave), a negative extent (not "expected non-function type").
// RUN: not mx-convert --type 1xf4E2M1FN --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=ODD-TYPE
// ODD-TYPE: mx-convert: error: --type: 1xf4E2M1FN has an odd extent (1) along dim 0, the axis its scale blocks run along: packed FP4 values need an even extent there
// ODD-TYPE-NOT: block size
// RUN: not mx-convert --type 2x-4xf4E2M1FN --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not mx-convert --type=-4x2xf4E2M1FN --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: mx-convert: error: --type: extent -4 of '{{.*}}' is negative; extents are >= 0
// NEGATIVE-NOT: non-function
// RUN: not mx-convert --type 2x64x128xf16 --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=ELEMENT
// ELEMENT: mx-convert: error: --type: the element type must be f4E2M1FN (packed FP4 values) or f8E8M0FNU (scale bytes), got 2x64x128xf16
// RUN: not mx-convert --type 2x?x128xf4E2M1FN --to '#microscale.strided' %t/in.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: mx-convert: error: --type: expected a static shaped type
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.strided' %t/missing.bin -o %t/out.bin 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: mx-convert: error: cannot read '{{.*}}missing.bin': No such file or directory
// RUN: not ls %t/out.bin
// RUN: not ls %t/out.bin.mx-convert-partial
// A good conversion writes exactly the layout's storage bytes.
// RUN: mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' %t/in.bin -o %t/out.bin
// RUN: test $(wc -c < %t/out.bin) -eq 32768
