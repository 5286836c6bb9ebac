//===- Microscale.cpp - C API for the microscale dialect ------------------===//
#include "microscale-c/Microscale.h"

#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "microscale/Dialect/Microscale/Transforms/Passes.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

using namespace mlir;
using namespace mlir::microscale;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Microscale, microscale,
                                      mlir::microscale::MicroscaleDialect)

void mlirMicroscaleRegisterPasses(void) { registerMicroscalePasses(); }

MlirPass mlirMicroscaleCreateFoldConstantsPass(int64_t maxElements) {
  MicroscaleFoldConstantsOptions options;
  options.maxElements = maxElements;
  return wrap(createMicroscaleFoldConstants(options).release());
}

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

bool mlirAttributeIsAMicroscaleFormat(MlirAttribute attr) {
  return isa<FormatAttr>(unwrap(attr));
}

MlirAttribute mlirMicroscaleFormatAttrGetNamed(MlirContext ctx,
                                               MlirStringRef name) {
  return wrap(FormatAttr::getNamed(unwrap(ctx), unwrap(name)));
}

MlirAttribute mlirMicroscaleFormatAttrGetChecked(MlirLocation loc,
                                                 MlirType elementType,
                                                 MlirType scaleType,
                                                 unsigned blockSize,
                                                 bool globalScale) {
  Location location = unwrap(loc);
  return wrap(FormatAttr::getChecked(
      [&] { return emitError(location); }, location.getContext(),
      unwrap(elementType), unwrap(scaleType), blockSize, globalScale));
}

MlirType mlirMicroscaleFormatAttrGetElementType(MlirAttribute attr) {
  return wrap(cast<FormatAttr>(unwrap(attr)).getElementType());
}

MlirType mlirMicroscaleFormatAttrGetScaleType(MlirAttribute attr) {
  return wrap(cast<FormatAttr>(unwrap(attr)).getScaleType());
}

unsigned mlirMicroscaleFormatAttrGetBlockSize(MlirAttribute attr) {
  return cast<FormatAttr>(unwrap(attr)).getBlockSize();
}

bool mlirMicroscaleFormatAttrHasGlobalScale(MlirAttribute attr) {
  return cast<FormatAttr>(unwrap(attr)).getGlobalScale();
}

MlirStringRef mlirMicroscaleFormatAttrGetName(MlirAttribute attr) {
  return wrap(cast<FormatAttr>(unwrap(attr)).getShortName());
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// Runs an attribute's getChecked with diagnostics at `loc`.
template <typename AttrT, typename... Args>
static MlirAttribute getCheckedAt(MlirLocation loc, Args... args) {
  Location location = unwrap(loc);
  return wrap(AttrT::getChecked([&] { return emitError(location); },
                                location.getContext(), args...));
}

bool mlirAttributeIsAMicroscaleLayout(MlirAttribute attr) {
  return isa<LayoutAttrInterface>(unwrap(attr));
}

MlirAttribute mlirMicroscaleStridedAttrGet(MlirContext ctx, int64_t majorDim) {
  return wrap(StridedAttr::get(unwrap(ctx), majorDim));
}

int64_t mlirMicroscaleStridedAttrGetMajorDim(MlirAttribute attr) {
  return cast<StridedAttr>(unwrap(attr)).getMajorDim();
}

MlirAttribute mlirMicroscaleHopperValueAttrGetChecked(MlirLocation loc,
                                                      int64_t mxAxis,
                                                      int64_t mmaVersion) {
  return getCheckedAt<HopperValueAttr>(loc, mxAxis, mmaVersion);
}

MlirAttribute mlirMicroscaleHopperScaleAttrGetChecked(MlirLocation loc,
                                                      int64_t mxAxis,
                                                      int64_t numWarps) {
  return getCheckedAt<HopperScaleAttr>(loc, mxAxis, numWarps);
}

MlirAttribute mlirMicroscaleBlackwellValueAttrGet(MlirContext ctx) {
  return wrap(BlackwellValueAttr::get(unwrap(ctx)));
}

MlirAttribute mlirMicroscaleBlackwellShuffledValueAttrGetChecked(
    MlirLocation loc, int64_t blockK, int64_t blockN) {
  return getCheckedAt<BlackwellShuffledValueAttr>(loc, blockK, blockN);
}

MlirAttribute mlirMicroscaleBlackwellScaleAttrGet(MlirContext ctx) {
  return wrap(BlackwellScaleAttr::get(unwrap(ctx)));
}

MlirAttribute mlirMicroscaleCDNA4ScaleAttrGet(MlirContext ctx) {
  return wrap(CDNA4ScaleAttr::get(unwrap(ctx)));
}

//===----------------------------------------------------------------------===//
// QTensorType
//===----------------------------------------------------------------------===//

bool mlirTypeIsAMicroscaleQTensor(MlirType type) {
  return isa<QTensorType>(unwrap(type));
}

MlirType mlirMicroscaleQTensorTypeGetChecked(MlirLocation loc, intptr_t rank,
                                             const int64_t *shape,
                                             MlirAttribute format, int64_t axis,
                                             MlirAttribute valueLayout,
                                             MlirAttribute scaleLayout) {
  Location location = unwrap(loc);
  MLIRContext *context = location.getContext();
  auto emit = [&] { return emitError(location); };
  auto formatAttr = dyn_cast_or_null<FormatAttr>(unwrap(format));
  if (!formatAttr) {
    emit() << "expected a #microscale.format attribute";
    return MlirType{nullptr};
  }
  auto layoutOrDefault = [&](MlirAttribute attr) -> LayoutAttrInterface {
    if (mlirAttributeIsNull(attr))
      return StridedAttr::get(context, -1);
    return dyn_cast<LayoutAttrInterface>(unwrap(attr));
  };
  LayoutAttrInterface values = layoutOrDefault(valueLayout);
  LayoutAttrInterface scales = layoutOrDefault(scaleLayout);
  if (!values || !scales) {
    emit() << "expected microscale layout attributes";
    return MlirType{nullptr};
  }
  return wrap(QTensorType::getChecked(emit, context,
                                      ArrayRef<int64_t>(shape, rank),
                                      formatAttr, axis, values, scales));
}

intptr_t mlirMicroscaleQTensorTypeGetRank(MlirType type) {
  return cast<QTensorType>(unwrap(type)).getRank();
}

int64_t mlirMicroscaleQTensorTypeGetDimSize(MlirType type, intptr_t dim) {
  return cast<QTensorType>(unwrap(type)).getShape()[dim];
}

MlirAttribute mlirMicroscaleQTensorTypeGetFormat(MlirType type) {
  return wrap(cast<QTensorType>(unwrap(type)).getFormat());
}

int64_t mlirMicroscaleQTensorTypeGetAxis(MlirType type) {
  return cast<QTensorType>(unwrap(type)).getAxis();
}

MlirAttribute mlirMicroscaleQTensorTypeGetValueLayout(MlirType type) {
  return wrap(cast<QTensorType>(unwrap(type)).getValueLayout());
}

MlirAttribute mlirMicroscaleQTensorTypeGetScaleLayout(MlirType type) {
  return wrap(cast<QTensorType>(unwrap(type)).getScaleLayout());
}

static MlirType byteTensor(MLIRContext *context, ArrayRef<int64_t> shape) {
  return wrap(RankedTensorType::get(shape, IntegerType::get(context, 8)));
}

MlirType mlirMicroscaleQTensorTypeGetValueStorageType(MlirType type) {
  auto qtensor = cast<QTensorType>(unwrap(type));
  return byteTensor(qtensor.getContext(), qtensor.getValueStorageShape());
}

MlirType mlirMicroscaleQTensorTypeGetScaleStorageType(MlirType type) {
  auto qtensor = cast<QTensorType>(unwrap(type));
  return byteTensor(qtensor.getContext(), qtensor.getScaleStorageShape());
}
