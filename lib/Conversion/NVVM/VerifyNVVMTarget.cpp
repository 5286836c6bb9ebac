//===- VerifyNVVMTarget.cpp - Catch PTX versions a chip cannot use --------===//
#include "microscale/Conversion/NVVM/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALEVERIFYNVVMTARGET
#include "microscale/Conversion/NVVM/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;

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
        std::optional<nvvm::NVIDIAChip> chip =
            nvvm::NVIDIAChip::lookup(target.getChip());
        if (!chip) {
          mlir::emitError(module.getLoc())
              << "unknown NVIDIA chip '" << target.getChip()
              << "' (known: " << nvvm::NVIDIAChip::knownChips() << ")";
          signalPassFailure();
          continue;
        }
        int needed = chip->minimumPTXVersion;
        int given = 0;
        StringRef features = target.getFeatures();
        size_t at = features.find("+ptx");
        if (at != StringRef::npos)
          features.drop_front(at + 4)
              .take_while([](char c) { return llvm::isDigit(c); })
              .getAsInteger(10, given);
        if (given && needed && given < needed) {
          mlir::emitError(module.getLoc())
              << "chip " << target.getChip() << " needs PTX " << needed / 10
              << "." << needed % 10
              << " or newer, but the target's features give " << given / 10
              << "." << given % 10 << " ('" << target.getFeatures() << "')";
          signalPassFailure();
        }
      }
    });
  }
};
} // namespace
