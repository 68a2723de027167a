#include "base/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "base/error.h"
#include "base/file_util.h"

namespace n3 {

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

namespace {

// Named in every dtype refusal, so one line says what would have been read.
const char* const kSupported =
    " (supported: <f2 <f4 <f8 <i2 <i4 <i8 <u2 <u4 <u8 |i1 |u1 |b1, little-endian or byte-sized)";

size_t dtype_size(const std::string& d, const std::string& descr, const std::string& what) {
  if (d == "f4" || d == "i4" || d == "u4") return 4;
  if (d == "f8" || d == "i8" || d == "u8") return 8;
  if (d == "f2" || d == "i2" || d == "u2") return 2;
  if (d == "i1" || d == "u1" || d == "b1") return 1;
  throw Error(what + ": npy descr '" + descr + "' is not a supported dtype" + kSupported);
}

// Reads the header dict into key -> value text. The header is numpy's own
// repr, so a small scanner suffices (no general Python-literal parser), but
// it walks every entry: numpy's literal_eval keeps the last of two equal keys
// where a find() took the first, and numpy refuses keys it does not know, so
// both are refused here, naming the key.
std::map<std::string, std::string> header_dict(const std::string& h, const std::string& what) {
  std::map<std::string, std::string> out;
  size_t i = h.find('{') + 1;
  for (;;) {
    i = h.find_first_not_of(" ", i);
    require(i != std::string::npos, what + ": malformed npy header");
    if (h[i] == '}') return out;
    require(h[i] == '\'', what + ": malformed npy header (a key is not a quoted string)");
    const size_t ke = h.find('\'', i + 1);
    require(ke != std::string::npos, what + ": malformed npy header");
    const std::string key = h.substr(i + 1, ke - i - 1);
    require(key == "descr" || key == "fortran_order" || key == "shape",
            what + ": npy header has an unknown key '" + key + "' (expected descr, fortran_order, shape)");
    require(!out.count(key), what + ": npy header gives key '" + key + "' twice");
    size_t c = h.find_first_not_of(" ", ke + 1);
    require(c != std::string::npos && h[c] == ':', what + ": malformed npy header");
    size_t s = h.find_first_not_of(" ", c + 1);
    require(s != std::string::npos, what + ": malformed npy header");
    size_t e;
    if (h[s] == '\'') {
      e = h.find('\'', s + 1);
      require(e != std::string::npos, what + ": malformed npy header");
      out[key] = h.substr(s + 1, e - s - 1);
      ++e;
    } else if (h[s] == '(') {
      e = h.find(')', s);
      require(e != std::string::npos, what + ": malformed npy header");
      out[key] = h.substr(s, e - s + 1);
      ++e;
    } else {
      e = h.find_first_of(",}", s);
      require(e != std::string::npos, what + ": malformed npy header");
      out[key] = h.substr(s, e - s);
    }
    e = h.find_first_not_of(" ", e);
    require(e != std::string::npos && (h[e] == ',' || h[e] == '}'), what + ": malformed npy header");
    i = h[e] == ',' ? e + 1 : e;
  }
}

const std::string& dict_value(const std::map<std::string, std::string>& d, const std::string& key,
                              const std::string& what) {
  auto it = d.find(key);
  require(it != d.end(), what + ": npy header lacks '" + key + "'");
  return it->second;
}

}  // namespace

NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& what) {
  require(size >= 10 && std::memcmp(data, "\x93NUMPY", 6) == 0, what + ": not a .npy file");
  int major = data[6];
  // Versions 1.0 and 2.0 (the header length in 2 or 4 bytes); numpy writes
  // 3.0 only for a non-Latin-1 header, a structured dtype this reader does
  // not take. Another version is refused by name, not read as a header length
  // that then looks truncated.
  require((major == 1 || major == 2) && data[7] == 0,
          what + ": unsupported .npy format version " + std::to_string(major) +
              (data[7] ? "." + std::to_string(data[7]) : std::string()) + " (supported: 1.0, 2.0)");
  size_t hlen, off;
  if (major == 1) {
    hlen = data[8] | (data[9] << 8);
    off = 10;
  } else {
    require(size >= 12, what + ": truncated .npy header");
    hlen = data[8] | (data[9] << 8) | (size_t(data[10]) << 16) | (size_t(data[11]) << 24);
    off = 12;
  }
  require(off + hlen <= size, what + ": truncated .npy header");
  std::string h(reinterpret_cast<const char*>(data + off), hlen);
  // The header is a Python dict literal padded with spaces and a newline:
  // one without its braces is a truncated or hand-broken file.
  const size_t first = h.find_first_not_of(" \n"), last = h.find_last_not_of(" \n");
  require(first != std::string::npos && h[first] == '{' && h[last] == '}',
          what + ": malformed npy header (not a {...} dict)");
  NpyArray a;
  const auto dict = header_dict(h, what);
  std::string descr = dict_value(dict, "descr", what);
  // Only a '>' prefix is big-endian; a descr without a byte-order prefix
  // ('i4', 'abc') is not a dtype this reader knows.
  require(descr.empty() || descr[0] != '>', what + ": big-endian npy data is not supported (" + descr + ")");
  require(descr.size() >= 2 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '='),
          what + ": npy descr '" + descr + "' is not a supported dtype" + kSupported);
  a.dtype = descr.substr(1);
  require(dict_value(dict, "fortran_order", what) == "False",
          what + ": Fortran-order npy data is not supported");
  std::string sh = dict_value(dict, "shape", what);
  require(sh.size() >= 2 && sh.front() == '(' && sh.back() == ')', what + ": bad shape " + sh + " (not a tuple)");
  std::stringstream ss(sh.substr(1, sh.size() - 2));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    size_t b = tok.find_first_not_of(" ");
    if (b == std::string::npos) continue;
    // A whole dimension: "4.0" or "4x" were read as 4 (stoll stops at the
    // first non-digit); numpy refuses them. (Python 2's numpy wrote "4L".)
    const std::string t = tok.substr(b);
    size_t used = 0;
    try {
      a.shape.push_back(std::stoll(t, &used));
    } catch (...) {
      throw Error(what + ": bad shape " + sh);
    }
    const size_t rest = t.find_first_not_of(" ", used);
    require(rest == std::string::npos || (t[rest] == 'L' && t.find_first_not_of(" ", rest + 1) == std::string::npos),
            what + ": bad shape " + sh + " (a dimension is not a whole number)");
    require(a.shape.back() >= 0, what + ": bad shape " + sh);
  }
  // Checked: a shape like (2^31, 2^31) must not wrap to a small byte count
  // that the truncation check below would pass.
  uint64_t nbytes = uint64_t(dtype_size(a.dtype, descr, what));
  for (int64_t d : a.shape)
    require(!__builtin_mul_overflow(nbytes, uint64_t(d), &nbytes),
            what + ": shape " + shape_str(a.shape) + " holds more than 2^64 bytes");
  size_t body = off + hlen;
  require(nbytes <= size - body, what + ": truncated .npy data (expected " + std::to_string(nbytes) +
                                     " bytes for shape " + shape_str(a.shape) + ")");
  a.bytes.assign(data + body, data + body + nbytes);
  return a;
}

NpyArray read_npy(const std::string& path) {
  std::vector<uint8_t> buf = read_file_bytes(path);
  return parse_npy(buf.data(), buf.size(), path);
}

Tensor read_npy_f32(const std::string& path) {
  NpyArray a = read_npy(path);
  require(a.dtype == "f4", path + ": expected float32, found dtype " + a.dtype);
  Tensor t(a.shape);
  std::memcpy(t.data.data(), a.bytes.data(), a.bytes.size());
  return t;
}

std::vector<int32_t> read_ids(const std::string& path, int64_t limit) {
  NpyArray a = read_npy(path);
  require(a.shape.size() == 1 || (a.shape.size() == 2 && a.shape[0] == 1),
          path + ": token ids must have shape [T] or [1, T], found " + shape_str(a.shape));
  int64_t n = numel(a.shape);
  require(n > 0, path + ": no token ids");
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    if (a.dtype == "i4") {
      int32_t x;
      std::memcpy(&x, a.bytes.data() + 4 * i, 4);
      v = x;
    } else if (a.dtype == "i8") {
      std::memcpy(&v, a.bytes.data() + 8 * i, 8);
    } else {
      throw Error(path + ": token ids must be int32 or int64, found dtype " + a.dtype);
    }
    require(v >= 0 && v < limit, path + ": token id " + std::to_string(v) + " at index " +
                                     std::to_string(i) + " is out of range [0, " +
                                     std::to_string(limit) + ")");
    ids[i] = static_cast<int32_t>(v);
  }
  return ids;
}

void write_npy_raw(const std::string& path, const std::string& dtype, const Shape& shape,
                   const void* data, size_t nbytes) {
  std::string sh = "(";
  for (size_t i = 0; i < shape.size(); ++i) sh += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  sh += ")";
  std::string header = "{'descr': '<" + dtype + "', 'fortran_order': False, 'shape': " + sh + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(data), nbytes);
  write_file_atomic(path, out);
}

void write_npy(const std::string& path, const Tensor& t) {
  write_npy_raw(path, "f4", t.shape, t.data.data(), t.data.size() * 4);
}

void write_npy_i32(const std::string& path, const std::vector<int32_t>& v) {
  write_npy_raw(path, "i4", {static_cast<int64_t>(v.size())}, v.data(), v.size() * 4);
}

}  // namespace n3
