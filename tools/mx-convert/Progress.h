//===- Progress.h - mx-convert's progress display ---------------*- C++ -*-===//
//
// What a user watching a long conversion sees on stderr: the tensor being
// worked on (i of N, its name and size), the rate so far and the time left,
// redrawn in place on a terminal, one line per tensor elsewhere (a log), and
// a summary at the end. Off unless asked for or on a terminal.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_TOOLS_MXCONVERT_PROGRESS_H
#define MICROSCALE_TOOLS_MXCONVERT_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace microscale::convert {

/// 1.2 kB, 265.4 MB, 2.71 GB: decimal units, as `ls -h --si` and disks do.
std::string formatBytes(uint64_t bytes);

class Progress {
public:
  /// `tensors` tensors of `bytes` input bytes in all. `enabled`: show
  /// anything; `terminal`: redraw one line in place.
  Progress(bool enabled, bool terminal, size_t tensors, uint64_t bytes);

  bool isEnabled() const { return enabled; }
  /// Tensor `name` (`bytes` input bytes) begins; `action` is what happens
  /// to it ("convert", "copy").
  void begin(llvm::StringRef name, uint64_t bytes, llvm::StringRef action);
  /// `fraction` of the current tensor is done (a terminal redraws, at most
  /// ten times a second).
  void advance(double fraction);
  /// The current tensor is done.
  void end();
  /// The closing line: `converted` tensors converted and `copied` copied,
  /// `written` bytes written to `out`.
  void summary(llvm::StringRef out, size_t converted, size_t copied,
               uint64_t written);

private:
  void draw(bool force);
  double elapsed() const;

  bool enabled, terminal;
  size_t tensors, index = 0;
  uint64_t totalBytes, doneBytes = 0, currentBytes = 0;
  double fraction = 0;
  std::string name, action;
  std::chrono::steady_clock::time_point start, tensorStart, lastDraw;
};

} // namespace microscale::convert

#endif
