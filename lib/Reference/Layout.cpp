//===- Layout.cpp - Generic store/load/convert over Layout::locate --------===//
#include "microscale/Reference/Layout.h"

#include <cstring>

namespace microscale::ref {

Layout::~Layout() = default;

int64_t Layout::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : logicalShape)
    n *= d;
  return n;
}

int64_t Layout::getStorageBytes() const {
  int64_t n = 1;
  for (int64_t d : getStorageShape())
    n *= d;
  return n;
}

namespace {
/// Calls fn(linearIndex, index) for every logical element in row-major order.
template <typename Fn>
void forEachIndex(const std::vector<int64_t> &shape, Fn fn) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  if (total == 0)
    return;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(linear, index.data());
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}
} // namespace

void Layout::store(const uint8_t *codes, uint8_t *storage) const {
  // An empty tensor may come with no buffer at all (memset(nullptr, 0, 0)
  // is undefined).
  if (getStorageBytes() == 0)
    return;
  std::memset(storage, 0, static_cast<size_t>(getStorageBytes()));
  int64_t bits[8];
  forEachIndex(logicalShape, [&](int64_t linear, const int64_t *index) {
    locate(index, bits);
    for (unsigned b = 0; b < elementBits; ++b)
      if ((codes[linear] >> b) & 1)
        storage[bits[b] >> 3] |= static_cast<uint8_t>(1u << (bits[b] & 7));
  });
}

void Layout::load(const uint8_t *storage, uint8_t *codes) const {
  int64_t bits[8];
  forEachIndex(logicalShape, [&](int64_t linear, const int64_t *index) {
    locate(index, bits);
    uint8_t code = 0;
    for (unsigned b = 0; b < elementBits; ++b)
      code |= static_cast<uint8_t>(((storage[bits[b] >> 3] >> (bits[b] & 7)) &
                                    1)
                                   << b);
    codes[linear] = code;
  });
}

void convert(const Layout &from, const uint8_t *in, const Layout &to,
             uint8_t *out) {
  std::vector<uint8_t> codes(static_cast<size_t>(from.getNumElements()));
  from.load(in, codes.data());
  to.store(codes.data(), out);
}

} // namespace microscale::ref
