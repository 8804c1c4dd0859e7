#include "host/output/output_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "host/errors.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

bool holds_anything(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !(fs::is_directory(p, ec) && fs::is_empty(p, ec));
}

/// The target as given, lexically normalised, without a trailing separator ("res/" is "res").
fs::path normalised(const std::string& target) {
  fs::path p = fs::path(target).lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

/// Renames `from` to `to` unless `to` exists (atomically where the system can). Returns false
/// without touching anything when `to` exists.
bool rename_no_replace(const fs::path& from, const fs::path& to, std::error_code& ec) {
  ec.clear();
#if defined(RENAME_NOREPLACE)
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS) {
    ec = std::error_code(errno, std::generic_category());
    return true;
  }
  // The file system cannot rename without replacing: check, then rename.
#endif
  if (fs::exists(fs::symlink_status(to, ec))) return false;
  fs::rename(from, to, ec);
  return true;
}

}  // namespace

void OutputDir::check_target(const std::string& target) {
  std::error_code ec;
  const std::string shown = "\"" + target + "\"";
  // symlink_status: a dangling or looping symbolic link exists too (and is not a directory).
  if (fs::exists(fs::symlink_status(target_, ec)) && !fs::is_directory(target_, ec))
    throw JobError("output.dir", shown + " exists and is not a directory");
  if (holds_anything(target_) && !force_)
    throw JobError("output.dir",
                   shown + " already exists and is not empty; pass --force to replace it");
  target_was_empty_dir_ = fs::is_directory(target_, ec);
  const std::string leaf = target_.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..")
    throw JobError("output.dir", shown + " does not name a directory to create");
}

OutputDir::OutputDir(const std::string& target, bool force, fs::path temp)
    : target_(normalised(target)), temp_(std::move(temp)), force_(force) {
  kept_ = true;  // it holds a checkpoint: never removed, whatever fails
  check_target(target);
}

void OutputDir::remove_scratch(const fs::path& temp) noexcept {
  std::error_code ec;
  for (const char* f :
       {"hits.spill", "chunks.bin", "checkpoint.bin.tmp", "checkpoint.bin", ".lock"})
    fs::remove(temp / f, ec);
}

OutputDir::OutputDir(const std::string& target, bool force)
    : target_(normalised(target)), force_(force) {
  check_target(target);
  std::error_code ec;
  const std::string leaf = target_.filename().string();
  fs::path parent = target_.parent_path();
  if (parent.empty()) parent = ".";
  // The ancestors that do not exist yet are created here, and removed again if the run fails. A
  // dangling or looping symbolic link on the way is not created here: never removed.
  for (fs::path p = parent; !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    created_.push_back(p);
    if (p == p.parent_path()) break;
  }
  try {
    fs::create_directories(parent, ec);
    if (ec)
      throw JobError("output.dir", "cannot create \"" + parent.string() + "\": " + ec.message());
    temp_ = parent / ("." + leaf + ".partial-" + std::to_string(::getpid()));
    fs::remove_all(temp_, ec);
    if (!fs::create_directory(temp_, ec) || ec)
      throw JobError("output.dir", "cannot write in \"" + parent.string() + "\": " +
                                       (ec ? ec.message() : std::string("permission denied")));
  } catch (...) {
    discard();
    throw;
  }
}

OutputDir::~OutputDir() {
  if (!committed_ && !kept_) discard();
}

void OutputDir::discard() noexcept {
  std::error_code ec;
  if (!temp_.empty()) fs::remove_all(temp_, ec);
  // Deepest first; fs::remove leaves a directory that something else has put files into.
  for (const auto& p : created_) fs::remove(p, ec);
}

void OutputDir::commit() {
  std::error_code ec;
  std::string shown = target_.string();  // quoted (appended, not "\"" + s: GCC 12 -Wrestrict)
  shown.insert(shown.begin(), '"');
  shown.push_back('"');
  if (!force_ && !target_was_empty_dir_) {
    // Nothing was there at the start: never replace what appeared since.
    if (!rename_no_replace(temp_, target_, ec))
      throw std::runtime_error(shown +
                               " appeared during the run and is left untouched (pass --force to "
                               "replace it); the results were discarded");
    if (ec) throw std::runtime_error("cannot move results into " + shown + ": " + ec.message());
    committed_ = true;
    return;
  }
  if (!force_ && holds_anything(target_))
    throw std::runtime_error(shown +
                             " was filled during the run and is left untouched (pass --force to "
                             "replace it); the results were discarded");
  fs::path old;
  if (fs::exists(fs::symlink_status(target_, ec))) {
    // Move the previous results aside first, so a failure below still leaves one complete copy.
    old = target_;
    old += ".old-" + std::to_string(::getpid());
    fs::rename(target_, old, ec);
    if (ec) throw std::runtime_error("cannot replace " + target_.string() + ": " + ec.message());
  }
  fs::rename(temp_, target_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, target_, ec);
    throw std::runtime_error("cannot move results into " + target_.string() + ": " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace vigor::host
