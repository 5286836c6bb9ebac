//===- ConvertStorageToGPU.cpp - One GPU kernel per convert_storage -------===//
#include "microscale/Conversion/GPU/Passes.h"

#include "microscale/Conversion/KernelModule.h"
#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/Transforms/StorageConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::microscale {
#define GEN_PASS_DEF_MICROSCALECONVERTSTORAGETOGPU
#include "microscale/Conversion/GPU/Passes.h.inc"
} // namespace mlir::microscale

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;

static constexpr StringLiteral kKernelModule = "microscale_kernels";


/// A 1-D i8 memref of `bytes` bytes. The kernels take static shapes, so that
/// they lower with the bare-pointer convention: a kernel's parameters are two
/// pointers and the unit range.
static MemRefType bytesType(MLIRContext *context, int64_t bytes) {
  return MemRefType::get({bytes}, IntegerType::get(context, 8));
}

/// The destination's storage as rows of units: [outer, rows, columns].
struct UnitGrid {
  int64_t outer = 1, rows = 1, columns = 1;
};

static UnitGrid unitGrid(ConvertStorageOp op, const StorageConversion &c) {
  QTensorType to = op.getToType();
  SmallVector<int64_t> storage = op.getPart() == StoragePart::values
                                     ? to.getValueStorageShape()
                                     : to.getScaleStorageShape();
  UnitGrid grid;
  grid.columns = storage.back() / c.unitBytes;
  if (storage.size() >= 2)
    grid.rows = storage[storage.size() - 2];
  for (size_t d = 0; d + 2 < storage.size(); ++d)
    grid.outer *= storage[d];
  return grid;
}

static LogicalResult outline(ConvertStorageOp op, gpu::GPUModuleOp kernels,
                             int64_t blockSize, int64_t perThread,
                             bool columnMajor, unsigned index) {
  StorageConversion conversion(op);
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  QTensorType fromType = op.getFromType();
  const bool values = op.getPart() == StoragePart::values;
  Type sourceBytes = bytesType(
      context, ShapedType::getNumElements(values
                                              ? fromType.getValueStorageShape()
                                              : fromType.getScaleStorageShape()));
  Type destBytes = bytesType(context, conversion.destBytes);
  Type indexType = IndexType::get(context);

  // The kernel: unit = begin + block * blockDim + thread; if unit < end.
  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name = ("convert_storage_" + Twine(index)).str();
  auto function = gpu::GPUFuncOp::create(
      builder, loc, name,
      builder.getFunctionType({sourceBytes, destBytes, indexType, indexType},
                              {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  // The buffers never alias, and device allocations are 256-byte aligned:
  // this lets the backend load shared source bytes once and merge stores.
  for (unsigned arg = 0; arg < 2; ++arg) {
    function.setArgAttr(arg, "llvm.noalias", builder.getUnitAttr());
    function.setArgAttr(arg, "llvm.align", builder.getI64IntegerAttr(16));
  }
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Emitter e(builder, loc);
  Value blockId = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
  Value blockDim = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x);
  Value threadId = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
  Value source = entry.getArgument(0), dest = entry.getArgument(1);
  Value kernelEnd = entry.getArgument(3);
  // Each thread computes perThread consecutive units of one row of the
  // destination. Row-major: consecutive threads take consecutive groups of a
  // row. Column-major (whole conversions only): consecutive threads take the
  // same group of consecutive rows, so that a warp's loads hit neighbouring
  // source bytes when the two layouts' fast axes differ.
  Value thread = e.add(e.mul(blockId, blockDim), threadId);
  UnitGrid grid = unitGrid(op, conversion);
  const int64_t groups = (grid.columns + perThread - 1) / perThread;
  Value first, rowEnd;
  if (columnMajor) {
    Value row = e.rem(thread, grid.rows);
    Value rest = e.div(thread, grid.rows);
    Value group = e.rem(rest, groups);
    Value outer = e.div(rest, groups);
    Value rowStart = e.mul(e.add(e.mul(outer, grid.rows), row), grid.columns);
    first = e.add(rowStart, e.mul(group, perThread));
    rowEnd = e.add(rowStart, e.index(grid.columns));
  } else {
    first = e.add(entry.getArgument(2), e.mul(thread, perThread));
    rowEnd = kernelEnd;
  }
  // Units past the row's end or the range's: the tail, done one by one.
  Value limit = arith::MinUIOp::create(builder, loc, rowEnd, kernelEnd);
  // All units in range: compute them all, then store them all. At the end of
  // the range: each unit on its own, behind its bounds check.
  Value lastInRange = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::ule, e.add(first, perThread), limit);
  auto whole = scf::IfOp::create(builder, loc, lastInRange, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&whole.getThenRegion().front());
    SmallVector<Value> units, unitBits;
    for (int64_t k = 0; k < perThread; ++k) {
      units.push_back(e.add(first, k));
      unitBits.push_back(
          conversion.emitUnitBits(builder, loc, source, units.back()));
    }
    for (int64_t k = 0; k < perThread; ++k)
      conversion.emitUnitStore(builder, loc, dest, units[k], unitBits[k]);
    builder.setInsertionPointToStart(&whole.getElseRegion().front());
    for (int64_t k = 0; k < perThread; ++k) {
      Value unit = e.add(first, k);
      Value inRange = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::ult, unit, limit);
      auto one = scf::IfOp::create(builder, loc, inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard inner(builder);
      builder.setInsertionPointToStart(&one.getThenRegion().front());
      conversion.emitUnit(builder, loc, source, dest, unit);
    }
  }
  gpu::ReturnOp::create(builder, loc);

  // The launch, in place of the op.
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  auto asBytes = [&](Value buffer, Type type) -> Value {
    if (buffer.getType() == type)
      return buffer;
    return memref::CastOp::create(builder, loc, type, buffer);
  };
  Value begin = op.getUnitRange().empty() ? host.index(0)
                                          : op.getUnitRange()[0];
  Value end = op.getUnitRange().empty()
                  ? host.index(conversion.getNumUnits())
                  : op.getUnitRange()[1];
  Value blocks;
  if (columnMajor) {
    int64_t threads = grid.outer * grid.rows * groups;
    blocks = host.index((threads + blockSize - 1) / blockSize);
  } else {
    Value count = arith::SubIOp::create(builder, loc, end, begin);
    blocks = arith::CeilDivUIOp::create(builder, loc, count,
                                        host.index(blockSize * perThread));
  }
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function, gpu::KernelDim3{blocks, one, one},
      gpu::KernelDim3{host.index(blockSize), one, one},
      /*dynamicSharedMemorySize=*/Value(),
      ValueRange{asBytes(op.getSource(), sourceBytes),
                 asBytes(op.getDest(), destBytes), begin, end});
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// dequantize_storage from the Hopper layouts: seed 000's PTX sequence
//===----------------------------------------------------------------------===//

// The decode of one Hopper value word ($4) into four bf16x2 registers
// ($0-$3; slot s: low half the even MX element, high half the odd one):
// slots 0 and 2 hold non-MX index m, slots 1 and 3 m + 8. Slots 0-2 need one
// mask after a shift (the layout aligns their sign and exponent-mantissa bits
// with bf16's); slot 3 is gathered from three places. The masked lanes are
// the FP4 value times 2^-126. Both kernels below share these bit operations
// (string literals, so that each kernel stays one constant).
#define MICROSCALE_HOPPER_DECODE_BITS                                          \
  "and.b32 $0, $4, 0x81C081C0;\n"                                              \
  "shl.b32 t0, $4, 3;\n"                                                       \
  "and.b32 $1, t0, 0x81C081C0;\n"                                              \
  "shl.b32 t0, $4, 6;\n"                                                       \
  "and.b32 $2, t0, 0x81C081C0;\n"                                              \
  "shl.b32 t0, $4, 1;\n"                                                       \
  "and.b32 t0, t0, 0x80008000;\n"                                              \
  "shr.b32 t1, $4, 3;\n"                                                       \
  "and.b32 t1, t1, 0x01800180;\n"                                              \
  "or.b32 t0, t0, t1;\n"                                                       \
  "shr.b32 t1, $4, 7;\n"                                                       \
  "and.b32 t1, t1, 0x00400040;\n"                                              \
  "or.b32 $3, t0, t1;\n"
// Each slot times its pair of scales ($5 for the even slots, $6 the odd).
#define MICROSCALE_HOPPER_SCALE_SLOTS                                          \
  "mul.rn.bf16x2 $0, $0, $5;\n"                                                \
  "mul.rn.bf16x2 $1, $1, $6;\n"                                                \
  "mul.rn.bf16x2 $2, $2, $5;\n"                                                \
  "mul.rn.bf16x2 $3, $3, $6;\n"

/// The exact decode: one mul.rn.bf16x2 by 0x7E807E80 (2^126 in both lanes)
/// restores the FP4 values exactly, then the scales multiply.
static constexpr const char *kHopperDecodePTX =
    "{\n"
    ".reg .b32 t0, t1, bias;\n"
    "mov.b32 bias, 0x7E807E80;\n"
    MICROSCALE_HOPPER_DECODE_BITS
    "mul.rn.bf16x2 $0, $0, bias;\n"
    "mul.rn.bf16x2 $1, $1, bias;\n"
    "mul.rn.bf16x2 $2, $2, bias;\n"
    "mul.rn.bf16x2 $3, $3, bias;\n"
    MICROSCALE_HOPPER_SCALE_SLOTS
    "}";

/// The same decode with the 2^126 bias folded into the scale: one
/// mul.rn.bf16x2 per pair by 2^(s-1) = 2^126 * 2^(s-127). Exact only when
/// 2^(s-1) is a bf16, i.e. for scale codes s <= 128; the kernel takes this
/// path when both of a word's scale codes are, and the unfolded one
/// otherwise.
static constexpr const char *kHopperDecodeFoldedPTX =
    "{\n"
    ".reg .b32 t0, t1;\n"
    MICROSCALE_HOPPER_DECODE_BITS
    MICROSCALE_HOPPER_SCALE_SLOTS
    "}";

#undef MICROSCALE_HOPPER_DECODE_BITS
#undef MICROSCALE_HOPPER_SCALE_SLOTS

/// Whether `op` has the operands the Hopper kernel handles.
static LogicalResult checkHopperDequantize(DequantizeStorageOp op) {
  QTensorType type = op.getQTensorType();
  auto values = dyn_cast<HopperValueAttr>(type.getValueLayout());
  auto scales = dyn_cast<HopperScaleAttr>(type.getScaleLayout());
  auto outType = cast<MemRefType>(op.getOut().getType()).getElementType();
  if (!values || values.getMmaVersion() != 3 || !scales ||
      scales.getMxAxis() != values.getMxAxis() ||
      type.getFormat().getShortName() != "mxfp4" || !outType.isBF16() ||
      op.getE8m0Edges() != E8M0Edges::ocp)
    return op.emitOpError()
           << "on the GPU, dequantize_storage is lowered for mxfp4 in "
              "#microscale.hopper_value<mma_version = 3> with "
              "#microscale.hopper_scale of the same mx_axis, bf16 results "
              "and OCP E8M0 edges; got "
           << Type(type) << " to " << outType;
  return success();
}

static LogicalResult outlineHopperDequantize(DequantizeStorageOp op,
                                             gpu::GPUModuleOp kernels,
                                             int64_t blockSize,
                                             bool columnMajor, bool fold,
                                             unsigned index) {
  if (failed(checkHopperDequantize(op)))
    return failure();
  QTensorType type = op.getQTensorType();
  auto values = cast<HopperValueAttr>(type.getValueLayout());
  auto scales = cast<HopperScaleAttr>(type.getScaleLayout());
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<int64_t> scaleShape = type.getScaleShape();
  SmallVector<int64_t> storage = type.getValueStorageShape();
  const int64_t rank = shape.size();
  const int64_t mxAxis = values.getMxAxis();
  const int64_t paddedM = 4 * storage[rank - 2], paddedKB = storage.back() / 4;
  const int64_t extentM = mxAxis == -2 ? shape[rank - 1] : shape[rank - 2];
  const int64_t extentKB = (mxAxis == -2 ? shape[rank - 2] : shape[rank - 1]) / 2;
  const int64_t words = ShapedType::getNumElements(storage) / 4;
  const int64_t scaleBytes =
      ShapedType::getNumElements(type.getScaleStorageShape());
  Type i32 = IntegerType::get(context, 32);
  auto wordsType = MemRefType::get({words}, i32);
  auto scalesType = MemRefType::get({scaleBytes}, IntegerType::get(context, 8));
  auto outType = MemRefType::get({type.getNumElements()},
                                 BFloat16Type::get(context));

  OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name = ("dequantize_hopper_" + Twine(index)).str();
  auto function = gpu::GPUFuncOp::create(
      builder, loc, name,
      builder.getFunctionType({wordsType, scalesType, outType}, {}));
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
  for (unsigned arg = 0; arg < 3; ++arg) {
    function.setArgAttr(arg, "llvm.noalias", builder.getUnitAttr());
    function.setArgAttr(arg, "llvm.align", builder.getI64IntegerAttr(16));
  }
  Block &entry = function.getBody().front();
  builder.setInsertionPointToStart(&entry);
  Emitter e(builder, loc);
  Value thread = e.add(
      e.mul(gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x),
            gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x)),
      gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x));
  auto inRange = scf::IfOp::create(builder, loc, e.lt(thread, words),
                                   /*withElse=*/false);
  builder.setInsertionPointToStart(&inRange.getThenRegion().front());
  // Consecutive threads take the same word of consecutive image rows
  // (column-major): their non-MX indices m are neighbours, so a warp's
  // bf16 stores land next to each other in the output rows.
  Value unit = thread;
  if (columnMajor) {
    const int64_t rows = paddedM / 4, columns = paddedKB;
    Value row = e.rem(thread, rows);
    Value rest = e.div(thread, rows);
    unit = e.add(e.mul(e.add(e.mul(e.div(rest, columns), rows), row), columns),
                 e.rem(rest, columns));
  }
  HopperWordElements word = emitHopperWordElements(
      e, 3, paddedM, paddedKB, extentM, extentKB, unit);
  Value bits = memref::LoadOp::create(builder, loc, entry.getArgument(0),
                                      ValueRange{unit});
  // The two scales of the word (m and m + 8; one K block), as bf16x2 with
  // the code in both exponent fields. OCP edges: code 0 is 2^-127, the bf16
  // subnormal 0x0040; code 255 makes the whole pair NaN (below).
  Value scaleIndexK = e.div(word.kb[0], 16);
  auto scaleCode = [&](Value m) {
    SmallVector<Value> index = makeIndex(
        e, scaleShape, word.batch, mxAxis == -2 ? scaleIndexK : m,
        mxAxis == -2 ? m : scaleIndexK);
    Value valid = word.valid[0];
    for (Value &v : index)
      v = e.select(valid, v, e.index(0));
    return scales.emitLoadElement(builder, loc, entry.getArgument(1),
                                  scaleShape, 8, index);
  };
  auto scalePair = [&](Value code) {
    Value lane = e.select(
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, code,
                              e.i32(0)),
        e.i32(0x0040), e.shl(code, 7));
    return e.bor(lane, e.shl(lane, 16));
  };
  Value evenCode = scaleCode(word.m[0]), oddCode = scaleCode(word.m[1]);
  auto structType = LLVM::LLVMStructType::getLiteral(context, {i32, i32, i32, i32});
  auto decode = [&](const char *ptx, Value evenScale, Value oddScale) {
    auto asmOp = LLVM::InlineAsmOp::create(
        builder, loc, structType, ValueRange{bits, evenScale, oddScale}, ptx,
        "=r,=r,=r,=r,r,r,r", /*has_side_effects=*/false,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(context, LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    SmallVector<Value> pairs;
    for (int64_t slot = 0; slot < 4; ++slot)
      pairs.push_back(LLVM::ExtractValueOp::create(
          builder, loc, asmOp.getResult(0), ArrayRef<int64_t>{slot}));
    return pairs;
  };
  // The exact path for every code: bias, then scale, then OCP's NaN.
  auto unfolded = [&]() {
    SmallVector<Value> pairs =
        decode(kHopperDecodePTX, scalePair(evenCode), scalePair(oddCode));
    for (int64_t slot = 0; slot < 4; ++slot) {
      Value code = slot % 2 == 0 ? evenCode : oddCode;
      Value isNaN = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::eq, code, e.i32(0xFF));
      pairs[slot] = e.select(isNaN, e.i32(0x7FC07FC0), pairs[slot]);
    }
    return pairs;
  };
  SmallVector<Value> results;
  if (!fold) {
    results = unfolded();
  } else {
    // 2^(s-1) as bf16 in both lanes: exponent field s + 126 (code 0, OCP's
    // 2^-127, gives 2^-1 with no special case).
    auto foldedPair = [&](Value code) {
      Value lane = e.shl(arith::AddIOp::create(builder, loc, code, e.i32(126)), 7);
      return e.bor(lane, e.shl(lane, 16));
    };
    Value small = e.andI1(
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule,
                              evenCode, e.i32(128)),
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule,
                              oddCode, e.i32(128)));
    auto branch = scf::IfOp::create(builder, loc, TypeRange{i32, i32, i32, i32},
                                    small, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&branch.getThenRegion().front());
      scf::YieldOp::create(builder, loc,
                           decode(kHopperDecodeFoldedPTX, foldedPair(evenCode),
                                  foldedPair(oddCode)));
      builder.setInsertionPointToStart(&branch.getElseRegion().front());
      scf::YieldOp::create(builder, loc, unfolded());
    }
    results.assign(branch.getResults().begin(), branch.getResults().end());
  }
  Value out = entry.getArgument(2);
  for (int64_t slot = 0; slot < 4; ++slot) {
    Value pair = results[slot];
    auto store = scf::IfOp::create(builder, loc, word.valid[slot],
                                   /*withElse=*/false);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&store.getThenRegion().front());
    for (int64_t h = 0; h < 2; ++h) {
      Value mx = e.add(e.mul(word.kb[slot], 2), h);
      Value r = mxAxis == -2 ? mx : word.m[slot];
      Value c = mxAxis == -2 ? word.m[slot] : mx;
      Value linear = e.add(
          e.mul(e.add(e.mul(word.batch, shape[rank - 2]), r), shape[rank - 1]),
          c);
      Value lane = arith::TruncIOp::create(builder, loc, builder.getI16Type(),
                                           e.shr(pair, 16 * h));
      Value value = arith::BitcastOp::create(
          builder, loc, BFloat16Type::get(context), lane);
      memref::StoreOp::create(builder, loc, value, out, ValueRange{linear});
    }
  }
  builder.setInsertionPointAfter(inRange);
  gpu::ReturnOp::create(builder, loc);

  // The launch: one thread per Hopper word.
  builder.setInsertionPoint(op);
  Emitter host(builder, loc);
  auto viewAs = [&](Value buffer, MemRefType asType) -> Value {
    auto from = cast<MemRefType>(buffer.getType());
    if (from.getElementType() == asType.getElementType())
      return buffer.getType() == asType
                 ? buffer
                 : memref::CastOp::create(builder, loc, asType, buffer)
                       .getResult();
    // The value bytes as 32-bit words: same memory, 4-byte aligned.
    Value flat = from.hasStaticShape()
                     ? buffer
                     : memref::CastOp::create(
                           builder, loc,
                           MemRefType::get({words * 4}, from.getElementType()),
                           buffer)
                           .getResult();
    return memref::ViewOp::create(builder, loc, asType, flat, host.index(0),
                                  ValueRange());
  };
  Value one = host.index(1);
  gpu::LaunchFuncOp::create(
      builder, loc, function,
      gpu::KernelDim3{host.index((words + blockSize - 1) / blockSize), one, one},
      gpu::KernelDim3{host.index(blockSize), one, one}, Value(),
      ValueRange{viewAs(op.getValues(), wordsType),
                 viewAs(op.getScales(), scalesType),
                 viewAs(op.getOut(), outType)});
  op.erase();
  return success();
}

namespace {
struct ConvertStorageToGPUPass
    : public mlir::microscale::impl::MicroscaleConvertStorageToGPUBase<
          ConvertStorageToGPUPass> {
  using MicroscaleConvertStorageToGPUBase::MicroscaleConvertStorageToGPUBase;
  void runOnOperation() override {
    if (traversal != "row-major" && traversal != "column-major") {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: traversal must be row-major "
             "or column-major, got '"
          << traversal.getValue() << "'";
      return signalPassFailure();
    }
    if (unitsPerThread <= 0 || unitsPerThread > 64) {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: units-per-thread must be in "
             "[1, 64], got "
          << unitsPerThread.getValue();
      return signalPassFailure();
    }
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation()->emitError()
          << "microscale-convert-storage-to-gpu: block-size must be in "
             "[1, 1024], got "
          << blockSize.getValue();
      return signalPassFailure();
    }
    SmallVector<ConvertStorageOp> ops;
    SmallVector<DequantizeStorageOp> dequantizes;
    SmallVector<MixedMatmulStorageOp> products;
    bool unsupported = false;
    getOperation()->walk([&](Operation *op) {
      if (op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (auto convert = dyn_cast<ConvertStorageOp>(op))
        ops.push_back(convert);
      else if (auto dequantize = dyn_cast<DequantizeStorageOp>(op))
        dequantizes.push_back(dequantize);
      else if (auto product = dyn_cast<MixedMatmulStorageOp>(op))
        products.push_back(product);
      else if (isa<TranscodeStorageOp, ScaledMatmulStorageOp>(op)) {
        // Not silently left on the host: the NVIDIA path has no transcode.
        op->emitOpError() << "has no NVIDIA lowering (the CPU one is "
                             "microscale-lower-storage-conversions)";
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();
    if (ops.empty() && dequantizes.empty() && products.empty())
      return;
    gpu::GPUModuleOp kernels =
        getOrCreateKernelModule(getOperation(), kKernelModule);
    unsigned index = 0;
    for (ConvertStorageOp op : ops)
      if (failed(outline(op, kernels, blockSize, unitsPerThread,
                         traversal == "column-major" &&
                             op.getUnitRange().empty(),
                         index++)))
        return signalPassFailure();
    for (DequantizeStorageOp op : dequantizes)
      if (failed(outlineHopperDequantize(op, kernels, blockSize,
                                         traversal == "column-major",
                                         foldScaleBias, index++)))
        return signalPassFailure();
    for (MixedMatmulStorageOp op : products)
      if (failed(outlineMixedMatmul(op, kernels, index++, matmulSplitK,
                                    matmulUnroll, matmulMaxRegisters)))
        return signalPassFailure();
  }
};
} // namespace
