//===- Layout.h - Physical layouts of packed microscaling data --*- C++ -*-===//
//
// A layout maps each element of a logical tensor (of 4-, 6- or 8-bit codes)
// to bits of a physical byte buffer. The buffer is described by its storage
// shape: a dense row-major shape in memory order (outermost first, padding
// included, bytes along the innermost dim). Its byte count is the product.
//
// A layout implements one function, `locate`, giving the absolute bit offset
// (byte * 8 + bit) of every bit of one logical element. Everything else
// (store, load, conversion between layouts) is derived from it here, so a new
// layout is correct as soon as its `locate` is. Padding bits are those no
// element maps to; `store` writes them as zeros.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_REFERENCE_LAYOUT_H
#define MICROSCALE_REFERENCE_LAYOUT_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace microscale::ref {

class Layout {
public:
  Layout(std::vector<int64_t> logicalShape, unsigned elementBits)
      : logicalShape(std::move(logicalShape)), elementBits(elementBits) {}
  virtual ~Layout();

  const std::vector<int64_t> &getLogicalShape() const { return logicalShape; }
  unsigned getElementBits() const { return elementBits; }
  int64_t getNumElements() const;

  /// Dense physical shape in memory order, padding included.
  virtual std::vector<int64_t> getStorageShape() const = 0;
  int64_t getStorageBytes() const;

  /// Writes the absolute bit offset of bit i (LSB first) of the element at
  /// `index` (rank entries) to bitOffsets[i], for i < elementBits.
  virtual void locate(const int64_t *index, int64_t *bitOffsets) const = 0;

  /// Layouts that interleave the bits of every little-endian 32-bit word
  /// (Hopper's Step B) describe that interleave separately, so that code
  /// generators can move whole nibbles first and interleave words after:
  /// `locate` equals `locateBeforeInterleave` with each offset's bit within
  /// its word w*32 + b replaced by w*32 + interleave[b]. Layouts without one
  /// return null, and their `locateBeforeInterleave` is `locate`.
  virtual const int8_t *getWordInterleave() const { return nullptr; }
  virtual void locateBeforeInterleave(const int64_t *index,
                                      int64_t *bitOffsets) const {
    locate(index, bitOffsets);
  }

  /// Scatters row-major codes (one per byte, low bits used) into `storage`,
  /// which must hold getStorageBytes() bytes. Padding is zeroed.
  void store(const uint8_t *codes, uint8_t *storage) const;
  /// Gathers row-major codes from `storage`.
  void load(const uint8_t *storage, uint8_t *codes) const;

protected:
  std::vector<int64_t> logicalShape;
  unsigned elementBits;
};

/// Converts storage bytes of `from` into storage bytes of `to` (same logical
/// shape and element width). `out` must hold to.getStorageBytes() bytes.
void convert(const Layout &from, const uint8_t *in, const Layout &to,
             uint8_t *out);

/// Factories return nullptr and set `error` (when non-null) for shapes or
/// parameters the layout does not support, with Triton's wording where Triton
/// raises for the same case.

/// Triton's StridedLayout(major_dim): packed along `majorDim` (4-bit: two
/// elements per byte, even element in the low nibble; 6-bit: four elements
/// in three bytes, element j at bits 6j..6j+5 of a little-endian 24-bit
/// group; 8-bit: one per byte), with `majorDim` the fastest-varying dim and
/// the others row-major on top. majorDim may be negative (counted from the
/// end); -1 is the canonical form.
std::unique_ptr<Layout> makeStridedLayout(std::vector<int64_t> logicalShape,
                                          unsigned elementBits,
                                          int64_t majorDim,
                                          std::string *error = nullptr);

} // namespace microscale::ref

#endif // MICROSCALE_REFERENCE_LAYOUT_H
