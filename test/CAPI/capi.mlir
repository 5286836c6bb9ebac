// The C API test program: every check is in microscale-capi-test.c.
// RUN: microscale-capi-test 2>&1 | FileCheck %S/microscale-capi-test.c
