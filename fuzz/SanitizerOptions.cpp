//===- SanitizerOptions.cpp - ASan defaults for the fuzzers ---------------===//
//
// Linked into every fuzzer, so that a reproducer runs the same by hand.
//
// allow_user_poisoning=0: our instrumented code and the uninstrumented
// LLVM/MLIR libraries (Debian's) share llvm::BumpPtrAllocator's inline
// functions. The linker keeps one copy of each: an instrumented
// AllocateSlow poisons a new slab, which the uninstrumented fast path
// inlined in libMLIRIR then never unpoisons, and the next instrumented read
// reports a use-after-poison that is none. Real heap errors are still found:
// only the manual poisoning is off.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
