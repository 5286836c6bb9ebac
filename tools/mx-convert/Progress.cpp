//===- Progress.cpp - mx-convert's progress display -----------------------===//
#include "Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace microscale::convert;
using Clock = std::chrono::steady_clock;

std::string microscale::convert::formatBytes(uint64_t bytes) {
  static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double value = bytes;
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.1f %s", value, units[unit]);
  return text;
}

/// 7 s, 1:05, 1:02:03.
static std::string formatSeconds(double seconds) {
  long s = std::lround(std::max(seconds, 0.0));
  std::string text;
  llvm::raw_string_ostream os(text);
  if (s < 60)
    os << s << " s";
  else if (s < 3600)
    os << llvm::format("%ld:%02ld", s / 60, s % 60);
  else
    os << llvm::format("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

Progress::Progress(bool enabled, bool terminal, size_t tensors, uint64_t bytes)
    : enabled(enabled), terminal(terminal), tensors(tensors), totalBytes(bytes),
      start(Clock::now()) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Progress::begin(llvm::StringRef tensorName, uint64_t bytes,
                     llvm::StringRef what) {
  ++index;
  name = tensorName.str();
  action = what.str();
  currentBytes = bytes;
  fraction = 0;
  tensorStart = Clock::now();
  if (terminal)
    draw(/*force=*/true);
}

void Progress::advance(double done) {
  fraction = done;
  if (terminal)
    draw(/*force=*/false);
}

void Progress::draw(bool force) {
  if (!enabled)
    return;
  auto now = Clock::now();
  if (!force && now - lastDraw < std::chrono::milliseconds(100))
    return;
  lastDraw = now;
  const double seconds = elapsed();
  const double done = doneBytes + fraction * currentBytes;
  const int width = std::to_string(tensors).size();
  auto &os = llvm::errs();
  os << "\r" << llvm::format("[%*zu/%zu] ", width, index, tensors) << action
     << " " << name << " (" << formatBytes(currentBytes) << ")";
  // A rate (and a time left) only once there is one to speak of: the first
  // tensors are small, and the first conversion waits for its compiler.
  if (seconds > 1 && done > 0) {
    const double rate = done / seconds;
    os << ", " << formatBytes(rate) << "/s, ETA "
       << formatSeconds((totalBytes - done) / rate);
  }
  os << "\x1b[K"; // clear what a longer line left
  os.flush();
}

void Progress::end() {
  doneBytes += currentBytes;
  fraction = 0;
  if (!enabled || terminal)
    return;
  // A log: one line per tensor.
  const double tensorSeconds =
      std::chrono::duration<double>(Clock::now() - tensorStart).count();
  const double seconds = elapsed();
  const double rate = seconds > 0 ? doneBytes / seconds : 0;
  llvm::errs() << llvm::format("mx-convert: [%zu/%zu] ", index, tensors)
               << action << " " << name << ", " << formatBytes(currentBytes)
               << llvm::format(" in %.2f s", tensorSeconds);
  if (rate > 0)
    llvm::errs() << ", " << formatBytes(rate) << "/s so far, ETA "
                 << formatSeconds((totalBytes - doneBytes) / rate);
  llvm::errs() << "\n";
}

void Progress::summary(llvm::StringRef out, size_t converted, size_t copied,
                       uint64_t written) {
  if (!enabled)
    return;
  const double seconds = elapsed();
  auto &os = llvm::errs();
  if (terminal)
    os << "\r\x1b[K";
  os << "mx-convert: wrote " << out << ": " << converted << " tensor"
     << (converted == 1 ? "" : "s") << " converted, " << copied << " copied, "
     << formatBytes(written) << llvm::format(" in %.2f s", seconds);
  if (seconds > 0)
    os << " (" << formatBytes(written / seconds) << "/s)";
  os << "\n";
}
