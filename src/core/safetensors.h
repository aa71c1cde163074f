// safetensors files: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}} and the raw
// little-endian tensor bytes. Tensors are written in the given order (names as given, e.g. the
// ParamTable's). write_safetensors is atomic: it writes PATH.tmp and renames it over PATH.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/file_check.h"  // write_file_atomic
#include "core/tensor.h"

namespace netspec {

struct SafeTensors {
  std::vector<std::pair<std::string, Tensor>> tensors;  // file order
  std::map<std::string, std::string> metadata;
  // The tensor called `name`; throws naming the file's tensors when absent.
  const Tensor& at(const std::string& name) const;
};

std::string encode_safetensors(const SafeTensors& st);
// Validates every header field against the byte count before allocating; errors read
// `[safetensors] FILE: FIELD: what` (exit 2).
SafeTensors decode_safetensors(std::string_view bytes, const std::string& name = "<memory>");
void write_safetensors(const std::string& path, const SafeTensors& st);
SafeTensors read_safetensors(const std::string& path);

}  // namespace netspec
