#include "golden/n3w_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/error.h"
#include "base/file_util.h"
#include "base/rng.h"

namespace n3 {

namespace {

// "N3W\0" then \r\n\x1a\n: like PNG's signature, it catches files mangled by
// newline translation or truncated at a DOS end-of-file byte.
constexpr uint8_t kMagic[8] = {'N', '3', 'W', 0, '\r', '\n', 0x1a, '\n'};
constexpr uint64_t kHeaderHashAt = 56;  // byte offset of the header checksum field
const char* const kRemake = "re-create it with 'n3 convert' or 'n3 synth'";

uint64_t align_up(uint64_t v) { return (v + kN3wAlign - 1) / kN3wAlign * kN3wAlign; }

uint8_t kind_code(WeightKind k) { return k == WeightKind::Matrix ? 0 : k == WeightKind::FloatMatrix ? 1 : 2; }
const char* kind_name(WeightKind k) {
  return k == WeightKind::Matrix ? "matrix" : k == WeightKind::FloatMatrix ? "float matrix" : "vector";
}

// Little-endian field access into a byte buffer (the file format is LE).
template <typename T>
void put(std::string& b, uint64_t at, T v) {
  std::memcpy(&b[at], &v, sizeof(T));
}
template <typename T>
T get(const uint8_t* p, uint64_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof(T));
  return v;
}

// Record field offsets (docs/weights.md).
enum : uint64_t {
  kRecKind = 160, kRecDtype = 161, kRecNdim = 162, kRecDims = 168, kRecGroup = 184,
  kRecDataOff = 192, kRecDataBytes = 200, kRecScalesOff = 208, kRecScalesBytes = 216,
  kRecDataHash = 224, kRecScalesHash = 232,
};

// Byte counts implied by a tensor's shape, dtype and group.
void set_sizes(N3wTensor& t) {
  t.data_bytes = uint64_t(t.rows()) * uint64_t(t.row_bytes());
  t.scales_bytes = t.dtype == WDType::INT4 ? uint64_t(t.rows()) * uint64_t(t.groups_per_row()) * 4 : 0;
}

class N3wFile : public WeightSource {
 public:
  explicit N3wFile(const std::string& path);
  // Reads an image already in memory (`data` outlives the object).
  N3wFile(const uint8_t* data, uint64_t size, const std::string& what);
  const ModelConfig& config() const override { return cfg_; }
  bool has(const std::string& name) const override { return tensors_.count(name) > 0; }
  MatrixRef matrix(const std::string& name) const override;
  std::vector<float> vec(const std::string& name) const override;
  std::string describe() const override { return "n3 weights file " + path_; }

 private:
  const N3wTensor& get_tensor(const std::string& name) const;
  void read_header();
  void read_table(uint64_t table_offset, uint32_t count, uint64_t data_start);
  void verify_checksums(const std::vector<const N3wTensor*>& order) const;

  std::unique_ptr<MappedFile> file_;  // null when reading an image in memory
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  ModelConfig cfg_;
  std::map<std::string, N3wTensor> tensors_;
};

N3wFile::N3wFile(const std::string& path)
    : file_(std::make_unique<MappedFile>(path)), path_(path), data_(file_->data()), size_(file_->size()) {
  read_header();
}

N3wFile::N3wFile(const uint8_t* data, uint64_t size, const std::string& what) : path_(what), data_(data), size_(size) {
  read_header();
}

void N3wFile::read_header() {
  const std::string& path = path_;
  const uint8_t* p = data_;
  const uint64_t size = size_;
  bool magic = size >= sizeof(kMagic) && std::memcmp(p, kMagic, sizeof(kMagic)) == 0;
  if (!magic) {
    std::string hint;
    if (size >= 3 && std::memcmp(p, "N3W", 3) == 0)
      hint = " (its signature is damaged; " + std::string(kRemake) + ")";
    else if (path.size() > 5 && (path.substr(path.size() - 5) == ".yaml" || path.substr(path.size() - 4) == ".yml"))
      hint = " (a model YAML holds no weights: make some with 'n3 synth --model " + path + " -o X.n3w')";
    else
      hint = " (expected an .n3w file from 'n3 convert' / 'n3 synth', or a checkpoint directory)";
    throw Error(path + ": not an n3 weights file: bad magic" + hint);
  }
  require(size >= kN3wHeaderBytes, path + ": truncated n3 weights file (" + std::to_string(size) +
                                       " bytes, shorter than its 64-byte header); " + kRemake);
  const uint32_t version = get<uint32_t>(p, 8);
  require(version == kN3wVersion,
          path + ": n3 weights file version " + std::to_string(version) + ", but this n3 reads version " +
              std::to_string(kN3wVersion) + "; " + kRemake + " from the model YAML or checkpoint");
  const uint32_t count = get<uint32_t>(p, 12);
  const uint64_t config_offset = get<uint64_t>(p, 16), config_bytes = get<uint64_t>(p, 24);
  const uint64_t table_offset = get<uint64_t>(p, 32), data_start = get<uint64_t>(p, 40);
  const uint64_t file_bytes = get<uint64_t>(p, 48);
  require(file_bytes == size, path + ": truncated or damaged n3 weights file: the header records " +
                                  std::to_string(file_bytes) + " bytes, the file has " + std::to_string(size) +
                                  "; " + kRemake);
  // Every header range lies inside [64, data_start) and data_start inside the file.
  require(config_offset == kN3wHeaderBytes && config_bytes <= size && table_offset >= config_offset + config_bytes &&
              table_offset % kN3wAlign == 0 && table_offset <= size &&
              uint64_t(count) <= (size - table_offset) / kN3wRecordBytes &&
              data_start >= table_offset + uint64_t(count) * kN3wRecordBytes && data_start <= size,
          path + ": corrupt n3 weights file header (config, table or data offsets out of bounds); " + kRemake);

  // The checksum field itself is hashed as zeros.
  Xxh64 h;
  const uint64_t zero = 0;
  h.update(p, kHeaderHashAt);
  h.update(&zero, 8);
  h.update(p + kHeaderHashAt + 8, data_start - kHeaderHashAt - 8);
  require(h.digest() == get<uint64_t>(p, kHeaderHashAt),
          path + ": header checksum mismatch: the file is corrupt; " + std::string(kRemake));

  const std::string yaml(reinterpret_cast<const char*>(p + config_offset), config_bytes);
  cfg_ = parse_model_config(yaml, path + " (header config)", true);
  read_table(table_offset, count, data_start);
}

void N3wFile::read_table(uint64_t table_offset, uint32_t count, uint64_t data_start) {
  const std::string& path = path_;
  const uint8_t* base = data_;
  const uint64_t size = size_;
  std::map<std::string, const WeightSpec*> specs;
  const std::vector<WeightSpec> spec_list = weight_specs(cfg_);
  for (const auto& s : spec_list) specs[s.name] = &s;

  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end) of every data and scales block
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* r = base + table_offset + uint64_t(i) * kN3wRecordBytes;
    const std::string rec = path + ": tensor record " + std::to_string(i);
    const void* nul = std::memchr(r, 0, kN3wNameBytes);
    require(nul && nul != r, rec + ": name is empty or not NUL-terminated");
    N3wTensor t;
    t.name.assign(reinterpret_cast<const char*>(r), static_cast<const uint8_t*>(nul) - r);
    const std::string where = path + ": tensor '" + t.name + "'";
    auto it = specs.find(t.name);
    require(it != specs.end(), where + " is not part of a Gemma 3n decoder with the header's config (" +
                                   std::to_string(cfg_.layers) + " layers)");
    require(!tensors_.count(t.name), where + " appears twice in the tensor table");
    const WeightSpec& s = *it->second;
    const uint8_t kind = r[kRecKind], dtype = r[kRecDtype];
    const uint16_t ndim = get<uint16_t>(r, kRecNdim);
    require(kind == kind_code(s.kind), where + ": stored kind " + std::to_string(kind) + ", expected a " +
                                           kind_name(s.kind));
    t.kind = s.kind;
    const WDType want_dtype = s.kind == WeightKind::Matrix ? WDType::INT4 : WDType::F32;
    require(dtype == uint8_t(want_dtype), where + ": dtype code " + std::to_string(dtype) + ", expected " +
                                              wdtype_name(want_dtype));
    t.dtype = want_dtype;
    require(ndim == 1 || ndim == 2, where + ": " + std::to_string(ndim) + " dimensions");
    for (uint16_t d = 0; d < ndim; ++d) t.shape.push_back(get<int64_t>(r, kRecDims + 8 * d));
    require(t.shape == s.shape, where + ": shape " + shape_str(t.shape) + " but the config implies " +
                                    shape_str(s.shape));
    t.group = get<int64_t>(r, kRecGroup);
    if (t.dtype == WDType::INT4)
      require(t.group >= 1 && t.group <= t.cols(), where + ": group size " + std::to_string(t.group) +
                                                       " outside [1, " + std::to_string(t.cols()) + "]");
    else
      require(t.group == 0, where + ": a float32 tensor with group size " + std::to_string(t.group));
    set_sizes(t);
    t.data_offset = get<uint64_t>(r, kRecDataOff);
    t.scales_offset = get<uint64_t>(r, kRecScalesOff);
    t.data_hash = get<uint64_t>(r, kRecDataHash);
    t.scales_hash = get<uint64_t>(r, kRecScalesHash);
    require(get<uint64_t>(r, kRecDataBytes) == t.data_bytes && get<uint64_t>(r, kRecScalesBytes) == t.scales_bytes,
            where + ": recorded byte counts disagree with its shape");
    auto check_range = [&](uint64_t off, uint64_t n, const char* what) {
      require(off % kN3wAlign == 0, where + ": " + what + " offset " + std::to_string(off) + " is not 64-byte aligned");
      require(off >= data_start && off <= size && n <= size - off,
              where + ": " + what + " [" + std::to_string(off) + ", " + std::to_string(off + n) +
                  ") lies outside the data region [" + std::to_string(data_start) + ", " + std::to_string(size) +
                  ") of the file; " + kRemake);
      ranges.push_back({off, off + n});
    };
    check_range(t.data_offset, t.data_bytes, "data");
    if (t.dtype == WDType::INT4) check_range(t.scales_offset, t.scales_bytes, "scales");
    else require(t.scales_offset == 0, where + ": a float32 tensor with a scales offset");
    tensors_[t.name] = std::move(t);
  }
  for (const auto& s : spec_list)
    require(tensors_.count(s.name), path + ": missing tensor '" + s.name + "' " + shape_str(s.shape));
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    require(ranges[i].first >= ranges[i - 1].second,
            path + ": two tensors overlap at byte " + std::to_string(ranges[i].first) + "; " + kRemake);

  std::vector<const N3wTensor*> order;
  for (const auto& s : spec_list) order.push_back(&tensors_.at(s.name));
  verify_checksums(order);
}

// Every tensor is hashed at open (eagerly, tensors spread over threads), so
// a damaged file fails before any compute, with the tensor named. XXH64 runs
// at several GB/s per core: a 3.5 GB E4B file in about a second once cached.
void N3wFile::verify_checksums(const std::vector<const N3wTensor*>& order) const {
  const uint8_t* base = data_;
  const int64_t n = static_cast<int64_t>(order.size());
  std::vector<char> bad(order.size(), 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) {
    const N3wTensor& t = *order[i];
    if (xxh64(base + t.data_offset, t.data_bytes) != t.data_hash) bad[i] |= 1;
    if (t.dtype == WDType::INT4 && xxh64(base + t.scales_offset, t.scales_bytes) != t.scales_hash) bad[i] |= 2;
  }
  for (int64_t i = 0; i < n; ++i)
    require(!bad[i], path_ + ": checksum mismatch in tensor '" + order[i]->name + "' (" +
                         (bad[i] & 1 ? "data" : "scales") + "): the file is corrupt; " + kRemake);
}

const N3wTensor& N3wFile::get_tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  require(it != tensors_.end(), describe() + ": no tensor '" + name + "'");
  return it->second;
}

MatrixRef N3wFile::matrix(const std::string& name) const {
  const N3wTensor& t = get_tensor(name);
  require(t.shape.size() == 2, describe() + ": tensor '" + name + "' is not a matrix");
  MatrixRef m;
  m.dtype = t.dtype;
  m.rows = t.rows();
  m.cols = t.cols();
  m.data = data_ + t.data_offset;
  if (t.dtype == WDType::INT4) {
    m.scales = reinterpret_cast<const float*>(data_ + t.scales_offset);
    m.group = t.group;
  }
  return m;
}

std::vector<float> N3wFile::vec(const std::string& name) const {
  const N3wTensor& t = get_tensor(name);
  std::vector<float> out(static_cast<size_t>(numel(t.shape)));
  if (t.dtype == WDType::F32) {
    std::memcpy(out.data(), data_ + t.data_offset, t.data_bytes);
  } else {
    MatrixRef m = matrix(name);
    for (int64_t r = 0; r < m.rows; ++r) dequant_row(m, r, out.data() + r * m.cols);
  }
  return out;
}

}  // namespace

std::unique_ptr<WeightSource> open_n3w(const std::string& path) { return std::make_unique<N3wFile>(path); }

std::unique_ptr<WeightSource> parse_n3w(const uint8_t* data, uint64_t size, const std::string& what) {
  return std::make_unique<N3wFile>(data, size, what);
}

// ---------------------------------------------------------------------------
// Writer

struct N3wWriter::Hashers {
  Xxh64 data, scales;
};

N3wWriter::N3wWriter(const std::string& path, const ModelConfig& c, int64_t group)
    : path_(path), cfg_(c), hash_(std::make_unique<Hashers>()) {
  config_yaml_ = model_config_to_yaml(c);
  require(parse_model_config(config_yaml_, path + " (config)", true) == c,
          path + ": model config '" + c.name + "' does not survive its YAML round trip");
  require(group >= 0, path + ": group size must be >= 0 (0 = one scale per row)");
  const std::vector<WeightSpec> specs = weight_specs(c);
  const uint64_t table_offset = align_up(kN3wHeaderBytes + config_yaml_.size());
  uint64_t cursor = align_up(table_offset + specs.size() * kN3wRecordBytes);
  for (const auto& s : specs) {
    require(s.name.size() < kN3wNameBytes, path + ": tensor name '" + s.name + "' too long for an .n3w record");
    N3wTensor t;
    t.name = s.name;
    t.kind = s.kind;
    t.shape = s.shape;
    t.dtype = s.kind == WeightKind::Matrix ? WDType::INT4 : WDType::F32;
    if (t.dtype == WDType::INT4) t.group = group <= 0 || group > t.cols() ? t.cols() : group;
    set_sizes(t);
    t.data_offset = cursor;
    cursor = align_up(cursor + t.data_bytes);
    if (t.dtype == WDType::INT4) {
      t.scales_offset = cursor;
      cursor = align_up(cursor + t.scales_bytes);
    }
    tensors_.push_back(std::move(t));
  }
  const N3wTensor& last = tensors_.back();
  file_bytes_ = last.dtype == WDType::INT4 ? last.scales_offset + last.scales_bytes
                                           : last.data_offset + last.data_bytes;

  file_ = std::make_unique<AtomicFile>(path);
  file_->truncate(file_bytes_);
}

N3wWriter::~N3wWriter() = default;

void N3wWriter::pwrite_all(const void* p, uint64_t n, uint64_t off) {
  file_->pwrite(p, n, off);
  written_ += n;
}

void N3wWriter::advance_to(size_t i, int64_t nrows) {
  require(!done_, path_ + ": write after finish()");
  if (!started_) {
    require(i == 0, path_ + ": tensors must be written in order, starting with '" + tensors_[0].name + "'");
    started_ = true;
  } else if (rows_done_ == tensors_[cur_].rows()) {
    require(i == cur_ + 1 && i < tensors_.size(),
            path_ + ": tensor " + std::to_string(i) + " written out of order (next is " + std::to_string(cur_ + 1) + ")");
    cur_ = i;
    rows_done_ = 0;
    hash_->data.reset(0);
    hash_->scales.reset(0);
  } else {
    require(i == cur_, path_ + ": tensor '" + tensors_[i].name + "' written before '" + tensors_[cur_].name +
                           "' is complete");
  }
  require(nrows >= 0 && rows_done_ + nrows <= tensors_[cur_].rows(),
          path_ + ": too many rows for tensor '" + tensors_[cur_].name + "'");
}

void N3wWriter::append_int4(size_t i, int64_t nrows, const uint8_t* packed, const float* scales) {
  require(i < tensors_.size() && tensors_[i].dtype == WDType::INT4,
          path_ + ": append_int4 on a tensor that is not INT4");
  advance_to(i, nrows);
  N3wTensor& t = tensors_[cur_];
  const uint64_t db = uint64_t(nrows) * t.row_bytes(), sb = uint64_t(nrows) * t.groups_per_row() * 4;
  pwrite_all(packed, db, t.data_offset + uint64_t(rows_done_) * t.row_bytes());
  pwrite_all(scales, sb, t.scales_offset + uint64_t(rows_done_) * t.groups_per_row() * 4);
  hash_->data.update(packed, db);
  hash_->scales.update(scales, sb);
  rows_done_ += nrows;
  if (rows_done_ == t.rows()) close_tensor();
}

void N3wWriter::append_f32(size_t i, int64_t nrows, const float* values) {
  require(i < tensors_.size() && tensors_[i].dtype == WDType::F32,
          path_ + ": append_f32 on a tensor that is not float32");
  advance_to(i, nrows);
  N3wTensor& t = tensors_[cur_];
  const uint64_t db = uint64_t(nrows) * t.row_bytes();
  pwrite_all(values, db, t.data_offset + uint64_t(rows_done_) * t.row_bytes());
  hash_->data.update(values, db);
  rows_done_ += nrows;
  if (rows_done_ == t.rows()) close_tensor();
}

void N3wWriter::close_tensor() {
  N3wTensor& t = tensors_[cur_];
  t.data_hash = hash_->data.digest();
  t.scales_hash = t.dtype == WDType::INT4 ? hash_->scales.digest() : 0;
}

void N3wWriter::finish() {
  require(started_ && cur_ + 1 == tensors_.size() && rows_done_ == tensors_.back().rows(),
          path_ + ": finish() before every tensor was written (at '" + tensors_[cur_].name + "')");
  const uint64_t table_offset = align_up(kN3wHeaderBytes + config_yaml_.size());
  const uint64_t data_start = tensors_.front().data_offset;
  std::string head(data_start, '\0');
  std::memcpy(&head[0], kMagic, sizeof(kMagic));
  put<uint32_t>(head, 8, kN3wVersion);
  put<uint32_t>(head, 12, static_cast<uint32_t>(tensors_.size()));
  put<uint64_t>(head, 16, kN3wHeaderBytes);
  put<uint64_t>(head, 24, config_yaml_.size());
  put<uint64_t>(head, 32, table_offset);
  put<uint64_t>(head, 40, data_start);
  put<uint64_t>(head, 48, file_bytes_);
  std::memcpy(&head[kN3wHeaderBytes], config_yaml_.data(), config_yaml_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const N3wTensor& t = tensors_[i];
    const uint64_t r = table_offset + i * kN3wRecordBytes;
    std::memcpy(&head[r], t.name.data(), t.name.size());
    head[r + kRecKind] = static_cast<char>(kind_code(t.kind));
    head[r + kRecDtype] = static_cast<char>(t.dtype);
    put<uint16_t>(head, r + kRecNdim, static_cast<uint16_t>(t.shape.size()));
    for (size_t d = 0; d < t.shape.size(); ++d) put<int64_t>(head, r + kRecDims + 8 * d, t.shape[d]);
    put<int64_t>(head, r + kRecGroup, t.group);
    put<uint64_t>(head, r + kRecDataOff, t.data_offset);
    put<uint64_t>(head, r + kRecDataBytes, t.data_bytes);
    put<uint64_t>(head, r + kRecScalesOff, t.scales_offset);
    put<uint64_t>(head, r + kRecScalesBytes, t.scales_bytes);
    put<uint64_t>(head, r + kRecDataHash, t.data_hash);
    put<uint64_t>(head, r + kRecScalesHash, t.scales_hash);
  }
  put<uint64_t>(head, kHeaderHashAt, xxh64(head));
  pwrite_all(head.data(), head.size(), 0);
  // The data must be on disk before the name points at it.
  require(::fdatasync(file_->fd()) == 0, path_ + ": sync failed (" + std::string(std::strerror(errno)) + ")");
  file_->commit();
  done_ = true;
}

}  // namespace n3
