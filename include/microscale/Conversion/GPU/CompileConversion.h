//===- CompileConversion.h - A layout conversion compiled for CUDA -*- C++ -*-===//
//
// Compiles one byte-buffer conversion (values or scales of a quantized
// tensor, layout A to layout B) through `microscale-gpu-to-ptx` into the
// kernel image and launch that the MLIR-free CUDA runtime runs
// (microscale/Runtime/CUDA/ConversionKernel.h). Used by `mx-convert
// --device cuda`.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_GPU_COMPILECONVERSION_H
#define MICROSCALE_CONVERSION_GPU_COMPILECONVERSION_H

#include "microscale/Conversion/GPU/Passes.h"
#include "microscale/Runtime/CUDA/ConversionKernel.h"

#include <optional>
#include <string>

namespace mlir::microscale {

/// The kernel converting `part` of `from` into `to` (the same logical
/// tensor), for `options.chip` in `options.format`; std::nullopt with
/// `error` set when it does not verify or does not compile.
std::optional<::microscale::cuda::ConversionKernel>
compileConversionForCUDA(QTensorType from, QTensorType to, StoragePart part,
                         const NVVMPipelineOptions &options,
                         std::string &error);

} // namespace mlir::microscale

#endif
