/*===-- microscale-c/Microscale.h - C API for the microscale dialect -*- C -*-===*\
|*                                                                            *|
|* The microscale dialect from C, in the style of MLIR's C API: a dialect     *|
|* handle, pass registration and constructors, predicates and accessors for   *|
|* the formats, layouts and the quantized tensor type. Constructors that can  *|
|* fail take a location, report a diagnostic there and return a null          *|
|* attribute or type (check with mlirAttributeIsNull / mlirTypeIsNull).       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef MICROSCALE_C_MICROSCALE_H
#define MICROSCALE_C_MICROSCALE_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Microscale, microscale);

/// Registers every microscale pass with the global pass registry (so that
/// pipelines given as text can name them).
MLIR_CAPI_EXPORTED void mlirMicroscaleRegisterPasses(void);

/// Creates the microscale-fold-constants pass (0: no size limit).
MLIR_CAPI_EXPORTED MlirPass mlirMicroscaleCreateFoldConstantsPass(int64_t maxElements);

//===----------------------------------------------------------------------===//
// #microscale.format
//===----------------------------------------------------------------------===//

MLIR_CAPI_EXPORTED bool mlirAttributeIsAMicroscaleFormat(MlirAttribute attr);
/// A named format (mxfp4, mxfp6_e2m3, mxfp6_e3m2, mxfp8_e4m3, mxfp8_e5m2,
/// nvfp4, nvfp4_b32); a null attribute when the name is unknown.
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleFormatAttrGetNamed(MlirContext ctx,
                                                                  MlirStringRef name);
/// Any valid format; null (with a diagnostic at `loc`) when invalid.
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleFormatAttrGetChecked(
    MlirLocation loc, MlirType elementType, MlirType scaleType, unsigned blockSize,
    bool globalScale);
MLIR_CAPI_EXPORTED MlirType mlirMicroscaleFormatAttrGetElementType(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirType mlirMicroscaleFormatAttrGetScaleType(MlirAttribute attr);
MLIR_CAPI_EXPORTED unsigned mlirMicroscaleFormatAttrGetBlockSize(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool mlirMicroscaleFormatAttrHasGlobalScale(MlirAttribute attr);
/// The short name, or an empty string for formats without one.
MLIR_CAPI_EXPORTED MlirStringRef mlirMicroscaleFormatAttrGetName(MlirAttribute attr);

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// True for every attribute implementing the microscale layout interface.
MLIR_CAPI_EXPORTED bool mlirAttributeIsAMicroscaleLayout(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleStridedAttrGet(MlirContext ctx,
                                                              int64_t majorDim);
MLIR_CAPI_EXPORTED int64_t mlirMicroscaleStridedAttrGetMajorDim(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleHopperValueAttrGetChecked(
    MlirLocation loc, int64_t mxAxis, int64_t mmaVersion);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleHopperScaleAttrGetChecked(
    MlirLocation loc, int64_t mxAxis, int64_t numWarps);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleBlackwellValueAttrGet(MlirContext ctx);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleBlackwellShuffledValueAttrGetChecked(
    MlirLocation loc, int64_t blockK, int64_t blockN);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleBlackwellScaleAttrGet(MlirContext ctx);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleCDNA4ScaleAttrGet(MlirContext ctx);

//===----------------------------------------------------------------------===//
// !microscale.qtensor
//===----------------------------------------------------------------------===//

MLIR_CAPI_EXPORTED bool mlirTypeIsAMicroscaleQTensor(MlirType type);
/// A quantized tensor type; null layouts mean the canonical #microscale.strided.
/// Returns a null type (with a diagnostic at `loc`) when the combination is
/// invalid (block size not dividing the axis, odd packing extent, ...).
MLIR_CAPI_EXPORTED MlirType mlirMicroscaleQTensorTypeGetChecked(
    MlirLocation loc, intptr_t rank, const int64_t *shape, MlirAttribute format,
    int64_t axis, MlirAttribute valueLayout, MlirAttribute scaleLayout);
MLIR_CAPI_EXPORTED intptr_t mlirMicroscaleQTensorTypeGetRank(MlirType type);
MLIR_CAPI_EXPORTED int64_t mlirMicroscaleQTensorTypeGetDimSize(MlirType type, intptr_t dim);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleQTensorTypeGetFormat(MlirType type);
MLIR_CAPI_EXPORTED int64_t mlirMicroscaleQTensorTypeGetAxis(MlirType type);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleQTensorTypeGetValueLayout(MlirType type);
MLIR_CAPI_EXPORTED MlirAttribute mlirMicroscaleQTensorTypeGetScaleLayout(MlirType type);
/// The raw byte tensors (tensor<...xi8> with the layouts' storage shapes)
/// that from_bytes takes and to_bytes returns.
MLIR_CAPI_EXPORTED MlirType mlirMicroscaleQTensorTypeGetValueStorageType(MlirType type);
MLIR_CAPI_EXPORTED MlirType mlirMicroscaleQTensorTypeGetScaleStorageType(MlirType type);

#ifdef __cplusplus
}
#endif

#endif // MICROSCALE_C_MICROSCALE_H
