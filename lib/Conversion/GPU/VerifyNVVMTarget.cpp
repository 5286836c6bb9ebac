//===- VerifyNVVMTarget.cpp - Catch PTX versions a chip cannot use --------===//
#include "microscale/Conversion/GPU/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALEVERIFYNVVMTARGET
#include "microscale/Conversion/GPU/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;

int mlir::microscale::minimumPTXVersion(StringRef chip) {
  unsigned sm = 0;
  StringRef digits = chip;
  if (!digits.consume_front("sm_"))
    return 0;
  digits = digits.take_while([](char c) { return llvm::isDigit(c); });
  if (digits.getAsInteger(10, sm))
    return 0;
  // From the PTX ISA release notes: the version that introduced each target.
  if (sm >= 120)
    return 87;
  if (sm >= 100)
    return 86;
  if (sm >= 90)
    return 78;
  if (sm >= 80)
    return 70;
  return 60;
}

namespace {
struct VerifyNVVMTargetPass
    : public mlir::microscale::impl::MicroscaleVerifyNVVMTargetBase<
          VerifyNVVMTargetPass> {
  void runOnOperation() override {
    getOperation()->walk([&](gpu::GPUModuleOp module) {
      for (Attribute attr : module.getTargetsAttr()
                                ? module.getTargetsAttr().getValue()
                                : ArrayRef<Attribute>()) {
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
        if (!target)
          continue;
        int needed = mlir::microscale::minimumPTXVersion(target.getChip());
        int given = 0;
        StringRef features = target.getFeatures();
        size_t at = features.find("+ptx");
        if (at != StringRef::npos)
          features.drop_front(at + 4)
              .take_while([](char c) { return llvm::isDigit(c); })
              .getAsInteger(10, given);
        if (given && needed && given < needed) {
          module.emitError() << "chip " << target.getChip() << " needs PTX "
                             << needed / 10 << "." << needed % 10
                             << " or newer, but the target's features give "
                             << given / 10 << "." << given % 10 << " ('"
                             << target.getFeatures() << "')";
          signalPassFailure();
        }
      }
    });
  }
};
} // namespace
