//===- TCGen05ScaledMatmulKernel.cpp - FP4 and FP8 x FP4 on sm_100a -------===//
//
// scaled_matmul_storage of two MXFP4 (or two NVFP4) operands as one kernel
// of sm_100a's tensor-memory MMA,
// `tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X` (NVFP4:
// `kind::mxf4nvf4 ... scale_vec::4X`, E4M3 scales per 16, the global scales
// applied in the epilogue; MXFP8 activations, E4M3 or E5M2, times an
// MXFP4 weight: `kind::mxf8f6f4 ... scale_vec::1X`, 32 K values per MMA,
// the weight's E2M1 codes copied into the padded shared-memory form that
// kind reads, PTX ISA 9.7.16.10.4.4: each 16 codes packed in the first 8
// bytes of a 16-byte unit, the other 8 padding). The tensor core reads
// both operands from shared memory through matrix descriptors, the scale
// factors and the accumulator from tensor memory (TMEM); nothing is
// decoded in registers.
//
// Roles (swap-AB): the MMA's A is the weight, its M = 128 rows are 128
// weight columns; B is the activations, its N = 16..128 columns are tokens.
// At decode sizes the 128-row operand is then the weight and N shrinks to
// 16, where the opposite roles would waste 127 of 128 rows of every MMA.
// D[r][t] (TMEM lane r, column t) is out[m0 + t][n0 + r]: the warp that
// owns lanes 32w..32w+31 stores 32 consecutive columns of a row of `out`
// per token, coalesced without a transpose.
//
// One CTA of 128 threads per 128 weight columns x N tokens (N <= 128; 48
// under mxf8f6f4, whose tiles are twice as long, so that two stages stay
// in 48 KiB of static shared memory), cta_group::1:
//
//   warp 0      tcgen05.alloc of a power of two >= N + 8 columns (N f32
//               accumulators, then 4 columns per scale atom of A and B),
//               relinquish_alloc_permit; thread 0 initializes two
//               mbarriers per shared-memory stage (two stages): the
//               commit's and the bulk copies';
//   per K chunk c (one scale atom's K: 4 blocks, 128 values for MXFP4 and
//   MXFP8, 64 for NVFP4), in stage c % 2:
//     all       wait for the commit of chunk c - 2 (the stage's previous
//               user), copy (bulk copies, see below) the chunk's weight
//               rows (128 x 64 or 32 bytes; under mxf8f6f4 64 bytes padded
//               to 128) and token rows (128 bytes of FP8) into the stage
//               in the no-swizzle K-major
//               core-matrix layout the operand descriptors describe, and
//               the chunk's scale codes into its two 512-byte atoms;
//               fence.proxy.async (the MMA reads shared memory through the
//               async proxy), barrier;
//     thread 0  arrive on the stage's full mbarrier and wait for the bulk
//               copies, tcgen05.cp .32x128b.warpx4 of each atom, one MMA
//               per 64 K (MXFP4: two, scale IDs 0 and 2 of the atom's column;
//               NVFP4: one, 4X; mxf8f6f4: one per 32 K, four, scale IDs
//               0-3), tcgen05.commit to the stage's mbarrier;
//   so the threads copy chunk c + 1 while the tensor core multiplies
//   chunk c. The chunks inside K run in a loop without K bounds checks, a
//   partial last one is peeled after it.
//   epilogue    wait for the last commit, tcgen05.ld .32x32b.x8 per 8
//               tokens, times the global scales, stores; warp 0
//               tcgen05.dealloc.
//
// The tiles' 16-byte units (one core-matrix row each) are 16-byte loads and
// shared stores by default. With the tiling's `bulk_copies`
// (microscale-nvvm-set-tiling{tcgen05-bulk-copies=true}) they are 1-D bulk
// copies, `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`,
// issued by the threads (ptxas wraps each in an elect loop: 32 per warp,
// one lane at a time, which is why they are not the default): each first
// announces its 16 bytes on the stage's
// "full" mbarrier (`mbarrier.expect_tx`), units past the tensor are zeros
// stored instead; after the barrier thread 0 arrives on that mbarrier and
// waits for its phase (the copies landed) before the MMAs. Where 16-byte
// units do not fit (rows not 16-byte aligned) the copies are 4-byte loads
// and shared stores, and under mxf8f6f4 the weight is loaded 16 bytes at a
// time and stored as two 8-byte halves a core matrix apart (a bulk copy
// moves 16-byte multiples and cannot pad). By default (the tiling's
// tensor_maps) the tiles of K-major rows under the FP4 kinds go by TMA
// instead: thread 0 announces both tiles' bytes on the full mbarrier and
// copies a 3-D box per tile (16 bytes x rows x the chunk's 16-byte units)
// of the tensor map the host code builds from a strided view of the rows
// (TensorMapCopies.h); the box lands unit after unit, so those tiles'
// descriptors take LBO = 16 x rows and SBO = 128. No deeper
// pipeline, no split K, no warp specialization. This is the first correct
// kernel: the instructions, descriptors and data movement, checked without
// the GPU by ptxas and by the host emulation at the end of this file,
// which runs the same copies and descriptors and interprets what the
// tensor-core instructions are handed.
//
// tcgen05.mma is inline PTX: NVVM's tcgen05.mma.block_scale cannot emit
// `.scale_vec::NX`, and its `.block32` / `.block16` forms need PTX 8.8,
// where LLVM 22 aborts instead of diagnosing an older target.
// `.scale_vec::2X` and kind::mxf8f6f4's `.scale_vec::1X` assemble at
// sm_100a's PTX 8.6; kind::mxf4nvf4 needs 8.7, which the pipeline asks
// for on chips with tcgen05. The mbarrier
// wait is inline PTX too (NVVM's op of it is lowered only by
// convert-nvvm-to-llvm); everything else is NVVM ops.
//
// Operands: activations K-major (#microscale.strided; MXFP4, NVFP4, or
// MXFP8 with an MXFP4 weight), the weight
// #microscale.blackwell_value, #microscale.strided<major_dim = 0> or
// #microscale.blackwell_shuffled_value (Triton's TMA boxes, copied box by
// box); scales in any layout, the weight's #microscale.blackwell_scale
// copied word for word since it is byte for byte the atom.
//
//===----------------------------------------------------------------------===//
#include "microscale/Conversion/NVVM/TCGen05ScaledMatmul.h"

#include "BlockScaledSupport.h"
#include "HostEmulation.h"
#include "InlinePtx.h"
#include "OutlineSupport.h"
#include "TensorMapCopies.h"
#include "microscale/Conversion/GPUCommon/KernelFunction.h"
#include "microscale/Conversion/NVVM/KernelTiling.h"
#include "microscale/Conversion/NVVM/TCGen05Descriptors.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
using namespace mlir::microscale::blockscaled;
namespace desc = mlir::microscale::nvvm;

static constexpr int64_t kThreads = 128;
/// The MMA's M: weight columns per CTA, and TMEM lanes.
static constexpr int64_t kRows = 128;
/// Static shared memory a kernel may declare (48 KiB; more needs dynamic
/// shared memory and an opt-in at launch, which the launch does not do).
static constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// A core matrix: 8 rows of 16 bytes, 128 contiguous bytes.
static constexpr int64_t kCoreRows = 8;
static constexpr int64_t kCoreRowBytes = 16;
static constexpr int64_t kCoreBytes = kCoreRows * kCoreRowBytes;
/// Tokens per CTA at most (the MMA's N; 256 would take all 512 TMEM
/// columns, leaving one CTA per SM).
static constexpr int64_t kMaxTokens = 128;
/// E2M1 codes per 16-byte unit of kind::mxf8f6f4's padded shared-memory
/// form (PTX ISA 9.7.16.10.4.4, the 4-bit packing format: 16 codes packed
/// in 8 bytes, then 8 bytes of padding; TMA's .b4x16_p64, 5.5.1.1.1).
static constexpr int64_t kPaddedUnitBytes = 8;
/// The tcgen05.ld shape of the epilogue: 32 lanes x 32 bits, 8 columns.
static constexpr int64_t kLoadColumns = 8;
/// Shared-memory stages: the threads copy chunk c + 1 while the tensor
/// core multiplies chunk c.
static constexpr int64_t kStages = 2;

namespace {
/// Where byte kb (K-major) of row r of an operand is: rows `pitch` bytes
/// apart, or, for `#microscale.blackwell_shuffled_value`, in [tileRows,
/// tileBytes] boxes stored K-tiles outermost (`tiles` boxes per K-tile).
struct RowAddressing {
  int64_t pitch = 0;
  int64_t tileBytes = 0, tileRows = 0, tiles = 0;

  static RowAddressing of(QTensorType type) {
    RowAddressing a;
    a.pitch = type.getValueStorageShape().back();
    if (auto shuffled =
            dyn_cast<BlackwellShuffledValueAttr>(type.getValueLayout())) {
      // Storage [1, K-tiles, N-tiles, block_n, block_k / 2].
      SmallVector<int64_t> storage = type.getValueStorageShape();
      a.tileBytes = shuffled.getBlockK() / 2;
      a.tileRows = shuffled.getBlockN();
      a.tiles = storage[storage.size() - 3];
    }
    return a;
  }

  /// The bytes between the starts of a row's contiguous runs (the row
  /// pitch, or a box row): a unit of copies divides it to stay aligned
  /// and contiguous.
  int64_t runBytes() const { return tileBytes ? tileBytes : pitch; }

  Value byte(Emitter &e, Value row, Value kByte) const {
    if (!tileBytes)
      return e.add(e.mul(row, pitch), kByte);
    Value tile =
        e.add(e.mul(e.div(kByte, tileBytes), tiles), e.div(row, tileRows));
    return e.add(
        e.mul(e.add(e.mul(tile, tileRows), e.rem(row, tileRows)), tileBytes),
        e.rem(kByte, tileBytes));
  }
};

/// The shapes and the shared / tensor memory map the kernel derives from
/// the op. Every offset the copies, the descriptors and the emulation use
/// comes from here.
struct TCGen05Geometry {
  bool nvfp4 = false;
  /// MXFP8 activations (E4M3 or E5M2) x the MXFP4 weight:
  /// kind::mxf8f6f4, the weight padded to one 16-byte unit per 16 codes in
  /// shared memory, 32 K values per MMA, scale_vec::1X.
  bool mxf8 = false;
  bool lhsE5M2 = false;
  /// Tokens (rows of lhs), weight columns, K.
  int64_t m, n, k;
  /// Where the K-major rows (activations) and columns (weight) are.
  RowAddressing lhsRows, rhsRows;
  int64_t lhsWords, rhsWords, lhsScaleBytes, rhsScaleBytes;
  SmallVector<int64_t> lhsScaleShape, rhsScaleShape;
  /// The MMA's N: tokens per CTA, a multiple of 16.
  int64_t tokens;
  /// The weight's scales are `#microscale.blackwell_scale`: each thread
  /// copies one 32-bit word of the atom as it is stored.
  bool weightAtomsStored = false;
  /// The weight (A) and token (B) tiles by TMA: thread 0 copies a 3-D box
  /// (16 bytes x the tile's rows x the chunk's 16-byte units) of a tensor
  /// map the host code builds, so the tile's core matrices lie K unit
  /// after K unit, each unit's rows consecutive (setTensorMapCopies).
  bool tmaA = false, tmaB = false;

  TCGen05Geometry(QTensorType lhs, QTensorType rhs) {
    nvfp4 = lhs.getFormat().getReferenceFormat() ==
            ::microscale::ref::MXFormat::nvfp4();
    lhsE5M2 = lhs.getFormat().getReferenceFormat() ==
              ::microscale::ref::MXFormat::mxfp8E5M2();
    mxf8 = lhsE5M2 || lhs.getFormat().getReferenceFormat() ==
                          ::microscale::ref::MXFormat::mxfp8E4M3();
    m = lhs.getShape()[0];
    k = lhs.getShape()[1];
    n = rhs.getShape()[1];
    lhsRows = RowAddressing::of(lhs);
    rhsRows = RowAddressing::of(rhs);
    lhsWords = ShapedType::getNumElements(lhs.getValueStorageShape()) / 4;
    rhsWords = ShapedType::getNumElements(rhs.getValueStorageShape()) / 4;
    lhsScaleBytes = ShapedType::getNumElements(lhs.getScaleStorageShape());
    rhsScaleBytes = ShapedType::getNumElements(rhs.getScaleStorageShape());
    lhsScaleShape = lhs.getScaleShape();
    rhsScaleShape = rhs.getScaleShape();
    // As many tokens as fit the static shared memory (two stages of a
    // 128-row weight tile, the token tile and two atoms): 128 for the FP4
    // kinds, 48 for mxf8f6f4, whose tile rows are twice as long.
    const int64_t fixed =
        kStages * (kRows * tileRowBytes() + 2 * desc::kScaleAtomBytes) + 64;
    const int64_t fit =
        (kStaticSharedBytes - fixed) / (kStages * tileRowBytes()) / 16 * 16;
    tokens =
        std::min<int64_t>({kMaxTokens, fit, int64_t(llvm::alignTo(m, 16))});
    // A partial last atom (K not a multiple of chunkK) reads the layout's
    // zero padding: scale code 0 times the zero codes copied past K.
    weightAtomsStored = isa<BlackwellScaleAttr>(rhs.getScaleLayout()) &&
                        rhsScaleShape.size() == 2 &&
                        rhsScaleBytes % desc::kScaleAtomBytes == 0;
  }

  int64_t blockSize() const { return nvfp4 ? 16 : 32; }
  int64_t kBlocks() const { return llvm::divideCeil(k, blockSize()); }
  /// One scale atom's K: 4 blocks.
  int64_t chunkK() const { return desc::kScaleAtomKBlocks * blockSize(); }
  /// Shared-memory bytes of a K-major tile row per chunk: two E2M1 codes
  /// per byte for the FP4 kinds; one byte per K value under mxf8f6f4 (FP8
  /// codes, and the padded E2M1 form).
  int64_t tileRowBytes() const { return mxf8 ? chunkK() : chunkK() / 2; }
  /// Global bytes of a K-major row per chunk: the weight's (E2M1) and the
  /// activations' (E2M1, or FP8 under mxf8f6f4).
  int64_t weightRowBytes() const { return chunkK() / 2; }
  int64_t tokenRowBytes() const { return mxf8 ? chunkK() : chunkK() / 2; }
  /// K values per MMA: 64 for the FP4 kinds, 32 for mxf8f6f4 (PTX ISA
  /// 9.7.16.10.1, the shapes of the block-scaled kinds).
  int64_t mmaK() const { return mxf8 ? 32 : 64; }
  int64_t mmasPerChunk() const { return chunkK() / mmaK(); }
  bool wholeChunks() const { return k % chunkK() == 0; }
  /// The chunks inside K: the K loop runs them without K bounds checks,
  /// a partial last chunk (if any) follows it, peeled, with them.
  int64_t fullChunks() const { return k / chunkK(); }

  /// The operand tiles' layout (K-major, no swizzle): core matrices of 8
  /// rows x 16 bytes, K-adjacent ones `leadingByteOffset` apart, 8-row
  /// groups `strideByteOffset` apart, so that one 8-row group of a chunk
  /// is contiguous.
  int64_t leadingByteOffset() const { return kCoreBytes; }
  /// With TMA (a box of 16 bytes x `rows` x units): the units `rows` x 16
  /// bytes apart, the 8-row groups one core matrix apart.
  int64_t leadingByteOffset(bool tma, int64_t rows) const {
    return tma ? kCoreRowBytes * rows : leadingByteOffset();
  }
  int64_t strideByteOffset(bool tma) const {
    return tma ? kCoreBytes : strideByteOffset();
  }
  int64_t aLeadingByteOffset() const { return leadingByteOffset(tmaA, kRows); }
  int64_t bLeadingByteOffset() const {
    return leadingByteOffset(tmaB, tokens);
  }
  /// 16-byte units of a K-major row of K values (TMA's innermost box dim
  /// is one) and of a chunk's tile row.
  int64_t rowUnits() const { return k / 2 / kCoreRowBytes; }
  int64_t chunkUnits() const { return tileRowBytes() / kCoreRowBytes; }
  int64_t strideByteOffset() const {
    return kCoreBytes * (tileRowBytes() / kCoreRowBytes);
  }
  /// Shared memory, per stage: A (weight) tile, B (token) tile, the atoms
  /// of A and B; chunk c uses stage c % kStages.
  int64_t aOffset() const { return 0; }
  int64_t bOffset() const { return kRows * tileRowBytes(); }
  int64_t sfaOffset() const { return bOffset() + tokens * tileRowBytes(); }
  int64_t sfbOffset() const { return sfaOffset() + desc::kScaleAtomBytes; }
  int64_t stageBytes() const { return sfbOffset() + desc::kScaleAtomBytes; }
  int64_t sharedBytes() const { return kStages * stageBytes(); }

  /// Tensor memory: N f32 accumulator columns, then 4 columns per atom.
  int64_t sfaColumn() const { return tokens; }
  int64_t sfbColumn() const { return tokens + 4; }
  int64_t tmemColumns() const {
    return std::max<int64_t>(32, llvm::PowerOf2Ceil(tokens + 8));
  }

  int64_t gridX() const { return llvm::divideCeil(n, kRows); }
  int64_t gridY() const { return llvm::divideCeil(m, tokens); }
  bool wholeColumns() const { return n % kRows == 0; }
  bool wholeTokens() const { return m % tokens == 0; }

  /// The instruction descriptor of MMA `mma` of a chunk.
  uint32_t instrDescriptor(int64_t mma) const {
    desc::BlockScaledInstrDescriptor d;
    d.kind = mxf8    ? desc::BlockScaledKind::MXF8F6F4
             : nvfp4 ? desc::BlockScaledKind::MXF4NVF4
                     : desc::BlockScaledKind::MXF4;
    d.block = nvfp4 ? desc::ScaleBlock::Block16 : desc::ScaleBlock::Block32;
    d.scaleType = nvfp4 ? desc::ScaleType::UE4M3 : desc::ScaleType::UE8M0;
    if (mxf8) {
      // A the weight (E2M1, padded), B the activations.
      d.typeA = desc::OperandType::E2M1;
      d.typeB = lhsE5M2 ? desc::OperandType::E5M2 : desc::OperandType::E4M3;
    }
    d.m = kRows;
    d.n = tokens;
    // 1X: the byte of the atom's 32-bit column that holds this MMA's K
    // block; 2X: the half that holds its two; 4X: the whole column.
    d.scaleIdA = d.scaleIdB = mxf8    ? unsigned(mma)
                              : nvfp4 ? 0
                                      : unsigned(2 * mma);
    std::optional<uint32_t> word = desc::encode(d);
    assert(word && "the geometry only makes valid descriptors");
    return *word;
  }

  /// The constant fields of an operand tile's shared-memory descriptor
  /// (`tma`: the tile of `rows` rows as TMA lays it out).
  uint64_t operandDescriptorFields(bool tma, int64_t rows) const {
    desc::SharedMemoryDescriptor d;
    d.leadingByteOffset = leadingByteOffset(tma, rows);
    d.strideByteOffset = strideByteOffset(tma);
    std::optional<uint64_t> word = desc::encode(d);
    assert(word && "the geometry only makes valid descriptors");
    return *word;
  }

  /// The constant fields of a scale atom's descriptor.
  uint64_t atomDescriptorFields() const {
    std::optional<uint64_t> word = desc::encode(desc::scaleAtomDescriptor(0));
    assert(word && "the atom descriptor is valid");
    return *word;
  }
};

/// The tensor-core side of the kernel: tcgen05.cp, tcgen05.mma,
/// tcgen05.commit and tcgen05.ld with the operands the kernel computes. On
/// the GPU they are the instructions; on the host they interpret those
/// operands (descriptors, tensor-memory addresses) on an emulated shared
/// memory (i32 words) and tensor memory ([128 lanes][columns] of i32).
class TensorCore {
public:
  /// The GPU's instructions.
  explicit TensorCore(const TCGen05Geometry &g) : g(g) {}
  /// The host's interpretation on `shared` and `tmem`.
  TensorCore(const TCGen05Geometry &g, Value shared, Value tmem)
      : g(g), shared(shared), tmem(tmem) {}

  bool onHost() const { return bool(tmem); }

  /// tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], desc.
  void copyAtom(OpBuilder &b, Location loc, Value taddr, Value descriptor);
  /// tcgen05.mma ... block_scale [d], adesc, bdesc, idesc, [sfa], [sfb],
  /// enable-input-d.
  void mma(OpBuilder &b, Location loc, Value d, Value aDescriptor,
           Value bDescriptor, Value idesc, Value enableInputD, Value sfa,
           Value sfb);
  /// tcgen05.commit ... mbarrier::arrive::one [mbarrier] (the host's
  /// instructions complete in order: nothing to do).
  void commit(OpBuilder &b, Location loc, Value mbarrier);
  /// tcgen05.ld.sync.aligned.32x32b.x8 at `taddr` (the warp's first lane
  /// and the column) and tcgen05.wait::ld: `lane`'s 8 words.
  SmallVector<Value> load(OpBuilder &b, Location loc, Value taddr, Value lane);

private:
  void emulateMma(OpBuilder &b, Location loc, Value d, Value aDescriptor,
                  Value bDescriptor, Value idesc, Value enableInputD, Value sfa,
                  Value sfb);
  /// Byte `byte` of the emulated shared memory, zero-extended.
  Value loadShared(Emitter &e, Value byte);
  Value tmemWord(Emitter &e, Value lane, Value column);

  const TCGen05Geometry &g;
  Value shared, tmem;
};
} // namespace

static Value fieldBytes(Emitter &e, Value descriptor, int64_t shift);
static Value descriptorIsPlain(Emitter &e, Value descriptor);

//===----------------------------------------------------------------------===//
// The instructions (GPU)
//===----------------------------------------------------------------------===//

/// A tensor-memory address (lane << 16 | column) as NVVM's !llvm.ptr<6>.
static Value tmemPointer(OpBuilder &b, Location loc, Value taddr) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 6), taddr);
}

void TensorCore::copyAtom(OpBuilder &b, Location loc, Value taddr,
                          Value descriptor) {
  if (!onHost()) {
    NVVM::Tcgen05CpOp::create(
        b, loc, NVVM::Tcgen05CpShape::SHAPE_32x128b, NVVM::CTAGroupKind::CTA_1,
        NVVM::Tcgen05CpMulticast::WARPX4,
        /*srcFormat=*/nullptr, tmemPointer(b, loc, taddr), descriptor);
    return;
  }
  // PTX ISA 9.7.16.8.x (tcgen05.cp): 32 rows of 128 bits, read through the
  // descriptor as core matrices of 8 rows x 16 bytes (no swizzle: row i of
  // matrix j at start + j * SBO + 16 i), row i into lane i of each of the
  // four 32-lane sub-partitions (warpx4), its four words into columns
  // column..column + 3.
  Emitter e(b, loc);
  Value start = fieldBytes(e, descriptor, 0);
  Value stride = fieldBytes(e, descriptor, 32);
  Value valid = descriptorIsPlain(e, descriptor);
  Value column = e.toIndex(e.band(taddr, 0xFFFF));
  Value baseLane = e.toIndex(e.shr(taddr, 16));
  auto rows = scf::ForOp::create(b, loc, e.index(0), e.index(32), e.index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rows.getBody());
  Value row = rows.getInductionVar();
  Value rowByte = e.add(e.add(start, e.mul(e.div(row, kCoreRows), stride)),
                        e.mul(e.rem(row, kCoreRows), kCoreRowBytes));
  for (int64_t word = 0; word < 4; ++word) {
    Value value = memref::LoadOp::create(
        b, loc, shared, ValueRange{e.add(e.div(rowByte, 4), word)});
    // A descriptor the copy does not read this way poisons the column
    // (0xFF: NaN as E8M0 and as E4M3).
    value = e.select(valid, value, e.i32(-1));
    for (int64_t part = 0; part < 4; ++part)
      memref::StoreOp::create(b, loc, value, tmem,
                              ValueRange{e.add(e.add(baseLane, row), 32 * part),
                                         e.add(column, word)});
  }
}

void TensorCore::mma(OpBuilder &b, Location loc, Value d, Value aDescriptor,
                     Value bDescriptor, Value idesc, Value enableInputD,
                     Value sfa, Value sfb) {
  if (!onHost()) {
    std::string text = std::string("{\n.reg .pred p;\nsetp.ne.b32 p, $4, 0;\n"
                                   "tcgen05.mma.cta_group::1.kind::") +
                       (g.mxf8    ? "mxf8f6f4.block_scale.scale_vec::1X"
                        : g.nvfp4 ? "mxf4nvf4.block_scale.scale_vec::4X"
                                  : "mxf4.block_scale.scale_vec::2X") +
                       " [$0], $1, $2, $3, [$5], [$6], p;\n}";
    inlinePtx(
        b, loc, Type(),
        ValueRange{d, aDescriptor, bDescriptor, idesc, enableInputD, sfa, sfb},
        text, "r,l,l,r,r,r,r");
    return;
  }
  emulateMma(b, loc, d, aDescriptor, bDescriptor, idesc, enableInputD, sfa,
             sfb);
}

void TensorCore::commit(OpBuilder &b, Location loc, Value mbarrier) {
  if (onHost())
    return;
  NVVM::Tcgen05CommitOp::create(b, loc, mbarrier, /*multicastMask=*/Value(),
                                NVVM::CTAGroupKind::CTA_1);
}

SmallVector<Value> TensorCore::load(OpBuilder &b, Location loc, Value taddr,
                                    Value lane) {
  Emitter e(b, loc);
  SmallVector<Value> words;
  if (!onHost()) {
    Value loaded = NVVM::Tcgen05LdOp::create(
        b, loc, VectorType::get({kLoadColumns}, b.getI32Type()),
        /*pack=*/false, NVVM::Tcgen05LdStShape::SHAPE_32X32B,
        tmemPointer(b, loc, taddr), /*offset=*/Value());
    NVVM::Tcgen05WaitOp::create(b, loc, NVVM::Tcgen05WaitKind::LOAD);
    for (int64_t i = 0; i < kLoadColumns; ++i)
      words.push_back(vector::ExtractOp::create(b, loc, loaded, i));
    return words;
  }
  // 32x32b: thread t of the warp reads lane (taddr's lane) + t, one 32-bit
  // column per register.
  Value row = e.add(e.toIndex(e.shr(taddr, 16)), lane);
  Value column = e.toIndex(e.band(taddr, 0xFFFF));
  for (int64_t i = 0; i < kLoadColumns; ++i)
    words.push_back(tmemWord(e, row, e.add(column, i)));
  return words;
}

//===----------------------------------------------------------------------===//
// The instructions' operands, interpreted (host)
//===----------------------------------------------------------------------===//

/// Bits [shift, shift + 14) of a shared-memory descriptor, times 16: the
/// start address, leading or stride byte offset (PTX ISA 9.7.16.4.1).
static Value fieldBytes(Emitter &e, Value descriptor, int64_t shift) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Type i64 = b.getI64Type();
  Value field = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, descriptor,
                             arith::ConstantIntOp::create(b, loc, i64, shift)),
      arith::ConstantIntOp::create(b, loc, i64, 0x3FFF));
  return e.mul(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), field),
               16);
}

/// Whether a shared-memory descriptor has the fields the layouts below
/// read: the fixed 0b001 at bits [46, 49), base offset 0, relative leading
/// offset, no swizzle, and zeros elsewhere outside the three offsets.
static Value descriptorIsPlain(Emitter &e, Value descriptor) {
  OpBuilder &b = e.builder();
  Location loc = e.location();
  Type i64 = b.getI64Type();
  const uint64_t offsets = 0x3FFFull | (0x3FFFull << 16) | (0x3FFFull << 32);
  Value rest = arith::AndIOp::create(
      b, loc, descriptor,
      arith::ConstantIntOp::create(b, loc, i64, int64_t(~offsets)));
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, rest,
      arith::ConstantIntOp::create(b, loc, i64, int64_t(1ull << 46)));
}

Value TensorCore::loadShared(Emitter &e, Value byte) {
  OpBuilder &b = e.builder();
  Value word = memref::LoadOp::create(b, e.location(), shared,
                                      ValueRange{e.div(byte, 4)});
  return e.band(e.shrV(word, e.toI32(e.mul(e.rem(byte, 4), 8))), 0xFF);
}

Value TensorCore::tmemWord(Emitter &e, Value lane, Value column) {
  return memref::LoadOp::create(e.builder(), e.location(), tmem,
                                ValueRange{lane, column});
}

/// tcgen05.mma.cta_group::1 kind::mxf4 (2X) / kind::mxf4nvf4 (4X) /
/// kind::mxf8f6f4 (1X) block_scale on the emulated memories, from what the
/// instruction is handed (PTX ISA 9.7.16.4 and 9.7.16.10):
///  * the instruction descriptor: N = bits [17, 23) x 8, M = bits [24, 29)
///    x 16, SFB_ID bits [4, 6), SFA_ID bits [29, 31); every other field
///    must be the kind's (E2M1 = 1 for A and B, K-major, no negation, the
///    scale type of bit 23), else the result is NaN;
///  * A(r, k) and B(c, k): byte k / 2 (the even k in the low nibble) of
///    row r (c) in the K-major no-swizzle layout of the descriptor,
///    start + (r / 8) SBO + (k / 32) LBO + 16 (r % 8) + (k / 2) % 16;
///  * under kind::mxf8f6f4 the A and B types are read from the descriptor
///    (bits [7, 10) and [10, 13): E4M3 0, E5M2 1, E2M1 5; any other code
///    makes the result NaN), every operand takes one 16-byte unit per 16
///    K values, start + (r / 8) SBO + (k / 16) LBO + 16 (r % 8), and
///    element k % 16 of a unit is its byte k % 16 (FP8) or, for E2M1, the
///    nibble k % 2 of its byte (k % 16) / 2: the 4-bit packing format of
///    9.7.16.10.4.4, bytes 8-15 of the unit padding, never read;
///  * the scale of A's row r for K block j: byte SFA_ID + j of TMEM lane r,
///    column sfa + r / 32 (B's column c likewise from sfb);
///  * D(r, c) at TMEM lane r, column d + c, f32; enable-input-d 0
///    overwrites it.
/// Each block's products are summed exactly (integers: the codes times
/// 4; under mxf8f6f4 in f64, where 32 products of an E2M1 and an FP8 value
/// add exactly), scaled, and added in K order in f32: the hardware's order and
/// rounding inside one MMA are not specified, which is why the test
/// compares with a tolerance.
void TensorCore::emulateMma(OpBuilder &b, Location loc, Value d,
                            Value aDescriptor, Value bDescriptor, Value idesc,
                            Value enableInputD, Value sfa, Value sfb) {
  Emitter e(b, loc);
  Type f32 = b.getF32Type();
  namespace f = desc::idesc;
  Value rows =
      e.toIndex(e.mul(e.band(e.shr(idesc, f::kMShift), 0x1F), e.i32(16)));
  Value columns =
      e.toIndex(e.mul(e.band(e.shr(idesc, f::kNShift), 0x3F), e.i32(8)));
  Value sfaId = e.band(e.shr(idesc, f::kScaleIdAShift), 3);
  Value sfbId = e.band(e.shr(idesc, f::kScaleIdBShift), 3);
  // Under mxf8f6f4 the operand types are read from the descriptor too.
  const uint32_t types =
      g.mxf8 ? (7u << f::kTypeAShift) | (7u << f::kTypeBShift) : 0u;
  const uint32_t variable = (0x3Fu << f::kNShift) | (0x1Fu << f::kMShift) |
                            (3u << f::kScaleIdAShift) |
                            (3u << f::kScaleIdBShift) | types;
  const uint32_t fixed =
      (g.mxf8 ? 0u : (1u << f::kTypeAShift) | (1u << f::kTypeBShift)) |
      (uint32_t(g.nvfp4 ? 0 : 1) << f::kScaleTypeShift);
  Value valid = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, idesc, e.i32(int32_t(~variable))),
      e.i32(int32_t(fixed)));
  Value typeA = e.band(e.shr(idesc, f::kTypeAShift), 7);
  Value typeB = e.band(e.shr(idesc, f::kTypeBShift), 7);
  if (g.mxf8) {
    // E4M3 (0), E5M2 (1) or E2M1 (5), the types the kernel's operands
    // can have.
    auto known = [&](Value type) {
      Value isE2M1 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           type, e.i32(5));
      Value isFp8 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          type, e.i32(2));
      return arith::OrIOp::create(b, loc, isE2M1, isFp8).getResult();
    };
    valid = e.andI1(valid, e.andI1(known(typeA), known(typeB)));
  }
  valid = e.andI1(valid, e.andI1(descriptorIsPlain(e, aDescriptor),
                                 descriptorIsPlain(e, bDescriptor)));
  Value aStart = fieldBytes(e, aDescriptor, 0);
  Value aLeading = fieldBytes(e, aDescriptor, 16);
  Value aStride = fieldBytes(e, aDescriptor, 32);
  Value bStart = fieldBytes(e, bDescriptor, 0);
  Value bLeading = fieldBytes(e, bDescriptor, 16);
  Value bStride = fieldBytes(e, bDescriptor, 32);
  auto lane = [&](Value taddr) { return e.toIndex(e.shr(taddr, 16)); };
  auto column = [&](Value taddr) { return e.toIndex(e.band(taddr, 0xFFFF)); };
  Value enabled = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        enableInputD, e.i32(0));
  const int64_t blockSize = g.blockSize();
  const int64_t blocks = g.mmaK() / blockSize;

  auto rowLoop = scf::ForOp::create(b, loc, e.index(0), rows, e.index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rowLoop.getBody());
  Value r = rowLoop.getInductionVar();
  auto columnLoop = scf::ForOp::create(b, loc, e.index(0), columns, e.index(1));
  b.setInsertionPointToStart(columnLoop.getBody());
  Value c = columnLoop.getInductionVar();
  Value dLane = e.add(lane(d), r), dColumn = e.add(column(d), c);
  Value previous =
      arith::BitcastOp::create(b, loc, f32, tmemWord(e, dLane, dColumn));
  Value sum =
      e.select(enabled, previous,
               arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)));
  // The byte of element k of row `row` of an operand tile.
  auto element = [&](Emitter &x, Value start, Value leading, Value stride,
                     Value row, Value k) {
    Value byte = x.div(k, 2);
    Value at = x.add(x.add(x.add(start, x.mul(x.div(row, kCoreRows), stride)),
                           x.mul(x.div(byte, kCoreRowBytes), leading)),
                     x.add(x.mul(x.rem(row, kCoreRows), kCoreRowBytes),
                           x.rem(byte, kCoreRowBytes)));
    return x.band(x.shrV(loadShared(x, at), x.toI32(x.mul(x.rem(k, 2), 4))),
                  0xF);
  };
  // kind::mxf8f6f4: element k of row `row` of an operand tile of type
  // `type` as f32 (exact).
  auto value = [&](Emitter &x, Value start, Value leading, Value stride,
                   Value row, Value k, Value type) {
    OpBuilder &xb = x.builder();
    Location xl = x.location();
    Value unit = x.add(x.add(start, x.mul(x.div(row, kCoreRows), stride)),
                       x.add(x.mul(x.div(k, kCoreRowBytes), leading),
                             x.mul(x.rem(row, kCoreRows), kCoreRowBytes)));
    Value inUnit = x.rem(k, kCoreRowBytes);
    Value byte = loadShared(x, x.add(unit, inUnit));
    Value nibble = x.band(x.shrV(loadShared(x, x.add(unit, x.div(inUnit, 2))),
                                 x.toI32(x.mul(x.rem(k, 2), 4))),
                          0xF);
    Value fp4 = arith::MulFOp::create(
        xb, xl, arith::SIToFPOp::create(xb, xl, f32, e2m1TimesFour(x, nibble)),
        arith::ConstantOp::create(xb, xl, xb.getF32FloatAttr(0.25f)));
    Value isE5M2 =
        arith::CmpIOp::create(xb, xl, arith::CmpIPredicate::eq, type, x.i32(1));
    Value isE2M1 =
        arith::CmpIOp::create(xb, xl, arith::CmpIPredicate::eq, type, x.i32(5));
    return x.select(isE2M1, fp4,
                    x.select(isE5M2, e5m2ToF32(x, byte), e4m3ToF32(x, byte)));
  };
  Value scaleWordA =
      tmemWord(e, e.add(lane(sfa), r), e.add(column(sfa), e.div(r, 32)));
  Value scaleWordB =
      tmemWord(e, e.add(lane(sfb), c), e.add(column(sfb), e.div(c, 32)));
  for (int64_t block = 0; block < blocks && g.mxf8; ++block) {
    // One K block of 32 per MMA: its 32 products, exact in f64, rounded
    // once to f32.
    Type f64 = b.getF64Type();
    auto products = scf::ForOp::create(
        b, loc, e.index(0), e.index(blockSize), e.index(1),
        ValueRange{arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0))
                       .getResult()},
        [&](OpBuilder &bb, Location l, Value j, ValueRange partial) {
          Emitter x(bb, l);
          Value k = x.add(j, block * blockSize);
          Value a = value(x, aStart, aLeading, aStride, r, k, typeA);
          Value bv = value(x, bStart, bLeading, bStride, c, k, typeB);
          Value product =
              arith::MulFOp::create(bb, l, arith::ExtFOp::create(bb, l, f64, a),
                                    arith::ExtFOp::create(bb, l, f64, bv));
          scf::YieldOp::create(
              bb, l,
              ValueRange{arith::AddFOp::create(bb, l, partial[0], product)});
        });
    Value blockSum =
        arith::TruncFOp::create(b, loc, f32, products.getResult(0));
    auto code = [&](Value word, Value id) {
      Value byte = arith::AddIOp::create(b, loc, id, e.i32(block));
      return e.band(e.shrV(word, arith::MulIOp::create(b, loc, byte, e.i32(8))),
                    0xFF);
    };
    Value scaled = arith::MulFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, blockSum,
                              e8m0ToF32(e, code(scaleWordA, sfaId))),
        e8m0ToF32(e, code(scaleWordB, sfbId)));
    sum = arith::AddFOp::create(b, loc, sum, scaled);
  }
  for (int64_t block = 0; block < blocks && !g.mxf8; ++block) {
    auto products = scf::ForOp::create(
        b, loc, e.index(0), e.index(blockSize), e.index(1),
        ValueRange{e.i32(0)},
        [&](OpBuilder &bb, Location l, Value j, ValueRange partial) {
          Emitter x(bb, l);
          Value k = x.add(j, block * blockSize);
          Value codeA = element(x, aStart, aLeading, aStride, r, k);
          Value codeB = element(x, bStart, bLeading, bStride, c, k);
          Value product = arith::MulIOp::create(bb, l, e2m1TimesFour(x, codeA),
                                                e2m1TimesFour(x, codeB));
          scf::YieldOp::create(
              bb, l,
              ValueRange{arith::AddIOp::create(bb, l, partial[0], product)});
        });
    // The codes times 4 each: the block sum is the integer / 16, exact.
    Value blockSum = arith::MulFOp::create(
        b, loc, arith::SIToFPOp::create(b, loc, f32, products.getResult(0)),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / 16)));
    auto code = [&](Value word, Value id) {
      Value byte = arith::AddIOp::create(b, loc, id, e.i32(block));
      return e.band(e.shrV(word, arith::MulIOp::create(b, loc, byte, e.i32(8))),
                    0xFF);
    };
    auto decode = [&](Value scaleCode) {
      return g.nvfp4 ? e4m3ToF32(e, scaleCode) : e8m0ToF32(e, scaleCode);
    };
    Value scaled = arith::MulFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, blockSum,
                              decode(code(scaleWordA, sfaId))),
        decode(code(scaleWordB, sfbId)));
    sum = arith::AddFOp::create(b, loc, sum, scaled);
  }
  sum = e.select(
      valid, sum,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::nanf(""))));
  memref::StoreOp::create(b, loc,
                          arith::BitcastOp::create(b, loc, b.getI32Type(), sum),
                          tmem, ValueRange{dLane, dColumn});
}

//===----------------------------------------------------------------------===//
// The kernel's body (GPU and host)
//===----------------------------------------------------------------------===//

namespace {
/// The kernel in pieces, each run by the GPU per thread (or by thread 0)
/// and by the host emulation in loops over the CTA's threads, in the
/// order the kernel's barriers impose.
class TCGen05Emitter {
public:
  TCGen05Emitter(const TCGen05Geometry &g, ScaledMatmulStorageOp op,
                 Value lhsWords, Value lhsScales, Value rhsWords,
                 Value rhsScales, Value out, bool onHost)
      : g(g), onHost(onHost), lhsScaleLayout(op.getLhsType().getScaleLayout()),
        rhsScaleLayout(op.getRhsType().getScaleLayout()), lhsWords(lhsWords),
        lhsScales(lhsScales), rhsWords(rhsWords), rhsScales(rhsScales),
        out(out) {}

  /// Where the asynchronous copies (bulk copies, TMA boxes) go: `shared`
  /// is the shared address of the tiles' buffer, and stage s's full
  /// mbarrier, which they complete on, is at fullBarriers + 8 s.
  void setAsyncCopyTargets(Value shared, Value fullBarriers) {
    asyncShared = shared;
    asyncBarriers = fullBarriers;
  }

  /// On the GPU: copy the tiles' 16-byte units with `cp.async.bulk`
  /// (global -> shared, to the targets above) instead of loads and shared
  /// stores.
  void useBulkCopies() { bulkCopies = true; }

  /// On the GPU: the host code's tensor maps of the K-major weight and
  /// token rows (16 bytes x rows x 16-byte units of a row), whose boxes go
  /// to the targets above.
  void useTensorMaps(Value weightMap, Value tokenMap) {
    this->weightMap = weightMap;
    this->tokenMap = tokenMap;
  }

  /// Thread `thread`'s share of chunk `chunk`'s copies into `shared` (i32
  /// words): the weight tile of CTA column `bx` (first column n0), the
  /// token tile (first token m0), the two scale atoms. `partialK`: the
  /// chunk reaches past K (the codes there are zeros).
  void copyChunk(OpBuilder &b, Location loc, Value thread, Value bx, Value n0,
                 Value m0, Value chunk, Value shared, bool partialK) {
    Emitter e(b, loc);
    Value stage = e.mul(e.rem(chunk, kStages), g.stageBytes());
    // Under mxf8f6f4 the weight's E2M1 codes go into the padded form.
    if (!g.tmaA)
      copyTile(e, rhsWords, g.rhsRows, g.n, g.wholeColumns(), n0, kRows,
               e.add(stage, g.aOffset()), thread, chunk, shared, partialK,
               g.weightRowBytes(), /*codesPerByte=*/2, /*padded=*/g.mxf8);
    if (!g.tmaB)
      copyTile(e, lhsWords, g.lhsRows, g.m, g.wholeTokens(), m0, g.tokens,
               e.add(stage, g.bOffset()), thread, chunk, shared, partialK,
               g.tokenRowBytes(), /*codesPerByte=*/g.mxf8 ? 1 : 2,
               /*padded=*/false);
    if (g.tmaA || g.tmaB)
      copyBoxes(e, thread, n0, m0, chunk, stage, shared);
    Value sfaWord = e.div(e.add(stage, g.sfaOffset()), 4);
    Value sfbWord = e.div(e.add(stage, g.sfbOffset()), 4);
    // Atom row `thread`: weight column n0 + thread, token m0 + thread.
    Value atomRowWord = e.add(e.mul(e.rem(thread, 32), 4), e.div(thread, 32));
    Value weightWord;
    if (g.weightAtomsStored) {
      // #microscale.blackwell_scale stores the atoms as tcgen05.cp reads
      // them: word `thread` of the stored atom is word `thread` here.
      const int64_t slabs = llvm::divideCeil(g.n, kRows);
      const int64_t atomsPerSlab =
          g.rhsScaleBytes / desc::kScaleAtomBytes / slabs;
      Value atom = e.add(e.mul(bx, atomsPerSlab), chunk);
      weightWord = memref::LoadOp::create(
          b, loc, rhsScales,
          ValueRange{e.add(e.mul(atom, desc::kScaleAtomBytes / 4), thread)});
      storeWord(e, shared, sfaWord, thread, weightWord);
    } else {
      weightWord =
          scaleCodes(e, rhsScaleLayout, rhsScales, g.rhsScaleShape,
                     e.add(n0, thread), g.n, chunk, /*kFirst=*/true, partialK);
      storeWord(e, shared, sfaWord, atomRowWord, weightWord);
    }
    Value tokenWord =
        scaleCodes(e, lhsScaleLayout, lhsScales, g.lhsScaleShape,
                   e.add(m0, thread), g.m, chunk, /*kFirst=*/false, partialK);
    storeWord(e, shared, sfbWord, atomRowWord, tokenWord);
  }

  /// Thread 0's part of chunk `chunk`: both atoms into tensor memory, the
  /// chunk's MMAs into the accumulator at `taddr`, a commit to `mbarrier`
  /// (the chunk's stage's). `sharedAddress` is the shared-memory address of
  /// the buffer the offsets are relative to.
  void issue(OpBuilder &b, Location loc, TensorCore &tc, Value taddr,
             Value sharedAddress, Value chunk, Value mbarrier) {
    Emitter e(b, loc);
    sharedAddress = arith::AddIOp::create(
        b, loc, sharedAddress,
        e.toI32(e.mul(e.rem(chunk, kStages), g.stageBytes())));
    auto atColumn = [&](int64_t column) {
      return arith::AddIOp::create(b, loc, taddr, e.i32(column)).getResult();
    };
    Value sfa = atColumn(g.sfaColumn()), sfb = atColumn(g.sfbColumn());
    tc.copyAtom(b, loc, sfa,
                descriptorAt(e, g.atomDescriptorFields(), sharedAddress,
                             g.sfaOffset()));
    tc.copyAtom(b, loc, sfb,
                descriptorAt(e, g.atomDescriptorFields(), sharedAddress,
                             g.sfbOffset()));
    Value notFirst = arith::ExtUIOp::create(
        b, loc, b.getI32Type(),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, chunk,
                              e.index(0)));
    for (int64_t mma = 0; mma < g.mmasPerChunk(); ++mma) {
      // MMA `mma` reads the chunk's K bytes 32 mma.. : two core matrices
      // along K per 64 values.
      tc.mma(b, loc, taddr,
             descriptorAt(e, g.operandDescriptorFields(g.tmaA, kRows),
                          sharedAddress,
                          g.aOffset() + mma * 2 * g.aLeadingByteOffset()),
             descriptorAt(e, g.operandDescriptorFields(g.tmaB, g.tokens),
                          sharedAddress,
                          g.bOffset() + mma * 2 * g.bLeadingByteOffset()),
             e.i32(int32_t(g.instrDescriptor(mma))), mma ? e.i32(1) : notFirst,
             sfa, sfb);
    }
    tc.commit(b, loc, mbarrier);
  }

  /// Thread `thread`'s epilogue: its TMEM lane (weight column n0 + thread)
  /// for every token of the tile, times the global scale, into `out`.
  void store(OpBuilder &b, Location loc, TensorCore &tc, Value taddr,
             Value thread, Value n0, Value m0, Value globalScale) {
    Emitter e(b, loc);
    Type outElement = cast<MemRefType>(out.getType()).getElementType();
    Value warp = e.div(thread, 32), lane = e.rem(thread, 32);
    // A warp reads its own 32 lanes: lane field 32 w.
    Value warpAddress =
        arith::AddIOp::create(b, loc, taddr, e.shl(e.toI32(warp), 16 + 5));
    Value column = e.add(n0, thread);
    Value columnInside = within(e, column, g.n, g.wholeColumns());
    for (int64_t first = 0; first < g.tokens; first += kLoadColumns) {
      SmallVector<Value> words = tc.load(
          b, loc, arith::AddIOp::create(b, loc, warpAddress, e.i32(first)),
          lane);
      for (int64_t i = 0; i < kLoadColumns; ++i) {
        Value token = e.add(m0, first + i);
        Value inside =
            e.andI1(columnInside, within(e, token, g.m, g.wholeTokens()));
        auto guard = scf::IfOp::create(b, loc, inside, false);
        OpBuilder::InsertionGuard insertion(b);
        b.setInsertionPointToStart(&guard.getThenRegion().front());
        Value value = arith::MulFOp::create(
            b, loc, arith::BitcastOp::create(b, loc, b.getF32Type(), words[i]),
            globalScale);
        if (outElement != value.getType())
          value = arith::TruncFOp::create(b, loc, outElement, value);
        memref::StoreOp::create(b, loc, value, out,
                                ValueRange{e.add(e.mul(token, g.n), column)});
      }
    }
  }

private:
  /// x < extent, or the constant true where the grid never reaches past
  /// it: whole tiles carry no bounds checks.
  static Value within(Emitter &e, Value x, int64_t extent, bool always) {
    if (always)
      return arith::ConstantOp::create(e.builder(), e.location(),
                                       e.builder().getBoolAttr(true));
    return e.lt(x, extent);
  }

  static void storeWord(Emitter &e, Value shared, Value base, Value word,
                        Value value) {
    memref::StoreOp::create(e.builder(), e.location(), value, shared,
                            ValueRange{e.add(word, base)});
  }

  /// The descriptor `fields` with the start address sharedAddress +
  /// offset.
  static Value descriptorAt(Emitter &e, uint64_t fields, Value sharedAddress,
                            int64_t offset) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    Type i64 = b.getI64Type();
    Value address = arith::AddIOp::create(b, loc, sharedAddress, e.i32(offset));
    Value start =
        arith::ExtUIOp::create(b, loc, i64, e.band(e.shr(address, 4), 0x3FFF));
    return arith::OrIOp::create(
        b, loc, start, arith::ConstantIntOp::create(b, loc, i64, fields));
  }

  /// Thread 0's TMA copies of chunk `chunk`'s tiles (the weight's and
  /// tokens' boxes at rows n0 and m0, units chunk x chunkUnits), announced
  /// on the stage's full mbarrier before the block barrier (thread 0
  /// arrives after it). On the host: the boxes as TMA writes them, from the
  /// tensor map's side: unit u, row r of the box at 16 (u rows + r), zeros
  /// past the rows and past K.
  void copyBoxes(Emitter &e, Value thread, Value n0, Value m0, Value chunk,
                 Value stage, Value shared) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    OpBuilder::InsertionGuard guard(b);
    auto first = scf::IfOp::create(b, loc, e.lt(thread, 1), false);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    Value unit = e.mul(chunk, g.chunkUnits());
    if (onHost) {
      if (g.tmaA)
        emulateBox(e, rhsWords, g.rhsRows.pitch, g.n, n0, kRows, unit,
                   e.add(stage, g.aOffset()), shared);
      if (g.tmaB)
        emulateBox(e, lhsWords, g.lhsRows.pitch, g.m, m0, g.tokens, unit,
                   e.add(stage, g.bOffset()), shared);
      return;
    }
    Value full = fullBarrier(e, chunk);
    tma::expectTransaction(
        b, loc, full,
        ((g.tmaA ? kRows : 0) + (g.tmaB ? g.tokens : 0)) * g.tileRowBytes());
    auto box = [&](Value map, Value origin, int64_t offset) {
      tma::copyTensorBox(
          b, loc, map,
          arith::AddIOp::create(b, loc, asyncShared,
                                e.toI32(e.add(stage, offset))),
          full, {e.i32(0), e.toI32(origin), e.toI32(unit)});
    };
    if (g.tmaA)
      box(weightMap, n0, g.aOffset());
    if (g.tmaB)
      box(tokenMap, m0, g.bOffset());
  }

  /// The host's TMA box: `rows` rows from `origin` of the K-major rows in
  /// `words` (`pitch` bytes apart, `extent` of them) x the chunk's units
  /// from `unit`, into the tile at byte `tileOffset` of `shared`.
  void emulateBox(Emitter &e, Value words, int64_t pitch, int64_t extent,
                  Value origin, int64_t rows, Value unit, Value tileOffset,
                  Value shared) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    OpBuilder::InsertionGuard guard(b);
    auto units = scf::ForOp::create(b, loc, e.index(0),
                                    e.index(g.chunkUnits()), e.index(1));
    b.setInsertionPointToStart(units.getBody());
    Value u = units.getInductionVar();
    auto rowsLoop = scf::ForOp::create(b, loc, e.index(0), e.index(rows),
                                       e.index(1));
    b.setInsertionPointToStart(rowsLoop.getBody());
    Value r = rowsLoop.getInductionVar();
    Value row = e.add(origin, r), column = e.add(unit, u);
    Value inside = e.andI1(e.lt(row, extent), e.lt(column, g.rowUnits()));
    Value global = e.select(
        inside, e.div(e.add(e.mul(row, pitch), e.mul(column, kCoreRowBytes)), 4),
        e.index(0));
    auto type = VectorType::get({4}, b.getI32Type());
    Value loaded = vector::LoadOp::create(b, loc, type, words,
                                          ValueRange{global}, false,
                                          llvm::MaybeAlign(4));
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
    Value at = e.add(tileOffset,
                     e.add(e.mul(u, kCoreRowBytes * rows),
                           e.mul(r, kCoreRowBytes)));
    vector::StoreOp::create(b, loc, e.select(inside, loaded, zero), shared,
                            ValueRange{e.div(at, 4)}, false,
                            llvm::MaybeAlign(4));
  }

  /// Thread `thread`'s units of a `rows` x `rowBytes` (global bytes per
  /// row and chunk) tile: K-major global rows origin.. of `words` (where
  /// `addressing` puts them) into the core-matrix layout at byte
  /// `tileOffset`; zero codes past the tensor. A unit is one 16-byte
  /// core-matrix row segment where every such segment of the tensor is
  /// 16-byte aligned and wholly inside or outside K, else a 32-bit word (K
  /// a multiple of 16: 8 E2M1 codes, all in or all out; 4 FP8 codes).
  /// `padded`: the E2M1 codes into kind::mxf8f6f4's padded form, each 8
  /// global bytes (16 codes) into the first half of a 16-byte core-matrix
  /// row segment, the other half left alone (the MMA does not read it; a
  /// TMA .b4x16_p64 copy leaves it uninitialized too): a 16-byte unit is
  /// loaded whole and stored as two 8-byte halves, and where 16-byte units
  /// do not fit, 8-byte ones do before 32-bit words.
  void copyTile(Emitter &e, Value words, const RowAddressing &addressing,
                int64_t extent, bool wholeExtent, Value origin, int64_t rows,
                Value tileOffset, Value thread, Value chunk, Value shared,
                bool partialK, int64_t rowBytes, int64_t codesPerByte,
                bool padded) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    const int64_t kBytes = g.k / codesPerByte;
    auto fits = [&](int64_t bytes) {
      return addressing.runBytes() % bytes == 0 && kBytes % bytes == 0;
    };
    const int64_t unitWords = fits(16)                           ? 4
                              : padded && fits(kPaddedUnitBytes) ? 2
                                                                 : 1;
    const int64_t unitBytes = 4 * unitWords;
    // A padded 16-byte unit is stored as its two 8-byte halves.
    const int64_t pieceWords =
        padded ? std::min<int64_t>(unitWords, kPaddedUnitBytes / 4) : unitWords;
    const int64_t rowUnits = rowBytes / unitBytes;
    const int64_t units = rows * rowUnits;
    // The host's buffers promise no more than the element's alignment.
    const llvm::MaybeAlign align(onHost ? 4 : unitBytes);
    const llvm::MaybeAlign pieceAlign(onHost ? 4 : 4 * pieceWords);
    auto type = VectorType::get({unitWords}, b.getI32Type());
    // Consecutive threads take consecutive units of a row: a row's bytes
    // of the chunk are one contiguous global segment.
    for (int64_t first = 0; first < units; first += kThreads) {
      Value w = e.add(thread, first);
      std::optional<OpBuilder::InsertionGuard> guard;
      if (first + kThreads > units) {
        // Fewer units than threads left (a small token tile).
        guard.emplace(b);
        auto inside = scf::IfOp::create(b, loc, e.lt(w, units), false);
        b.setInsertionPointToStart(&inside.getThenRegion().front());
      }
      Value row = e.div(w, rowUnits);
      Value byte = e.mul(e.rem(w, rowUnits), unitBytes);
      Value kByte = e.add(e.mul(chunk, rowBytes), byte);
      Value globalRow = e.add(origin, row);
      Value valid =
          e.andI1(within(e, globalRow, extent, wholeExtent),
                  within(e, e.mul(kByte, codesPerByte), g.k, !partialK));
      Value global = e.div(addressing.byte(e, globalRow, kByte), 4);
      if (bulkCopies && !padded && unitWords == 4) {
        bulkCopy(e, words, global, valid, tileOffset, row, byte, chunk, shared);
        continue;
      }
      Value loaded = vector::LoadOp::create(
          b, loc, type, words, ValueRange{e.select(valid, global, e.index(0))},
          false, align);
      Value zero = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
      Value value = e.select(valid, loaded, zero);
      for (int64_t piece = 0; piece < unitWords; piece += pieceWords) {
        Value part = value;
        Value tileByte = e.add(byte, 4 * piece);
        if (padded) {
          if (pieceWords != unitWords)
            part = vector::ShuffleOp::create(
                b, loc, value, value,
                llvm::to_vector(llvm::seq<int64_t>(piece, piece + pieceWords)));
          tileByte =
              e.add(e.mul(e.div(tileByte, kPaddedUnitBytes), kCoreRowBytes),
                    e.rem(tileByte, kPaddedUnitBytes));
        }
        Value at = e.add(
            e.add(e.add(tileOffset,
                        e.mul(e.div(row, kCoreRows), g.strideByteOffset())),
                  e.mul(e.div(tileByte, kCoreRowBytes), g.leadingByteOffset())),
            e.add(e.mul(e.rem(row, kCoreRows), kCoreRowBytes),
                  e.rem(tileByte, kCoreRowBytes)));
        vector::StoreOp::create(b, loc, part, shared, ValueRange{e.div(at, 4)},
                                false,
                                pieceWords == unitWords ? align : pieceAlign);
      }
    }
  }

  /// One 16-byte unit of a tile (row `row`, byte `byte` of its K bytes in
  /// the chunk, global word `global` of `words`) by `cp.async.bulk` into
  /// the core-matrix layout at `tileOffset`, its 16 bytes first announced
  /// on the stage's full mbarrier (`mbarrier.expect_tx`, before the
  /// barrier thread 0 arrives after); zeros by a shared store where the
  /// unit is past the tensor (`valid` false).
  void bulkCopy(Emitter &e, Value words, Value global, Value valid,
                Value tileOffset, Value row, Value byte, Value chunk,
                Value shared) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    Value at =
        e.add(e.add(e.add(tileOffset,
                          e.mul(e.div(row, kCoreRows), g.strideByteOffset())),
                    e.mul(e.div(byte, kCoreRowBytes), g.leadingByteOffset())),
              e.add(e.mul(e.rem(row, kCoreRows), kCoreRowBytes),
                    e.rem(byte, kCoreRowBytes)));
    auto branch = scf::IfOp::create(b, loc, valid, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    auto type = VectorType::get({4}, b.getI32Type());
    if (onHost) {
      // The host's bulk copy: the same 16 bytes, from word `global` to the
      // shared address the GPU hands the instruction (the buffer at 0).
      Value destination =
          e.toIndex(arith::AddIOp::create(b, loc, asyncShared, e.toI32(at)));
      vector::StoreOp::create(b, loc,
                              vector::LoadOp::create(b, loc, type, words,
                                                     ValueRange{global}, false,
                                                     llvm::MaybeAlign(4)),
                              shared, ValueRange{e.div(destination, 4)}, false,
                              llvm::MaybeAlign(4));
    } else {
      // The argument's generic address, converted to a global one in the
      // asm (cvta.to.global) for the .global source operand.
      Value source = arith::AddIOp::create(
          b, loc,
          arith::IndexCastOp::create(
              b, loc, b.getI64Type(),
              memref::ExtractAlignedPointerAsIndexOp::create(b, loc, words)),
          arith::IndexCastOp::create(b, loc, b.getI64Type(), e.mul(global, 4)));
      Value destination =
          arith::AddIOp::create(b, loc, asyncShared, e.toI32(at));
      Value full = fullBarrier(e, chunk);
      inlinePtx(b, loc, Type(), ValueRange{destination, source, full},
                "{\n.reg .b64 g;\ncvta.to.global.u64 g, $1;\n"
                "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$2], 16;\n"
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
                "bytes [$0], [g], 16, [$2];\n}",
                "r,l,r");
    }
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    vector::StoreOp::create(
        b, loc,
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0))),
        shared, ValueRange{e.div(at, 4)}, false,
        llvm::MaybeAlign(onHost ? 4 : 16));
  }

  /// The 4 scale codes of chunk `chunk` (K blocks 4 chunk..4 chunk + 3) of
  /// row/column `other` in bytes 0-3, read through the layout's own
  /// emitter; the code of 1.0 past the tensor (never NaN x 0).
  Value scaleCodes(Emitter &e, LayoutAttrInterface layout, Value buffer,
                   ArrayRef<int64_t> shape, Value other, int64_t extent,
                   Value chunk, bool kFirst, bool partialK) {
    OpBuilder &b = e.builder();
    Location loc = e.location();
    const int64_t unit = g.nvfp4 ? 0x38 : 127;
    Value word = e.i32(0);
    for (int64_t j = 0; j < desc::kScaleAtomKBlocks; ++j) {
      Value block = e.add(e.mul(chunk, desc::kScaleAtomKBlocks), j);
      Value valid = e.lt(other, extent);
      if (partialK)
        valid = e.andI1(valid, e.lt(block, g.kBlocks()));
      SmallVector<Value> index = kFirst ? SmallVector<Value>{block, other}
                                        : SmallVector<Value>{other, block};
      for (Value &v : index)
        v = e.select(valid, v, e.index(0));
      Value code = layout.emitLoadElement(b, loc, buffer, shape, 8, index);
      code = e.select(valid, code, e.i32(unit));
      word = e.bor(word, e.shl(code, 8 * j));
    }
    return word;
  }

  const TCGen05Geometry &g;
  bool onHost;
  LayoutAttrInterface lhsScaleLayout, rhsScaleLayout;
  Value lhsWords, lhsScales, rhsWords, rhsScales, out;
  /// The full mbarrier of chunk `chunk`'s stage (setAsyncCopyTargets).
  Value fullBarrier(Emitter &e, Value chunk) const {
    return arith::AddIOp::create(e.builder(), e.location(), asyncBarriers,
                                 e.toI32(e.mul(e.rem(chunk, kStages), 8)));
  }

  /// See setAsyncCopyTargets, useBulkCopies (else loads and stores) and
  /// useTensorMaps.
  Value asyncShared, asyncBarriers;
  bool bulkCopies = false;
  Value weightMap, tokenMap;
};
} // namespace

//===----------------------------------------------------------------------===//
// Checks, arguments and the kernel
//===----------------------------------------------------------------------===//

/// Whether `op` has the operands the kernel handles (with a diagnostic that
/// says what to do instead).
static LogicalResult checkTCGen05ScaledMatmul(ScaledMatmulStorageOp op) {
  namespace ref = ::microscale::ref;
  QTensorType lhs = op.getLhsType(), rhs = op.getRhsType();
  const ref::MXFormat format = lhs.getFormat().getReferenceFormat();
  const ref::MXFormat weight = rhs.getFormat().getReferenceFormat();
  const bool mxfp8 = format == ref::MXFormat::mxfp8E4M3() ||
                     format == ref::MXFormat::mxfp8E5M2();
  const bool fp4 =
      (format == ref::MXFormat::mxfp4() || format == ref::MXFormat::nvfp4()) &&
      weight == format;
  if (!(fp4 || (mxfp8 && weight == ref::MXFormat::mxfp4())) || op.getVariant())
    return op.emitOpError()
           << "the sm_100a tcgen05 kernel multiplies mxfp4 by mxfp4 "
              "(kind::mxf4), nvfp4 by nvfp4 (kind::mxf4nvf4) or mxfp8 "
              "activations by an mxfp4 weight (kind::mxf8f6f4) without a "
              "transcode variant; got "
           << Attribute(lhs.getFormat()) << " x " << Attribute(rhs.getFormat());
  auto shuffled = dyn_cast<BlackwellShuffledValueAttr>(rhs.getValueLayout());
  if (shuffled && shuffled.getBlockK() % 8)
    return op.emitOpError()
           << "the sm_100a tcgen05 kernel copies the weight in 32-bit words; "
              "its #microscale.blackwell_shuffled_value boxes have block_k = "
           << shuffled.getBlockK()
           << " (a multiple of 8 is needed): convert_layout the weight to "
              "#microscale.blackwell_value first";
  if (!isKMajor(lhs) || !(shuffled || isKMajor(rhs)))
    return op.emitOpError()
           << "the sm_100a tcgen05 kernel needs both operands K-major (lhs "
              "#microscale.strided, rhs #microscale.blackwell_value, "
              "#microscale.blackwell_shuffled_value or "
              "#microscale.strided<major_dim = 0>), got "
           << Attribute(lhs.getValueLayout()) << " and "
           << Attribute(rhs.getValueLayout()) << "; convert_layout first";
  const int64_t k = lhs.getShape()[1];
  if (k <= 0 || k % 16 || lhs.getShape()[0] <= 0 || rhs.getShape()[1] <= 0)
    return op.emitOpError()
           << "the sm_100a tcgen05 kernel needs K a "
              "positive multiple of 16 and non-empty M and "
              "N, got "
           << lhs.getShape()[0] << " x " << k << " x " << rhs.getShape()[1];
  return success();
}

/// The kernel's arguments: activation words, activation scales, weight
/// words, weight scales (words when the atoms are copied as stored), the
/// result, the product of the global scales.
static SmallVector<Type> kernelArguments(ScaledMatmulStorageOp op,
                                         const TCGen05Geometry &g) {
  MLIRContext *context = op.getContext();
  Type i8 = IntegerType::get(context, 8), i32 = IntegerType::get(context, 32);
  Type outElement = cast<MemRefType>(op.getOut().getType()).getElementType();
  return {MemRefType::get({g.lhsWords}, i32),
          MemRefType::get({g.lhsScaleBytes}, i8),
          MemRefType::get({g.rhsWords}, i32),
          g.weightAtomsStored ? MemRefType::get({g.rhsScaleBytes / 4}, i32)
                              : MemRefType::get({g.rhsScaleBytes}, i8),
          MemRefType::get({g.m * g.n}, outElement),
          Float32Type::get(context)};
}

/// Which tiles TMA copies: K-major rows (not Triton's boxes) whose pitch
/// and K bytes are whole 16-byte units, under the FP4 kinds (mxf8f6f4's
/// weight is padded in shared memory; its FP8 token rows stay with the
/// threads' copies too).
static void setTensorMapCopies(TCGen05Geometry &g, bool wanted) {
  if (!wanted || g.mxf8 || (g.k / 2) % kCoreRowBytes)
    return;
  g.tmaA = !g.rhsRows.tileBytes && g.rhsRows.pitch % kCoreRowBytes == 0;
  g.tmaB = !g.lhsRows.tileBytes && g.lhsRows.pitch % kCoreRowBytes == 0;
}

/// The tensor maps' kernel arguments (weight first), after
/// kernelArguments'.
static SmallVector<Type> tensorMapArguments(MLIRContext *context,
                                            const TCGen05Geometry &g) {
  SmallVector<Type> types;
  if (g.tmaA)
    types.push_back(tma::getTensorMapArgumentType(context));
  if (g.tmaB)
    types.push_back(tma::getTensorMapArgumentType(context));
  return types;
}

/// Host: the tensor map of a K-major operand's rows (`rows` of them,
/// `pitch` bytes apart, in the 1-D byte buffer `values` of `bytes`) seen as
/// [16-byte units][rows][16 bytes], for boxes of the chunk's units x
/// `boxRows` rows x 16 bytes.
static Value createRowsTensorMap(OpBuilder &b, Location loc,
                                 const TCGen05Geometry &g, Value values,
                                 int64_t bytes, int64_t pitch, int64_t rows,
                                 int64_t boxRows) {
  Type i8 = b.getI8Type();
  Value flat = blockscaled::viewAsArgument(
      b, loc, values, MemRefType::get({bytes}, i8), bytes);
  const SmallVector<int64_t> sizes = {g.rowUnits(), rows, kCoreRowBytes};
  const SmallVector<int64_t> strides = {kCoreRowBytes, pitch, 1};
  auto viewType = MemRefType::get(
      sizes, i8, StridedLayoutAttr::get(b.getContext(), 0, strides));
  Value view = memref::ReinterpretCastOp::create(b, loc, viewType, flat, 0,
                                                 sizes, strides);
  return tma::createTensorMap(b, loc, view,
                              {g.chunkUnits(), boxRows, kCoreRowBytes},
                              /*swizzle128=*/false);
}

/// Runs `body` in an scf.if on `condition`.
static void ifThen(OpBuilder &b, Location loc, Value condition,
                   function_ref<void()> body) {
  auto op = scf::IfOp::create(b, loc, condition, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  body();
}

static void outlineKernel(ScaledMatmulStorageOp op, gpu::GPUModuleOp kernels,
                          unsigned index, const ScaledMatmulTiling &tiling) {
  const bool bulkCopies = tiling.bulkCopies;
  TCGen05Geometry g(op.getLhsType(), op.getRhsType());
  setTensorMapCopies(g, tiling.tensorMaps);
  Location loc = op.getLoc();
  KernelSignature signature;
  signature.name = ((g.mxf8    ? "tcgen05_scaled_matmul_mxf8f6f4_"
                     : g.nvfp4 ? "tcgen05_scaled_matmul_mxf4nvf4_"
                               : "tcgen05_scaled_matmul_mxf4_") +
                    Twine(index))
                       .str();
  signature.arguments = kernelArguments(op, g);
  llvm::append_range(signature.arguments,
                     tensorMapArguments(op.getContext(), g));
  signature.noAliasBuffers = 5;
  signature.blockSize = kThreads;
  gpu::GPUFuncOp function = buildKernelFunction(kernels, loc, signature);
  OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
  Type i32 = b.getI32Type();
  // The operand tiles and atoms (descriptor start addresses are 16-byte
  // units; 1024 keeps every tile on a swizzle repeat for a later swizzled
  // layout), the mbarrier, the slot tcgen05.alloc writes the address to.
  Value shared = addSharedBuffer(
      function, getSharedMemRefType({g.sharedBytes() / 4}, i32), loc, 1024);
  Value barrier = addSharedBuffer(
      function, getSharedMemRefType({2 * kStages}, b.getI64Type()), loc, 8);
  Value slot = addSharedBuffer(function, getSharedMemRefType({1}, i32), loc, 4);
  Block &entry = function.getBody().front();
  TCGen05Emitter emitter(g, op, entry.getArgument(0), entry.getArgument(1),
                         entry.getArgument(2), entry.getArgument(3),
                         entry.getArgument(4), /*onHost=*/false);
  TensorCore tc(g);
  Emitter e(b, loc);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value n0 = e.mul(bx, kRows), m0 = e.mul(by, g.tokens);
  Value warp0 = e.lt(thread, 32);
  Value thread0 = e.lt(thread, 1);
  // Stage s's mbarriers: the commit's at barrier + 8 s, whose phases
  // complete with the commits of chunks s, s + kStages, ...; the bulk
  // copies' ("full") at barrier + 8 (kStages + s), whose phases complete
  // when thread 0 has arrived and the copies of those chunks have landed.
  Value barrierBase =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, barrier);
  auto barrierOf = [&](Emitter &at, Value stage) {
    return at.add(barrierBase, at.mul(stage, 8));
  };
  auto barrierPointer = [&](Emitter &at, Value stage) {
    OpBuilder &ab = at.builder();
    return LLVM::IntToPtrOp::create(
               ab, at.location(),
               LLVM::LLVMPointerType::get(ab.getContext(), 3),
               arith::IndexCastOp::create(ab, at.location(), ab.getI64Type(),
                                          barrierOf(at, stage))
                   .getResult())
        .getResult();
  };
  // Waits for chunk `chunk`'s commit: phase chunk / kStages of its stage's
  // mbarrier.
  auto waitForChunk = [&](Emitter &at, Value chunk) {
    Value stage = at.rem(chunk, kStages);
    tma::waitParity(at.builder(), at.location(), at.toI32(barrierOf(at, stage)),
               at.band(at.toI32(at.div(chunk, kStages)), 1));
  };
  Value columns = e.i32(g.tmemColumns());

  ifThen(b, loc, warp0, [&] {
    NVVM::Tcgen05AllocOp::create(b, loc, pointerToByte(b, loc, slot, Value(), 3), columns);
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc);
  });
  // The commits arrive from the tensor core, outside thread 0's program
  // order: initMbarriers fences the initialization for them.
  ifThen(b, loc, thread0, [&] {
    tma::initMbarriers(b, loc, barrierBase, 2 * kStages);
  });
  // The allocation's address and the initialized mbarrier, to every
  // thread.
  NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b, loc);
  NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  Value taddr = memref::LoadOp::create(b, loc, slot, ValueRange{e.index(0)});
  Value sharedAddress =
      e.toI32(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared));
  emitter.setAsyncCopyTargets(sharedAddress,
                              e.toI32(barrierOf(e, e.index(kStages))));
  if (bulkCopies)
    emitter.useBulkCopies();
  if (g.tmaA || g.tmaB) {
    const unsigned first = kernelArguments(op, g).size();
    emitter.useTensorMaps(
        g.tmaA ? entry.getArgument(first) : Value(),
        g.tmaB ? entry.getArgument(first + (g.tmaA ? 1 : 0)) : Value());
  }

  auto chunkBody = [&](OpBuilder &lb, Location ll, Value chunk, bool partialK) {
    Emitter le(lb, ll);
    // The stage's previous chunk (chunk - kStages) must have been read by
    // its MMAs before the copies overwrite it.
    Value reused = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::uge,
                                         chunk, le.index(kStages));
    ifThen(lb, ll, reused, [&] {
      Emitter we(lb, ll);
      waitForChunk(we, we.add(chunk, -kStages));
    });
    emitter.copyChunk(lb, ll, thread, bx, n0, m0, chunk, shared, partialK);
    // Shared stores are the generic proxy; tcgen05.cp and tcgen05.mma read
    // through the async proxy.
    NVVM::FenceProxyOp::create(
        lb, ll, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(lb.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(lb, ll);
    ifThen(lb, ll, thread0, [&] {
      // Every thread has announced its bulk copies' bytes (before the
      // barrier): thread 0's arrival lets the stage's full phase complete
      // once they have landed.
      Emitter te(lb, ll);
      Value stage = te.rem(chunk, kStages);
      Value full = te.toI32(barrierOf(te, te.add(stage, kStages)));
      inlinePtx(lb, ll, Type(), ValueRange{full},
                "mbarrier.arrive.shared::cta.b64 _, [$0];", "r");
      tma::waitParity(lb, ll, full, te.band(te.toI32(te.div(chunk, kStages)), 1));
      NVVM::Tcgen05FenceOp::create(lb, ll,
                                   NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
      emitter.issue(lb, ll, tc, taddr, sharedAddress, chunk,
                    barrierPointer(le, le.rem(chunk, kStages)));
    });
  };
  if (g.fullChunks() > 0)
    scf::ForOp::create(
        b, loc, e.index(0), e.index(g.fullChunks()), e.index(1), ValueRange(),
        [&](OpBuilder &lb, Location ll, Value chunk, ValueRange) {
          chunkBody(lb, ll, chunk, /*partialK=*/false);
          scf::YieldOp::create(lb, ll);
        });
  if (!g.wholeChunks())
    chunkBody(b, loc, e.index(g.fullChunks()), /*partialK=*/true);
  // The last commit tracks every MMA before it (one thread issues them, in
  // order): once it completes, the accumulator is final.
  const int64_t chunks = llvm::divideCeil(g.k, g.chunkK());
  waitForChunk(e, e.index(chunks - 1));
  NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  emitter.store(b, loc, tc, taddr, thread, n0, m0, entry.getArgument(5));
  NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b, loc);
  ifThen(b, loc, warp0, [&] {
    NVVM::Tcgen05FenceOp::create(b, loc,
                                 NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    NVVM::Tcgen05DeallocOp::create(b, loc, tmemPointer(b, loc, taddr), columns);
  });
  gpu::ReturnOp::create(b, loc);

  OpBuilder host(op);
  Emitter h(host, loc);
  Value one = h.index(1);
  gpu::KernelDim3 grid{h.index(g.gridX()), h.index(g.gridY()), one};
  gpu::KernelDim3 block{h.index(kThreads), one, one};
  SmallVector<Value> arguments =
      argumentValues(host, loc, op, kernelArguments(op, g));
  if (g.tmaA)
    arguments.push_back(createRowsTensorMap(
        host, loc, g, op.getRhsValues(),
        ShapedType::getNumElements(op.getRhsType().getValueStorageShape()),
        g.rhsRows.pitch, g.n, kRows));
  if (g.tmaB)
    arguments.push_back(createRowsTensorMap(
        host, loc, g, op.getLhsValues(),
        ShapedType::getNumElements(op.getLhsType().getValueStorageShape()),
        g.lhsRows.pitch, g.m, g.tokens));
  gpu::LaunchFuncOp::create(host, loc, function, grid, block, Value(),
                            arguments);
  op.erase();
}

LogicalResult mlir::microscale::outlineTCGen05ScaledMatmul(
    ScaledMatmulStorageOp op, gpu::GPUModuleOp kernels, unsigned index,
    const nvvm::NVIDIAChip &chip) {
  if (!chip.hasTcgen05)
    return op.emitOpError() << "has no tcgen05 on " << chip.name
                            << ": the tcgen05 scaled_matmul kernel is for "
                               "sm_100a";
  if (failed(checkTCGen05ScaledMatmul(op)))
    return failure();
  FailureOr<ScaledMatmulTiling> tiling = getScaledMatmulTiling(op);
  if (failed(tiling))
    return failure();
  outlineKernel(op, kernels, index, *tiling);
  return success();
}

//===----------------------------------------------------------------------===//
// Host emulation
//===----------------------------------------------------------------------===//

bool mlir::microscale::emulateTCGen05ScaledMatmulOnHost(
    ScaledMatmulStorageOp op) {
  FailureOr<ScaledMatmulTiling> tiling;
  {
    // The checks without their diagnostics: a test asks whether the kernel
    // applies.
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(checkTCGen05ScaledMatmul(op)) ||
        failed(tiling = getScaledMatmulTiling(op)))
      return false;
  }
  const bool bulkCopies = tiling->bulkCopies;
  loadHostEmulationDialects(op.getContext());
  TCGen05Geometry g(op.getLhsType(), op.getRhsType());
  setTensorMapCopies(g, tiling->tensorMaps);
  Location loc = op.getLoc();
  OpBuilder b(op);
  Emitter e(b, loc);
  SmallVector<Type> types = kernelArguments(op, g);
  SmallVector<Value> args = argumentValues(b, loc, op, types);
  Type i32 = b.getI32Type();
  // Shared memory as the kernel's buffer (address 0), tensor memory as
  // [lanes][allocated columns] of 32-bit cells, the allocation at lane 0,
  // column 0.
  Value shared = memref::AllocaOp::create(
      b, loc, MemRefType::get({g.sharedBytes() / 4}, i32));
  Value tmem = memref::AllocaOp::create(
      b, loc, MemRefType::get({kRows, g.tmemColumns()}, i32));
  TensorCore tc(g, shared, tmem);
  TCGen05Emitter emitter(g, op, args[0], args[1], args[2], args[3], args[4],
                         /*onHost=*/true);
  // The kernel's bulk copies, run as copies to the addresses they are
  // handed (the shared buffer at address 0; no mbarrier on the host).
  emitter.setAsyncCopyTargets(e.i32(0), e.i32(0));
  if (bulkCopies)
    emitter.useBulkCopies();
  auto loop = [&](int64_t count) {
    auto forOp =
        scf::ForOp::create(b, loc, e.index(0), e.index(count), e.index(1));
    b.setInsertionPointToStart(forOp.getBody());
    return forOp.getInductionVar();
  };
  Value bx = loop(g.gridX());
  Value by = loop(g.gridY());
  Value n0 = e.mul(bx, kRows), m0 = e.mul(by, g.tokens);
  Value taddr = e.i32(0), sharedAddress = e.i32(0);
  // As the kernel: the chunks inside K, then the partial one.
  auto chunkBody = [&](Value chunk, bool partialK) {
    {
      // Every thread's copies (the barrier), then thread 0's instructions.
      OpBuilder::InsertionGuard threads(b);
      Value thread = loop(kThreads);
      emitter.copyChunk(b, loc, thread, bx, n0, m0, chunk, shared, partialK);
    }
    emitter.issue(b, loc, tc, taddr, sharedAddress, chunk, Value());
  };
  if (g.fullChunks() > 0) {
    OpBuilder::InsertionGuard guard(b);
    chunkBody(loop(g.fullChunks()), /*partialK=*/false);
  }
  if (!g.wholeChunks())
    chunkBody(e.index(g.fullChunks()), /*partialK=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    Value thread = loop(kThreads);
    emitter.store(b, loc, tc, taddr, thread, n0, m0, args[5]);
  }
  op.erase();
  return true;
}
