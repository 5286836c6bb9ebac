// A target-neutral file that reaches into a target: every line below is a
// violation that check-layering.py must report.
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "microscale/Conversion/CPU/HostBlockConversion.h"
static void fence(OpBuilder &b, Location loc) { LLVM::FenceOp::create(b, loc); }
static const char *kIntrinsic = "llvm.x86.vgf2p8affineqb.512";
