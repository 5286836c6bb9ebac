//===- OutputFile.h - Write a tool's output without clobbering --*- C++ -*-===//
//
// How mx-convert writes OUT:
//   - `-` is standard output;
//   - an existing character or block device or FIFO is opened (never
//     created) and written in place: replacing /dev/null or a pipe someone
//     reads from with a regular file would be wrong;
//   - otherwise (a regular file, or nothing yet) the bytes go to a
//     temporary created next to OUT under a unique name (O_EXCL, so a link
//     planted there is never followed), removed on SIGINT/SIGTERM/SIGHUP
//     (a second signal held until the removal is done) and on every
//     error, and renamed over OUT only once complete. A symbolic link at
//     OUT is replaced, never written through.
// Anything else (a directory, a socket) is refused. Nothing reaches OUT
// before commit(), so a failed run leaves OUT as it was.
//
//===----------------------------------------------------------------------===//
#ifndef MICROSCALE_TOOLS_OUTPUTFILE_H
#define MICROSCALE_TOOLS_OUTPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace microscale {

class OutputFile {
public:
  /// Prepares `path` for writing (creates the temporary, or opens the
  /// device); says why it cannot.
  static llvm::Expected<OutputFile> open(llvm::StringRef path);

  OutputFile(OutputFile &&other);
  OutputFile &operator=(OutputFile &&) = delete;
  /// Discards the output unless it was committed.
  ~OutputFile();

  llvm::StringRef getPath() const { return path; }
  /// Where the bytes go (the temporary, the device or stdout). Write errors
  /// are reported by commit().
  llvm::raw_fd_ostream &os() { return *stream; }
  /// The descriptor os() writes to, for copies the kernel makes
  /// (copy_file_range): flush os() first.
  int getFD() const { return fd; }

  /// Flushes, checks for I/O errors and moves the temporary over OUT. On
  /// error the temporary is removed and the message names OUT and the cause.
  llvm::Error commit();
  /// The first half of commit(): flushes, closes and checks for I/O errors,
  /// leaving only the rename. A tool writing several files (a sharded
  /// checkpoint) finishes all of them before committing any, so that an
  /// I/O error leaves no OUT replaced.
  llvm::Error finish();
  /// Removes the temporary, if any.
  void discard();

private:
  OutputFile() = default;

  std::string path;
  std::optional<std::string> temporary; // its name, until renamed or removed
  std::unique_ptr<llvm::raw_fd_ostream> stream;
  bool done = false;
  bool finished = false;
  int fd = -1;
};

} // namespace microscale

#endif
