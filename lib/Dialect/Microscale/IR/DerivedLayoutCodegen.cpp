//===- DerivedLayoutCodegen.cpp - Layout emitters from the reference ------===//
//
// A derived map gives each element's slot address as a sum over runs of
// index bits (see ref::BlockBits). A store unit of U bytes holds
// P = 8U / elementBits slots. The emitters split the runs at the unit:
//
//  * runs whose stride is a multiple of P select the unit (and, inverted,
//    are read off the unit index once per unit);
//  * runs below P select the slot within the unit (static in a store unit,
//    so they fold to constants there);
//  * a run that straddles P is cut in two.
//
// Word-interleaved layouts (Hopper's Step B) place each stored element's
// bits through the interleave, run by run, and undo it on the loaded word.
//
//===----------------------------------------------------------------------===//
#include "microscale/Dialect/Microscale/IR/DerivedLayoutCodegen.h"

#include "microscale/Dialect/Microscale/IR/LayoutCodegen.h"
#include "microscale/Dialect/Microscale/IR/Microscale.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>
#include <mutex>
#include <tuple>

using namespace mlir;
using namespace mlir::microscale;
using namespace mlir::microscale::codegen;
namespace ref = ::microscale::ref;

namespace {

bool isPow2(int64_t x) { return x > 0 && llvm::isPowerOf2_64(x); }

/// One run as the emitters use it: index bits [lowBit, ...) of `dim`
/// (`extent` values, all the remaining bits when `top`), times `stride` in
/// the emitter's own unit (bytes, bits or index positions).
struct Piece {
  unsigned dim;
  unsigned lowBit;
  int64_t extent;
  bool top;
  int64_t stride;
};

/// The runs of `map` split at P slots: unit pieces (stride in units) and
/// slot pieces (stride in slots). Fails where a run below P does not divide
/// it evenly.
struct SplitRuns {
  SmallVector<Piece> unit, slot;
};

std::optional<SplitRuns> splitAtUnit(const ref::BlockBits &map, int64_t P) {
  SplitRuns split;
  for (const ref::IndexBitRun &run : map.runs) {
    if (run.stride % P == 0) {
      split.unit.push_back(
          {run.dim, run.lowBit, run.extent, run.top, run.stride / P});
    } else if (run.stride * run.extent <= P) {
      if (!isPow2(run.extent))
        return std::nullopt;
      split.slot.push_back(
          {run.dim, run.lowBit, run.extent, run.top, run.stride});
    } else {
      if (P % run.stride)
        return std::nullopt;
      const int64_t q = P / run.stride;
      if (!isPow2(q) || run.extent % q)
        return std::nullopt;
      split.slot.push_back({run.dim, run.lowBit, q, false, run.stride});
      split.unit.push_back({run.dim, run.lowBit + llvm::Log2_64(q),
                            run.extent / q, run.top, 1});
    }
  }
  return split;
}

/// Index arithmetic with shifts and masks, on top of Emitter.
class BitEmitter : public Emitter {
public:
  using Emitter::Emitter;

  Value shlIndex(Value x, int64_t s) {
    if (s == 0)
      return x;
    return arith::ShLIOp::create(builder(), location(), x, index(s));
  }
  Value shrIndex(Value x, int64_t s) {
    if (s == 0)
      return x;
    return arith::ShRUIOp::create(builder(), location(), x, index(s));
  }
  Value andIndex(Value x, int64_t mask) {
    return arith::AndIOp::create(builder(), location(), x, index(mask));
  }

  /// (x / divisor [% extent unless top]) * multiplier, as one mask and one
  /// shift where the three are powers of two.
  /// `bound`, where known (> 0), bounds x: a top digit's mask then keeps
  /// only the bits x can have, a small constant.
  Value digit(Value x, int64_t divisor, int64_t extent, bool top,
              int64_t multiplier, int64_t bound = 0) {
    if (!top && extent == 1)
      return Value();
    if (isPow2(divisor) && isPow2(multiplier) && (top || isPow2(extent))) {
      const int64_t low = llvm::Log2_64(divisor);
      const int64_t to = llvm::Log2_64(multiplier);
      int64_t topMask = -divisor;
      if (bound > 0 && bound < (int64_t(1) << 62))
        topMask &= static_cast<int64_t>(llvm::PowerOf2Ceil(bound)) - 1;
      Value bits = top ? (low == 0 ? x : andIndex(x, topMask))
                       : andIndex(x, (extent - 1) << low);
      return to >= low ? shlIndex(bits, to - low) : shrIndex(bits, low - to);
    }
    Value v = div(x, divisor);
    if (!top)
      v = rem(v, extent);
    return mul(v, multiplier);
  }

  Value sum(Value acc, Value term) {
    if (!term)
      return acc;
    return acc ? add(acc, term) : term;
  }
};

/// A 32-bit word bit map (bit b moves to map[b]) applied with one mask and
/// one shift per distance.
Value applyWordMap(Emitter &e, Value word, ArrayRef<int8_t> map) {
  std::map<int, uint32_t> masks;
  for (int b = 0; b < 32; ++b)
    masks[map[b] - b] |= uint32_t(1) << b;
  Value result;
  for (auto [distance, mask] : masks) {
    Value moved = e.band(word, static_cast<int32_t>(mask));
    moved = distance >= 0 ? e.shl(moved, distance) : e.shr(moved, -distance);
    result = result ? e.bor(result, moved) : moved;
  }
  return result;
}

/// Loading one element of a word-interleaved unit without undoing the whole
/// interleave: only the element's own bits are gathered.
///
/// The unit's slot p (0 <= p < P, P a power of two) is the sum of the slot
/// pieces, so each bit of p is one bit of the index. Code bit i of slot p
/// lies at T(p, i) in the unit. The slots are split into classes; in a class
/// every code bit moves by the same amount as p changes, linearly in the
/// class's free bits of p:
///   T(p, i) = T(p0, i) + sum_b coeff[b] * bit_b(p).
/// The first class (the one of slot 0) is the default; every later class is
/// a subcube of p (its fixed bits equal `fixedValue`) and is picked by a
/// select. Bits of p that move every class alike and upwards are "shared":
/// the unit is shifted by them once. Hopper's Step B: slots of byte 0-2 of a
/// word move by -3 bits per byte and 16 per nibble (the default class), byte
/// 3 is its own class.
struct SlotClass {
  uint64_t fixedMask = 0, fixedValue = 0;
  /// Per bit of p: the move of a free bit (0 for fixed ones).
  SmallVector<int64_t, 8> coeff;
  /// T(p0, i) for the class's first slot p0 (its free bits are zero).
  SmallVector<int64_t, 8> base;
  SmallVector<int64_t, 8> members;
};

struct InterleavedLoadPlan {
  unsigned slotBits = 0;
  SmallVector<int64_t, 8> shared; // per bit of p; 0 where not shared
  SmallVector<SlotClass, 4> classes;
};

std::optional<InterleavedLoadPlan> planInterleavedLoad(const ref::BlockBits &map,
                                                       int64_t P) {
  const unsigned bits = map.elementBits;
  if (!isPow2(P) || P * bits > 32)
    return std::nullopt;
  auto T = [&](int64_t p, unsigned i) -> int64_t {
    const int64_t f = p * bits + i;
    return (f / 32) * 32 + map.wordInterleave[f % 32];
  };
  InterleavedLoadPlan plan;
  plan.slotBits = llvm::Log2_64(P);
  SmallVector<bool, 8> remaining(P, true);
  for (int64_t p0 = 0; p0 < P; ++p0) {
    if (!remaining[p0])
      continue;
    SlotClass cls;
    cls.coeff.assign(plan.slotBits, 0);
    for (unsigned b = 0; b < plan.slotBits; ++b) {
      const int64_t q = p0 | (int64_t(1) << b);
      bool free = q != p0 && remaining[q];
      for (unsigned i = 0; free && i < bits; ++i)
        free = T(q, i) - T(q, 0) == T(p0, i) - T(p0, 0);
      if (free)
        cls.coeff[b] = T(q, 0) - T(p0, 0);
      else
        cls.fixedMask |= uint64_t(1) << b;
    }
    cls.fixedValue = p0 & cls.fixedMask;
    for (unsigned i = 0; i < bits; ++i)
      cls.base.push_back(T(p0, i));
    bool wholeSubcube = true;
    for (int64_t p = p0; p < P; ++p) {
      if ((p & cls.fixedMask) != cls.fixedValue)
        continue;
      int64_t move = 0;
      for (unsigned b = 0; b < plan.slotBits; ++b)
        move += ((p >> b) & 1) * cls.coeff[b];
      bool fits = remaining[p];
      for (unsigned i = 0; fits && i < bits; ++i)
        fits = T(p, i) == cls.base[i] + move;
      if (fits)
        cls.members.push_back(p);
      else
        wholeSubcube = false;
    }
    // Later classes are selected by their subcube, which must hold only
    // their own slots.
    if (!plan.classes.empty() && !wholeSubcube)
      return std::nullopt;
    for (int64_t p : cls.members)
      remaining[p] = false;
    plan.classes.push_back(std::move(cls));
    if (plan.classes.size() > 4)
      return std::nullopt;
  }
  plan.shared.assign(plan.slotBits, 0);
  for (unsigned b = 0; b < plan.slotBits; ++b) {
    const int64_t c = plan.classes.front().coeff[b];
    bool shared = c > 0;
    for (const SlotClass &cls : plan.classes)
      shared = shared && cls.coeff[b] == c;
    if (shared)
      plan.shared[b] = c;
  }
  return plan;
}

/// sum_b coeff[b] * bit_b(p) (index), p being the sum of the slot pieces.
/// Bits of one piece whose coefficients double with the bit are one digit.
Value emitSlotLinear(BitEmitter &e, ArrayRef<Piece> slotPieces,
                     ArrayRef<int64_t> coeff, ValueRange index) {
  Value sum;
  for (const Piece &p : slotPieces) {
    const unsigned from = llvm::Log2_64(p.stride);
    const unsigned width = llvm::Log2_64(p.extent);
    for (unsigned j = 0; j < width;) {
      const int64_t c = coeff[from + j];
      if (c == 0) {
        ++j;
        continue;
      }
      unsigned end = j + 1;
      while (end < width && coeff[from + end] == c * (int64_t(1) << (end - j)))
        ++end;
      const bool top = p.top && end == width;
      sum = e.sum(sum, e.digit(index[p.dim], int64_t(1) << (p.lowBit + j),
                               int64_t(1) << (end - j), top, c));
      j = end;
    }
  }
  return sum;
}

/// The code whose bit i lies at position[i] of `x` (the bits above it may
/// be anything): one mask and one shift per distance.
Value gatherCode(Emitter &e, Value x, ArrayRef<int64_t> position) {
  std::map<int64_t, uint32_t> masks;
  for (auto [i, at] : llvm::enumerate(position))
    masks[at - static_cast<int64_t>(i)] |= uint32_t(1) << i;
  Value result;
  for (auto [distance, mask] : masks) {
    Value moved = distance >= 0 ? e.shr(x, distance) : e.shl(x, -distance);
    moved = e.band(moved, mask);
    result = result ? e.bor(result, moved) : moved;
  }
  return result;
}

/// The element of slot p (given by the slot pieces of `index`) of the loaded
/// interleaved unit `word`, or null where the plan does not apply.
Value emitInterleavedElement(BitEmitter &e, const ref::BlockBits &map,
                             int64_t P, ArrayRef<Piece> slotPieces,
                             Value word, ValueRange index) {
  std::optional<InterleavedLoadPlan> plan = planInterleavedLoad(map, P);
  if (!plan)
    return Value();
  const unsigned bits = map.elementBits;
  // Per class: the class's own move (free bits that are not shared), its
  // least value over the class's slots, and where the code bits lie once
  // the unit is shifted right by the shared and the own move minus that.
  struct Emitted {
    SmallVector<int64_t, 8> own, position;
    int64_t least = 0;
  };
  SmallVector<Emitted, 4> emitted;
  for (const SlotClass &cls : plan->classes) {
    Emitted x;
    x.own.assign(plan->slotBits, 0);
    for (unsigned b = 0; b < plan->slotBits; ++b)
      if (!plan->shared[b])
        x.own[b] = cls.coeff[b];
    x.least = std::numeric_limits<int64_t>::max();
    for (int64_t p : cls.members) {
      int64_t move = 0;
      for (unsigned b = 0; b < plan->slotBits; ++b)
        move += ((p >> b) & 1) * x.own[b];
      x.least = std::min(x.least, move);
    }
    for (unsigned i = 0; i < bits; ++i) {
      x.position.push_back(cls.base[i] + x.least);
      if (x.position.back() < 0 || x.position.back() >= 32)
        return Value();
    }
    emitted.push_back(std::move(x));
  }
  if (Value lane = emitSlotLinear(e, slotPieces, plan->shared, index))
    word = e.shrV(word, e.toI32(lane));
  Value result;
  Value defaultMove;
  for (auto [k, cls] : llvm::enumerate(plan->classes)) {
    const Emitted &x = emitted[k];
    Value t = word;
    Value move = emitSlotLinear(e, slotPieces, x.own, index);
    if (move) {
      if (x.least)
        move = e.add(move, -x.least);
      t = e.shrV(t, e.toI32(move));
    }
    if (k == 0)
      defaultMove = move;
    Value code = gatherCode(e, t, x.position);
    if (k == 0) {
      result = code;
      continue;
    }
    // The class's subcube: its fixed bits of p. Where the default class's
    // own move is a one-to-one function of exactly those bits, compare it.
    uint64_t ownBits = 0;
    for (unsigned b = 0; b < plan->slotBits; ++b)
      if (emitted[0].own[b])
        ownBits |= uint64_t(1) << b;
    Value cond;
    if (defaultMove && ownBits == cls.fixedMask) {
      std::map<int64_t, int> seen;
      for (uint64_t v = 0; v < (uint64_t(1) << plan->slotBits); ++v) {
        if (v & ~ownBits)
          continue;
        int64_t m = 0;
        for (unsigned b = 0; b < plan->slotBits; ++b)
          m += ((v >> b) & 1) * emitted[0].own[b];
        ++seen[m];
      }
      bool oneToOne = llvm::all_of(seen, [](auto &kv) { return kv.second == 1; });
      if (oneToOne) {
        int64_t m = -emitted[0].least;
        for (unsigned b = 0; b < plan->slotBits; ++b)
          m += ((cls.fixedValue >> b) & 1) * emitted[0].own[b];
        cond = arith::CmpIOp::create(e.builder(), e.location(),
                                     arith::CmpIPredicate::eq, defaultMove,
                                     e.index(m));
      }
    }
    if (!cond) {
      SmallVector<int64_t, 8> select(plan->slotBits, 0);
      for (unsigned b = 0; b < plan->slotBits; ++b)
        if ((cls.fixedMask >> b) & 1)
          select[b] = int64_t(1) << b;
      Value fixed = emitSlotLinear(e, slotPieces, select, index);
      if (!fixed)
        fixed = e.index(0);
      cond = arith::CmpIOp::create(e.builder(), e.location(),
                                   arith::CmpIPredicate::eq, fixed,
                                   e.index(cls.fixedValue));
    }
    result = e.select(cond, code, result);
  }
  return result;
}

/// The unitBytes little-endian bytes at `offset` as an i32. Units of 2 and 4
/// bytes are one load (of alignment 1: the storage need not be aligned),
/// through a view of the byte buffer where it allows one, so that the
/// backend neither splits the unit into bytes nor has to rebuild it.
Value loadUnit(Emitter &e, Value storage, Value offset, int64_t unitBytes) {
  auto type = dyn_cast<MemRefType>(storage.getType());
  if ((unitBytes != 2 && unitBytes != 4) || !type || type.getRank() != 1 ||
      !type.getElementType().isInteger(8) || !type.getLayout().isIdentity())
    return e.loadBytes(storage, offset, unitBytes);
  OpBuilder &b = e.builder();
  Type wordType = b.getIntegerType(8 * unitBytes);
  auto viewType = MemRefType::get({1}, wordType, MemRefLayoutAttrInterface(),
                                  type.getMemorySpace());
  Value view = memref::ViewOp::create(b, e.location(), viewType, storage,
                                      offset, ValueRange());
  Value word = memref::LoadOp::create(b, e.location(), view,
                                      ValueRange{e.index(0)},
                                      /*nontemporal=*/false, llvm::Align(1));
  if (unitBytes == 4)
    return word;
  return arith::ExtUIOp::create(b, e.location(), b.getI32Type(), word);
}

/// `code` (elementBits wide) placed at slot `slot` of a unit, through the
/// word interleave when there is one: one mask and shift per run of bits
/// that stay together.
Value placeCode(Emitter &e, Value code, int64_t slot, unsigned bits,
                ArrayRef<int8_t> interleave) {
  if (interleave.empty())
    return e.shl(code, slot * bits);
  Value result;
  for (unsigned i = 0; i < bits;) {
    const int64_t from = slot * bits + i;
    const int word = from / 32;
    auto target = [&](unsigned k) {
      const int64_t f = slot * bits + k;
      return (f / 32) * 32 + interleave[f % 32];
    };
    unsigned end = i + 1;
    while (end < bits && (slot * bits + end) / 32 == word &&
           target(end) == target(i) + (end - i))
      ++end;
    Value piece = code;
    if (i != 0 || end != bits)
      piece = e.band(piece, ((int64_t(1) << (end - i)) - 1) << i);
    const int64_t distance = target(i) - i;
    piece = distance >= 0 ? e.shl(piece, distance) : e.shr(piece, -distance);
    result = result ? e.bor(result, piece) : piece;
    i = end;
  }
  return result;
}

std::string cacheKey(Attribute layout, ArrayRef<int64_t> shape, unsigned bits,
                     int64_t unitBytes) {
  std::string key;
  llvm::raw_string_ostream os(key);
  layout.print(os);
  os << '|' << bits << '|' << unitBytes;
  for (int64_t d : shape)
    os << 'x' << d;
  return key;
}

} // namespace

std::optional<ref::BlockBits>
mlir::microscale::codegen::deriveBlockBits(Attribute layout,
                                           ArrayRef<int64_t> shape,
                                           unsigned bits, int64_t unitBytes) {
  // The analysis probes and checks the reference map; conversions ask for
  // the same map once per element of a store unit.
  static std::mutex mutex;
  static std::map<std::string, std::optional<ref::BlockBits>> cache;
  const std::string key = cacheKey(layout, shape, bits, unitBytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second;
  }
  auto computed = [&]() -> std::optional<ref::BlockBits> {
    auto iface = dyn_cast<LayoutAttrInterface>(layout);
    if (!iface || unitBytes < 1 || unitBytes > 4 || (8 * unitBytes) % bits)
      return std::nullopt;
    auto reference = iface.buildReference(shape, bits, nullptr);
    if (!reference)
      return std::nullopt;
    auto map = ref::analyzeBlockBits(
        *reference, [&](const std::vector<int64_t> &padded) {
          return iface.buildReference(padded, bits, nullptr);
        });
    if (!map)
      return std::nullopt;
    // The interleave works on whole words, which the unit must hold.
    if (!map->wordInterleave.empty() && unitBytes != 4)
      return std::nullopt;
    if (!splitAtUnit(*map, 8 * unitBytes / bits))
      return std::nullopt;
    return map;
  }();
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(computed)).first->second;
}

Value mlir::microscale::codegen::emitDerivedLoadElement(
    OpBuilder &builder, Location loc, const ref::BlockBits &map,
    int64_t unitBytes, Value storage, ValueRange index) {
  BitEmitter e(builder, loc);
  const unsigned bits = map.elementBits;
  const int64_t P = 8 * unitBytes / bits;
  std::optional<SplitRuns> split = splitAtUnit(map, P);
  assert(split && "deriveBlockBits checked the split");
  // The unit's index times unitBytes: the backend sees a multiple of
  // unitBytes (on buffers it knows to be aligned, an aligned word). The
  // largest strides come first: elements read one after the other often
  // share them, and the sums then share their first terms.
  Value offset, shift;
  for (const Piece &p : llvm::reverse(split->unit))
    offset = e.sum(offset, e.digit(index[p.dim], int64_t(1) << p.lowBit,
                                   p.extent, p.top, p.stride,
                                   map.paddedShape[p.dim]));
  offset = offset ? e.mul(offset, unitBytes) : e.index(0);
  Value unit = loadUnit(e, storage, offset, unitBytes);
  if (!map.wordInterleave.empty())
    if (Value element =
            emitInterleavedElement(e, map, P, split->slot, unit, index))
      return element;
  for (const Piece &p : split->slot)
    shift = e.sum(shift, e.digit(index[p.dim], int64_t(1) << p.lowBit,
                                 p.extent, p.top, p.stride * bits));
  if (!map.wordInterleave.empty()) {
    SmallVector<int8_t> inverse(32);
    for (int b = 0; b < 32; ++b)
      inverse[map.wordInterleave[b]] = static_cast<int8_t>(b);
    unit = applyWordMap(e, unit, inverse);
  }
  if (shift)
    unit = e.shrV(unit, e.toI32(shift));
  if (P == 1 && bits == 8 * unitBytes)
    return unit;
  return e.band(unit, (int64_t(1) << bits) - 1);
}

Value mlir::microscale::codegen::emitDerivedStoreUnit(
    OpBuilder &builder, Location loc, const ref::BlockBits &map,
    int64_t unitBytes, ArrayRef<int64_t> shape, Value unit,
    LoadElementFn loadElement) {
  BitEmitter e(builder, loc);
  const unsigned bits = map.elementBits;
  const int64_t P = 8 * unitBytes / bits;
  const size_t rank = shape.size();
  std::optional<SplitRuns> split = splitAtUnit(map, P);
  assert(split && "deriveBlockBits checked the split");

  // The unit's share of each index dim, and the lowest index bit it can set:
  // slot offsets below that bit never carry into it.
  SmallVector<Value> shared(rank);
  SmallVector<int64_t> sharedAlignment(rank, int64_t(1) << 62);
  // Digits of strides that are not powers of two divide the quotient of the
  // previous such digit, so that the divisions form one chain.
  Value quotient = unit;
  int64_t quotientOf = 1;
  for (auto [i, p] : llvm::enumerate(split->unit)) {
    // The unit index is in bounds, so its highest digit needs no remainder.
    const bool highest = i + 1 == split->unit.size();
    Value digit;
    if (!isPow2(p.stride) && p.stride % quotientOf == 0) {
      quotient = e.div(quotient, p.stride / quotientOf);
      quotientOf = p.stride;
      digit = e.digit(quotient, 1, p.extent, highest, int64_t(1) << p.lowBit);
    } else {
      digit = e.digit(unit, p.stride, p.extent, highest,
                      int64_t(1) << p.lowBit);
    }
    shared[p.dim] = e.sum(shared[p.dim], digit);
    sharedAlignment[p.dim] =
        std::min(sharedAlignment[p.dim], int64_t(1) << p.lowBit);
  }

  // Whether dim d is in bounds when the unit adds `offset` to it; conditions
  // that hold for every slot are emitted once.
  SmallVector<Value> unitInBounds(rank);
  auto inBounds = [&](size_t d, int64_t offset) -> std::optional<Value> {
    if (map.paddedShape[d] == shape[d])
      return Value(); // always
    if (!shared[d])
      return offset < shape[d] ? std::optional<Value>(Value()) : std::nullopt;
    if (offset < sharedAlignment[d] && shape[d] % sharedAlignment[d] == 0) {
      if (!unitInBounds[d])
        unitInBounds[d] = e.lt(shared[d], shape[d]);
      return unitInBounds[d];
    }
    return e.lt(e.add(shared[d], offset), shape[d]);
  };

  Value result;
  for (int64_t s = 0; s < P; ++s) {
    SmallVector<int64_t> offsets(rank, 0);
    for (const Piece &p : split->slot)
      offsets[p.dim] += (s / p.stride % p.extent) << p.lowBit;
    SmallVector<Value> index(rank);
    SmallVector<bool> mayBeOutside(rank, false);
    Value valid;
    bool padding = false;
    for (size_t d = 0; d < rank; ++d) {
      index[d] = shared[d] ? e.add(shared[d], offsets[d])
                           : e.index(offsets[d]);
      std::optional<Value> cond = inBounds(d, offsets[d]);
      if (!cond) {
        padding = true;
        break;
      }
      if (*cond) {
        valid = valid ? e.andI1(valid, *cond) : *cond;
        mayBeOutside[d] = true;
      }
    }
    if (padding)
      continue;
    // Where the element is padding, the dims that may be outside the tensor
    // read index 0 instead (the others are inside), and the code is 0.
    Value code;
    if (valid) {
      Value zero = e.index(0);
      for (size_t d = 0; d < rank; ++d)
        if (mayBeOutside[d] || P == 1)
          index[d] = e.select(valid, index[d], zero);
      code = e.select(valid, loadElement(builder, loc, index), e.i32(0));
    } else {
      code = loadElement(builder, loc, index);
    }
    Value placed = placeCode(e, code, s, bits, map.wordInterleave);
    result = result ? e.bor(result, placed) : placed;
  }
  return result ? result : e.i32(0);
}

Value mlir::microscale::codegen::emitLoadElementFromReference(
    Attribute layout, OpBuilder &builder, Location loc, Value storage,
    ArrayRef<int64_t> shape, unsigned bits, ValueRange index) {
  if (llvm::is_contained(shape, 0))
    return Emitter(builder, loc).i32(0);
  const int64_t unitBytes =
      cast<LayoutAttrInterface>(layout).getStoreUnitBytes(bits);
  std::optional<ref::BlockBits> map =
      deriveBlockBits(layout, shape, bits, unitBytes);
  if (!map)
    llvm::report_fatal_error("layout map is not a permutation of index bits; "
                             "the layout must implement emitLoadElement");
  return emitDerivedLoadElement(builder, loc, *map, unitBytes, storage, index);
}

Value mlir::microscale::codegen::emitStoreUnitFromReference(
    Attribute layout, OpBuilder &builder, Location loc, ArrayRef<int64_t> shape,
    unsigned bits, Value unit, LoadElementFn loadElement) {
  if (llvm::is_contained(shape, 0))
    return Emitter(builder, loc).i32(0);
  const int64_t unitBytes =
      cast<LayoutAttrInterface>(layout).getStoreUnitBytes(bits);
  std::optional<ref::BlockBits> map =
      deriveBlockBits(layout, shape, bits, unitBytes);
  if (!map)
    llvm::report_fatal_error("layout map is not a permutation of index bits; "
                             "the layout must implement emitStoreUnit");
  return emitDerivedStoreUnit(builder, loc, *map, unitBytes, shape, unit,
                              loadElement);
}
