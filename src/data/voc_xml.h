// Pascal VOC annotation XML (also the Oxford-IIIT Pets head boxes), read with libxml2 in a
// locked-down mode: no entity substitution, no DTD loading, no network, the parser's default
// size and depth limits (docs/security.md says why). det_data.cpp builds the datasets from it.
#pragma once
#include <string>
#include <vector>

#include "data/det_data.h"

namespace netspec::data {

// One annotation: <annotation> with <filename>, an optional <size> (<width>, <height>) and
// <object>s (<name>, <bndbox> with <xmin> <ymin> <xmax> <ymax>). Elements match by local name
// (a namespace prefix is ignored); text may come as CDATA; comments are skipped. A class name is
// looked up in `classes` and, unless `fixed`, appended when new. Errors name file:line, exit 2.
DetRecord parse_voc_annotation(const std::string& xml_path, const std::string& image_dir,
                               std::vector<std::string>& classes, bool fixed);

}  // namespace netspec::data
