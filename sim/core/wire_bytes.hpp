#pragma once
// Values as bytes and back, exactly (every double's bits), for what a child process sends its parent
// (sim/core/child_process.hpp) when text would lose bits or cost too much: trivially copyable values
// as their bytes, strings and vectors with their length first. Both ends run the same build on the
// same machine, so byte order and layout are the same; a reader past the end is a SimulationError.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sim/core/error.hpp"

namespace clustersim {

class WireWriter {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(const std::string& text) {
    put(static_cast<std::uint64_t>(text.size()));
    bytes_.append(text);
  }
  template <typename T>
  void put(const std::vector<T>& items) {
    put(static_cast<std::uint64_t>(items.size()));
    if constexpr (std::is_trivially_copyable_v<T>) {
      bytes_.append(reinterpret_cast<const char*>(items.data()), items.size() * sizeof(T));
    } else {
      for (const T& item : items)
        put(item);
    }
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  void get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(&value, take(sizeof value), sizeof value);
  }
  void get(std::string& text) {
    const std::size_t n = count(1);
    text.assign(take(n), n);
  }
  template <typename T>
  void get(std::vector<T>& items) {
    const std::size_t n = count(std::is_trivially_copyable_v<T> ? sizeof(T) : 1);
    items.resize(n);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (n > 0) std::memcpy(static_cast<void*>(items.data()), take(n * sizeof(T)), n * sizeof(T));
    } else {
      for (T& item : items)
        get(item);
    }
  }
  template <typename T>
  T get() {
    T value{};
    get(value);
    return value;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  // A length, checked against the bytes left (each item at least `item_bytes`).
  std::size_t count(std::size_t item_bytes) {
    const auto n = get<std::uint64_t>();
    if (n > (bytes_.size() - at_) / item_bytes) throw SimulationError("wire bytes: a length past the end");
    return static_cast<std::size_t>(n);
  }
  const char* take(std::size_t n) {
    if (n > bytes_.size() - at_) throw SimulationError("wire bytes: read past the end");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }

  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace clustersim
