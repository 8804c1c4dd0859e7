/// @file uninitialized_vector.hpp
/// @brief std::vector whose resize leaves new elements of trivial types unset: for large host
/// buffers that are written, by the threads that use them, before anything reads them.
///
/// Why: resize(n) on a std::vector<double> zero-fills, and so page-faults, the whole buffer on the
/// calling thread before the OpenMP threads write it again. For the section buffers of a survey
/// (tens of MiB per drain) that serial pass was a visible share of the run (docs/performance.md,
/// "The section buffers without zero-filling").
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace vigor::host {

/// std::allocator whose value-initialisation is default-initialisation: vector::resize(n) leaves
/// arithmetic elements unset; every other construction is as usual.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };

  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// A host buffer sized without being written: fill every element before reading it.
template <class T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace vigor::host
