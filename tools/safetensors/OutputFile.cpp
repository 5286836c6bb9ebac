//===- OutputFile.cpp - Write a tool's output without clobbering ----------===//
#include "OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"

#include <csignal>
#include <iterator>
#include <unistd.h>

using namespace microscale;
namespace fs = llvm::sys::fs;

static llvm::Error cannotWrite(llvm::StringRef path, std::error_code ec) {
  return llvm::createStringError(ec, "cannot write '" + path +
                                         "': " + ec.message());
}

static llvm::Error cannotWrite(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cannot write '" + path + "': " + why);
}

namespace {
/// The signals that remove a temporary: held while one is created and
/// registered, and while the removal runs.
constexpr int kInterrupts[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t interruptSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kInterrupts)
    sigaddset(&set, sig);
  return set;
}

/// Holds kInterrupts back for its lifetime (they are delivered when it
/// ends): a temporary created under it is registered for removal before
/// any of them can run the removal, so that no signal lands between the
/// create and the registration and leaves the file behind.
class InterruptsHeld {
public:
  InterruptsHeld() {
    sigset_t held = interruptSet();
    pthread_sigmask(SIG_BLOCK, &held, &previous);
  }
  ~InterruptsHeld() { pthread_sigmask(SIG_SETMASK, &previous, nullptr); }
  InterruptsHeld(const InterruptsHeld &) = delete;
  InterruptsHeld &operator=(const InterruptsHeld &) = delete;

private:
  sigset_t previous;
};
} // namespace

/// SIGINT, SIGTERM and SIGHUP: the registered temporaries removed, then
/// the signal's default action. Every one of the three stays blocked
/// while it runs, so that a second signal (a supervisor's TERM to the
/// process and its group, a second Ctrl-C) waits until the files are gone.
/// LLVM's own handler restores the default actions and unblocks every
/// signal before it removes the files: a second signal in that window
/// killed the process and left its temporary behind.
static void removeTemporariesAndExit(int sig) {
  llvm::sys::RunInterruptHandlers();
  std::signal(sig, SIG_DFL);
  // Pending until the handler returns and the mask is restored.
  std::raise(sig);
}

namespace {
/// Which of kInterrupts the process was started with ignored (nohup's
/// SIGHUP, a background job's SIGINT), read before main runs: by the time
/// a temporary is created, LLVM's own handlers (InitLLVM's, or
/// RemoveFileOnSignal's) have replaced what the process inherited.
struct InheritedIgnores {
  bool ignored[std::size(kInterrupts)] = {};
  InheritedIgnores() {
    for (size_t i = 0; i < std::size(kInterrupts); ++i) {
      struct sigaction current;
      ignored[i] = sigaction(kInterrupts[i], nullptr, &current) == 0 &&
                   current.sa_handler == SIG_IGN;
    }
  }
};
const InheritedIgnores inheritedIgnores;
} // namespace

/// Registers `name` for removal on a signal, and the first time installs
/// removeTemporariesAndExit for SIGINT, SIGTERM and SIGHUP in place of
/// LLVM's handlers; a signal the process was started with ignored stays
/// ignored.
static void removeOnInterrupt(const std::string &name) {
  llvm::sys::RemoveFileOnSignal(name);
  static bool installed = false;
  if (installed)
    return;
  installed = true;
  struct sigaction action = {};
  action.sa_handler = removeTemporariesAndExit;
  action.sa_mask = interruptSet();
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (size_t i = 0; i < std::size(kInterrupts); ++i)
    sigaction(kInterrupts[i], inheritedIgnores.ignored[i] ? &ignore : &action,
              nullptr);
}

static bool isDeviceOrFIFO(fs::file_type type) {
  return type == fs::file_type::character_file ||
         type == fs::file_type::block_file || type == fs::file_type::fifo_file;
}

llvm::Expected<OutputFile> OutputFile::open(llvm::StringRef path) {
  OutputFile out;
  out.path = path.str();
  if (path == "-") {
    out.fd = STDOUT_FILENO;
    out.stream = std::make_unique<llvm::raw_fd_ostream>(STDOUT_FILENO,
                                                        /*shouldClose=*/false);
    return std::move(out);
  }

  // What is at OUT now (through links: a link to /dev/null is written like
  // /dev/null).
  fs::file_status status;
  std::error_code ec = fs::status(path, status, /*Follow=*/true);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return cannotWrite(path, ec);
  const fs::file_type type = ec ? fs::file_type::file_not_found : status.type();
  if (type == fs::file_type::directory_file)
    return cannotWrite(path, "it is a directory");

  if (isDeviceOrFIFO(type)) {
    // Open what is there, never create: if it was replaced by a regular
    // file since, that is refused below rather than truncated.
    int fd;
    if ((ec = fs::openFileForWrite(path, fd, fs::CD_OpenExisting, fs::OF_None)))
      return cannotWrite(path, ec);
    fs::file_status opened;
    if ((ec = fs::status(fd, opened)) || !isDeviceOrFIFO(opened.type())) {
      ::close(fd);
      return ec ? cannotWrite(path, ec)
                : cannotWrite(path, "it changed while being opened");
    }
    out.fd = fd;
    out.stream =
        std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
    return std::move(out);
  }
  if (type != fs::file_type::regular_file &&
      type != fs::file_type::file_not_found)
    return cannotWrite(path, "it is neither a regular file, a device nor a "
                             "FIFO");

  // A unique name next to OUT (so that the rename stays on one file
  // system), created with O_CREAT | O_EXCL: a link planted there fails the
  // create, it is never followed. It is removed on SIGINT and SIGTERM.
  // (fs::TempFile does the same, but its model turns every '%' of OUT's
  // path, directories included, into a random digit.)
  for (int attempt = 0;; ++attempt) {
    std::string name = (path + ".mx-convert-" +
                        llvm::utohexstr(llvm::sys::Process::GetRandomNumber()))
                           .str();
    int fd;
    InterruptsHeld held;
    ec = fs::openFileForWrite(name, fd, fs::CD_CreateNew, fs::OF_None);
    if (!ec) {
      removeOnInterrupt(name);
      out.temporary = name;
      out.fd = fd;
      out.stream =
          std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
      return std::move(out);
    }
    if (ec != std::errc::file_exists || attempt == 100)
      return cannotWrite(path, "cannot create a temporary next to it: " +
                                   ec.message());
  }
}

OutputFile::OutputFile(OutputFile &&other)
    : path(std::move(other.path)), temporary(std::move(other.temporary)),
      stream(std::move(other.stream)), done(other.done),
      finished(other.finished), fd(other.fd) {
  other.temporary.reset();
  other.done = true;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (done)
    return;
  done = true;
  if (stream) {
    // A stream destroyed with an error pending aborts the process ("IO
    // failure on output stream"): the error was reported, or is moot.
    if (path == "-")
      stream->flush(); // stdout is not ours to close
    else
      stream->close();
    stream->clear_error();
    stream.reset();
  }
  if (temporary) {
    fs::remove(*temporary);
    llvm::sys::DontRemoveFileOnSignal(*temporary);
  }
}

llvm::Error OutputFile::finish() {
  assert(!done && "committed or discarded twice");
  if (finished)
    return llvm::Error::success();
  // Flushed, and closed unless it is stdout: a file system may report a
  // full disk only then.
  if (path == "-")
    stream->flush();
  else
    stream->close();
  if (stream->has_error()) {
    std::error_code ec = stream->error();
    discard();
    return cannotWrite(
        path == "-" ? llvm::StringRef("<stdout>") : llvm::StringRef(path), ec);
  }
  stream.reset();
  finished = true;
  return llvm::Error::success();
}

llvm::Error OutputFile::commit() {
  if (llvm::Error error = finish())
    return error;
  if (!temporary) {
    done = true;
    return llvm::Error::success();
  }
  // rename() replaces OUT's directory entry (a link there included)
  // atomically.
  if (std::error_code ec = fs::rename(*temporary, path)) {
    discard();
    return cannotWrite(path, ec);
  }
  llvm::sys::DontRemoveFileOnSignal(*temporary);
  done = true;
  return llvm::Error::success();
}
