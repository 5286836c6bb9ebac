// How mx-convert writes OUT (issue 16): `-o -` is stdout; a device or FIFO
// is written in place; otherwise a uniquely named temporary next to OUT,
// never opened through a link, removed on errors and signals, is renamed
// over OUT once complete; I/O errors name the file and the cause.
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -c 8192 /dev/urandom > %t/in.bin
// RUN: mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/expected.bin

// `-o -` streams to stdout and creates no file named `-`.
// RUN: cd %t && mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' in.bin -o - > %t/stdout.bin
// RUN: cmp %t/stdout.bin %t/expected.bin
// RUN: not ls %t/-

// A link planted at the name the temporary once had is not followed: its
// target keeps its bytes, and OUT is written.
// RUN: echo precious > %t/target
// RUN: ln -s %t/target %t/out.bin.mx-convert-partial
// RUN: mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/out.bin
// RUN: FileCheck %s --check-prefix=PRECIOUS < %t/target
// PRECIOUS: precious
// RUN: cmp %t/out.bin %t/expected.bin

// A link at OUT is replaced by the output, not written through.
// RUN: ln -s %t/target %t/link.bin
// RUN: mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/link.bin
// RUN: FileCheck %s --check-prefix=PRECIOUS < %t/target
// RUN: test ! -L %t/link.bin
// RUN: cmp %t/link.bin %t/expected.bin

// A '%' in OUT's path is just a character (not a random digit, as in a
// TempFile model).
// RUN: mkdir %t/100%%
// RUN: mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/100%%/out%%.bin
// RUN: cmp %t/100%%/out%%.bin %t/expected.bin

// A directory is refused.
// RUN: mkdir %t/dir
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/dir 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: mx-convert: error: cannot write '{{.*}}dir': it is a directory

// An unwritable OUT is reported before the conversion runs.
// RUN: not mx-convert --type 2x64x128xf4E2M1FN --to '#microscale.blackwell_value' %t/in.bin -o %t/missing/out.bin 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: mx-convert: error: cannot write '{{.*}}missing/out.bin': cannot create a temporary next to it: No such file or directory

// FIFOs, devices, a full device, a file-size limit and signals.
// RUN: bash %S/mx-convert-output.sh %t/shell 2>&1 | FileCheck %s
// CHECK: fifo: written in place
// CHECK: null: written in place
// CHECK: mx-convert: error: cannot write 'FULL': No space left on device
// CHECK-NOT: LLVM ERROR
// CHECK: full: exit 1, left: {{$}}
// CHECK: mx-convert: error: cannot write 'limited.bin': File too large
// CHECK: ulimit: exit 1, left: {{$}}
// CHECK: SIGTERM: temporary seen: yes, exit 143, left: {{$}}
// CHECK: SIGINT: temporary seen: yes, exit 130, left: {{$}}
// CHECK: SIGTERM twice: left: {{$}}
