//===- Request.h - What mx-convert is asked to do ---------------*- C++ -*-===//
//
// The parsing and checking of a conversion request (--type, --from, --to,
// the input's size, the MXFP4 checkpoint convention), apart from compiling
// and running it, so that the fuzzer (fuzz/) drives the same code as the
// tool. Everything is checked before anything proportional to the tensor is
// allocated: sizes with overflow checks, the input's size against the
// source layout, and the output's size against a bound.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_TOOLS_MXCONVERT_REQUEST_H
#define MICROSCALE_TOOLS_MXCONVERT_REQUEST_H

#include "microscale/Dialect/Microscale/IR/Microscale.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace microscale::convert {

/// The output may be at most this many times the input, plus
/// kOutputSlackBytes: padding to a layout's tiles grows a small tensor
/// (scales most) but not a large one, so a larger output means a layout
/// whose tiles dwarf the tensor (blackwell_shuffled_value<block_k = 65536,
/// block_n = 65536> around 2 bytes), not a conversion anyone wants.
inline constexpr uint64_t kMaxOutputGrowth = 8;
inline constexpr uint64_t kOutputSlackBytes = uint64_t(64) << 20;

/// The deepest nesting of brackets in a spelling handed to MLIR's parser:
/// its recursive descent overflows the stack on a few thousand "[" (an
/// upstream limit), and no layout or type spelling nests more than 3 deep.
inline constexpr int kMaxSpellingDepth = 32;

/// Whether `text` nests (), [], {} and <> at most `limit` deep (brackets in
/// strings do not count).
bool nestsAtMost(llvm::StringRef text, int limit);

/// One conversion, checked: its two qtensor types and byte counts.
struct Conversion {
  mlir::microscale::QTensorType fromType, toType;
  mlir::microscale::StoragePart part;
  uint64_t sourceBytes = 0, destBytes = 0;
  llvm::SmallVector<int64_t> destStorageShape;
};

/// The normal form of a layout or logical type in messages and metadata:
/// the attribute as MLIR prints it (default parameters left out, spacing
/// fixed), the type as 2x64x128xf4E2M1FN.
std::string spell(mlir::Attribute attr);
std::string spell(mlir::RankedTensorType type);

/// The layout attribute spelled `text` (for the flag `--flag`), or null
/// with `error` set.
mlir::microscale::LayoutAttrInterface parseLayout(mlir::MLIRContext &context,
                                                  llvm::StringRef flag,
                                                  llvm::StringRef text,
                                                  std::string &error);

/// The logical tensor spelled `text` (2x64x128xf4E2M1FN, f4E2M1FN values or
/// f8E8M0FNU scales, static, rank >= 1, at most 2^48 elements), or null
/// with `error` set.
mlir::RankedTensorType parseLogicalType(mlir::MLIRContext &context,
                                        llvm::StringRef text,
                                        std::string &error);

/// Checks the request `typeText` from `fromText` to `toText` on an input of
/// `inputBytes` bytes (`inputName` for messages), and the output's size
/// against kMaxOutputGrowth and `availableBytes` (no limit when nullopt).
/// On failure `error` says why, or is empty when a diagnostic on `context`
/// did (the verifiers').
std::optional<Conversion>
checkConversion(mlir::MLIRContext &context, llvm::StringRef typeText,
                llvm::StringRef fromText, llvm::StringRef toText,
                uint64_t inputBytes, llvm::StringRef inputName,
                std::optional<uint64_t> availableBytes, std::string &error);

/// The logical type of a tensor of an MXFP4 checkpoint: `*_blocks` uint8
/// [..., N, K/32, 16] are [..., K, N] FP4 values, `*_scales` uint8
/// [..., N, K/32] are [..., K/32, N] E8M0 scales. nullopt with `error` set
/// for other names or shapes.
std::optional<std::string> inferCheckpointType(llvm::StringRef name,
                                               llvm::ArrayRef<int64_t> shape,
                                               std::string &error);

/// The memory the system can still give (Linux: MemAvailable), if known.
std::optional<uint64_t> availableMemoryBytes();

} // namespace microscale::convert

#endif
