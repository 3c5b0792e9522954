// A small ring buffer, used by `quickfill demo sample.cpp` to type through.
#include <cstddef>
#include <optional>
#include <vector>

template <class T>
class ring_buffer {
 public:
  explicit ring_buffer(std::size_t capacity) : data_(capacity) {}

  bool push(const T& value) {
    if (size_ == data_.size()) return false;
    data_[(head_ + size_) % data_.size()] = value;
    ++size_;
    return true;
  }

  std::optional<T> pop() {
    if (size_ == 0) return std::nullopt;
    T value = data_[head_];
    head_ = (head_ + 1) % data_.size();
    --size_;
    return value;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::vector<T> data_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

int main() {
  ring_buffer<int> rb(4);
  for (int i = 0; i < 6; ++i) rb.push(i);
  int sum = 0;
  while (auto v = rb.pop()) sum += *v;
  return sum == 6 ? 0 : 1;
}
