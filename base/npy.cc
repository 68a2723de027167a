#include "base/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
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

size_t dtype_size(const std::string& d, const std::string& what) {
  if (d == "f4" || d == "i4" || d == "u4") return 4;
  if (d == "f8" || d == "i8" || d == "u8") return 8;
  if (d == "f2" || d == "i2" || d == "u2") return 2;
  if (d == "i1" || d == "u1" || d == "b1") return 1;
  throw Error(what + ": unsupported npy dtype '" + d + "'");
}

// Reads the value of 'key' in the header dict; the header is numpy's own
// repr, so a small scanner suffices (no general Python-literal parser needed).
std::string dict_value(const std::string& h, const std::string& key, const std::string& what) {
  size_t k = h.find("'" + key + "'");
  require(k != std::string::npos, what + ": npy header lacks '" + key + "'");
  size_t c = h.find(':', k);
  require(c != std::string::npos, what + ": malformed npy header");
  size_t s = h.find_first_not_of(" ", c + 1);
  require(s != std::string::npos, what + ": malformed npy header");
  size_t e;
  if (h[s] == '\'') {
    e = h.find('\'', s + 1);
    require(e != std::string::npos, what + ": malformed npy header");
    return h.substr(s + 1, e - s - 1);
  }
  if (h[s] == '(') {
    e = h.find(')', s);
    require(e != std::string::npos, what + ": malformed npy header");
    return h.substr(s, e - s + 1);
  }
  e = h.find_first_of(",}", s);
  require(e != std::string::npos, what + ": malformed npy header");
  return h.substr(s, e - s);
}

}  // namespace

NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& what) {
  require(size >= 10 && std::memcmp(data, "\x93NUMPY", 6) == 0, what + ": not a .npy file");
  int major = data[6];
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
  std::string descr = dict_value(h, "descr", what);
  require(descr.size() >= 2, what + ": bad dtype '" + descr + "'");
  char order = descr[0];
  require(order == '<' || order == '|' || order == '=',
          what + ": big-endian npy data is not supported (" + descr + ")");
  a.dtype = descr.substr(1);
  require(dict_value(h, "fortran_order", what) == "False",
          what + ": Fortran-order npy data is not supported");
  std::string sh = dict_value(h, "shape", what);
  require(sh.size() >= 2 && sh.front() == '(' && sh.back() == ')', what + ": bad shape " + sh + " (not a tuple)");
  std::stringstream ss(sh.substr(1, sh.size() - 2));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    size_t b = tok.find_first_not_of(" ");
    if (b == std::string::npos) continue;
    try {
      a.shape.push_back(std::stoll(tok.substr(b)));
    } catch (...) {
      throw Error(what + ": bad shape " + sh);
    }
    require(a.shape.back() >= 0, what + ": bad shape " + sh);
  }
  // Checked: a shape like (2^31, 2^31) must not wrap to a small byte count
  // that the truncation check below would pass.
  uint64_t nbytes = uint64_t(dtype_size(a.dtype, what));
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
