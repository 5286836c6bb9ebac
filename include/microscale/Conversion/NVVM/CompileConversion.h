//===- CompileConversion.h - A layout conversion compiled for CUDA -*- C++ -*-===//
//
// Compiles one byte-buffer conversion (values or scales of a quantized
// tensor, layout A to layout B) through `microscale-gpu-to-ptx` into the
// kernel image and launch that the MLIR-free CUDA runtime runs
// (microscale/Runtime/CUDA/ConversionKernel.h). Used by `mx-convert
// --device cuda`.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_CONVERSION_NVVM_COMPILECONVERSION_H
#define MICROSCALE_CONVERSION_NVVM_COMPILECONVERSION_H

#include "microscale/Conversion/NVVM/Passes.h"
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

/// The CUDA toolkit whose ptxas assembles cubins: $CUDA_HOME, $CUDA_PATH,
/// the toolkit of the ptxas on PATH, or the one MLIR was configured with,
/// the first that has bin/ptxas; empty when none has.
std::string findCUDAToolkit();

} // namespace mlir::microscale

#endif
