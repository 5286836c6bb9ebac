//===- TritonLayouts.h - Triton triton_kernels MX layouts --------*- C++ -*-===//
//
// Reference implementations of the non-strided physical layouts used by
// Triton's `triton_kernels` for microscaling (MX) matmul operands: FP4 value
// layouts and E8M0 scale layouts for Hopper, Blackwell and CDNA4. Each is a
// `Layout` (see Layout.h): it reports the dense storage shape in memory order
// and locates every bit of every logical element. The maps are closed forms
// of Triton's reshape/permute/pad sequences; see docs/layouts.md (sections
// 3-8) for their derivation.
//
// Conventions shared by all factories:
//  * The logical tensor has shape [*L, R, C] (rank >= 2); B = prod(L) and the
//    leading index b is row-major over L.
//  * Value layouts hold FP4 (E2M1, 4-bit) codes; scale layouts hold 8-bit
//    codes (E8M0 scales), and their logical shape is the scale tensor itself.
//  * Padding is whatever storage no element maps to; `store` writes it as
//    zeros. Empty tensors (an extent of 0) are accepted; their storage shape
//    follows the same padding formulas (often 0 bytes).
//  * On an unsupported shape or parameter the factory returns nullptr and sets
//    *error (when non-null), with Triton's wording where Triton raises.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_REFERENCE_TRITONLAYOUTS_H
#define MICROSCALE_REFERENCE_TRITONLAYOUTS_H

#include "microscale/Reference/Layout.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace microscale::ref {

/// Triton's HopperMXValueLayout(mx_axis, mma_version), FP4 values.
///
/// mxAxis (-1 or -2) is the quantization (K) axis; the other of the last two
/// dims is the non-MX axis of extent M, and KB = (MX extent) / 2 bytes.
/// Storage shape (memory order): [*L, Mp/4, 4*KBp] with Mp = ceil(M/256)*256
/// and KBp = ceil(KB/64)*64, i.e. a row-major byte image per batch. (For
/// mxAxis = -2 Triton returns the same memory as the transposed view
/// [*L, 4*KBp, Mp/4].) Bytes are permuted by 4x32 tiles (Step A, depends on
/// mmaVersion) and the 8 nibbles of each little-endian 32-bit word have their
/// bits interleaved for the PTX decoder (Step B). Padding nibbles are 0.
/// Constraints: rank >= 2, mxAxis in {-1, -2}, mmaVersion in {2, 3}, and both
/// of the last two extents even (the MX axis is packed here; the last axis is
/// packed in the canonical form the data comes from).
std::unique_ptr<Layout> makeHopperValueLayout(std::vector<int64_t> logicalShape,
                                              int64_t mxAxis, int mmaVersion,
                                              std::string *error = nullptr);

/// Triton's HopperMXScaleLayout(mx_axis, num_warps), 8-bit scales.
///
/// The logical shape is the scale tensor [*L, R, C]; mxAxis (-1 or -2) is the
/// scale (K/32) axis of extent Ks, the other of the last two dims is the
/// non-MX axis of extent M. With W = numWarps, Mp = ceil(M/(32W))*32W and
/// Ksp = ceil(Ks/2)*2, the storage shape (memory order) is
/// [*L, Mp/32, 32*Ksp] (for mxAxis = -2 Triton returns the transposed view
/// [*L, 32*Ksp, Mp/32] of the same memory). Padding bytes are 0.
/// Constraints: rank >= 2, mxAxis in {-1, -2}, numWarps a power of 2 (> 0).
std::unique_ptr<Layout> makeHopperScaleLayout(std::vector<int64_t> logicalShape,
                                              int64_t mxAxis, int numWarps,
                                              std::string *error = nullptr);

/// Triton's BlackwellMXValueLayout(), FP4 values [*L, K, N] packed along K.
///
/// Storage shape (memory order): [*L, N, K2p] with K2p = ceil((K/2)/128)*128:
/// each column n is a run of K2p bytes, byte kb holding k = 2kb (low nibble)
/// and k = 2kb + 1 (high nibble). (Triton returns the view [*L, K2p, N] with
/// strides (.., 1, K2p).) Triton leaves the padding bytes (kb >= K/2)
/// uninitialised; here they are 0. Constraints: rank >= 2, K and N even.
std::unique_ptr<Layout>
makeBlackwellValueLayout(std::vector<int64_t> logicalShape,
                         std::string *error = nullptr);

/// Triton's BlackwellMX4ValueShuffledLayout(block_k, block_n), FP4 values
/// [*L, K, N] packed along K, cut into TMA boxes.
///
/// With TKP = blockK/2, TN = blockN, K2p = ceil((K/2)/lcm(128,TKP))*lcm(128,
/// TKP), Np = ceil(N/TN)*TN, NTK = K2p/TKP, NTN = Np/TN and E = prod(L) (1 for
/// rank 2), the storage shape is [E, NTK, NTN, TN, TKP], contiguous; each
/// [TN, TKP] tile holds bytes (n, kb) of one K-tile x N-tile. Padding bytes
/// are 0. Constraints: rank >= 2, blockK > 0 and even, blockN > 0, K even
/// ("FP4 packing dimension -2 ...") and N even ("... -1 ...", the canonical
/// form packs N).
std::unique_ptr<Layout>
makeBlackwellShuffledValueLayout(std::vector<int64_t> logicalShape,
                                 int64_t blockK, int64_t blockN,
                                 std::string *error = nullptr);

/// Triton's BlackwellMXScaleLayout(), 8-bit scales [*L, Ks, N] (Ks along K):
/// the tcgen05 / cuBLAS "128x4" scale-factor layout.
///
/// With Kp = ceil(Ks/8)*8 and Np = ceil(N/128)*128, the storage shape is
/// (1, B*Np/128, Kp/4, 2, 256), contiguous: 512-byte atoms of 128 n x 4 ks,
/// K-fastest within an N-block. Padding bytes are 0. Constraint: rank >= 2.
std::unique_ptr<Layout>
makeBlackwellScaleLayout(std::vector<int64_t> logicalShape,
                         std::string *error = nullptr);

/// Triton's CDNA4MXScaleLayout() (= GFX950MXScaleLayout), 8-bit scales
/// [*L, Ks, N] (Ks along K).
///
/// With Kp = ceil(Ks/8)*8 and Np = ceil(N/32)*32, the storage shape (memory
/// order) is [B, Np/32, 32*Kp]: each (b, n/32) owns a run of 32*Kp bytes.
/// (Triton returns the transposed view [B, 32*Kp, Np/32].) Padding bytes are
/// 0. Constraint: rank >= 2.
std::unique_ptr<Layout> makeCDNA4ScaleLayout(std::vector<int64_t> logicalShape,
                                             std::string *error = nullptr);

} // namespace microscale::ref

#endif // MICROSCALE_REFERENCE_TRITONLAYOUTS_H
