// VOC annotation XML through libxml2 (voc_xml.h). The parser runs without entity substitution
// (no XML_PARSE_NOENT), without DTD loading or validation, without network (XML_PARSE_NONET) and
// with its default limits (no XML_PARSE_HUGE: depth 256, 10 MB text nodes, entity amplification
// checks); an external entity loader that refuses every URL backs that up. A field that still
// holds an entity reference is refused rather than expanded.
#include "data/voc_xml.h"

#include <fmt/format.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/globals.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// An annotation is a few KB; anything past this is not one (and libxml2 takes an int size).
constexpr size_t kMaxAnnotationBytes = size_t(64) << 20;

// VOC needs no external DTD or entity: every fetch the parser would make is refused, whatever
// the options (process-wide; netspec uses libxml2 for nothing else).
xmlParserInputPtr refuse_external(const char*, const char*, xmlParserCtxtPtr) { return nullptr; }

void init_libxml() {
  static std::once_flag once;
  std::call_once(once, [] {
    xmlInitParser();
    xmlSetExternalEntityLoader(refuse_external);
  });
}

// The first error libxml2 reports while this thread parses (later ones follow from it).
struct FirstError {
  bool set = false;
  int line = 0, code = 0;
  std::string message;
};
thread_local FirstError* current_error = nullptr;

void record_error(void*, xmlErrorPtr e) {
  if (current_error == nullptr || current_error->set || e == nullptr || e->level < XML_ERR_ERROR)
    return;
  current_error->set = true;
  current_error->line = e->line;
  current_error->code = e->code;
  std::string m = e->message != nullptr ? e->message : "unknown error";
  while (!m.empty() && std::isspace(static_cast<unsigned char>(m.back()))) m.pop_back();
  current_error->message = m;
}

struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
struct CtxtFree {
  void operator()(xmlParserCtxt* c) const { xmlFreeParserCtxt(c); }
};
using Doc = std::unique_ptr<xmlDoc, DocFree>;

Doc parse_document(const std::string& text, const std::string& path) {
  init_libxml();
  if (text.size() > kMaxAnnotationBytes)
    fail("voc", "{}: {} bytes is not an annotation (at most {} MiB)", path, text.size(),
         kMaxAnnotationBytes >> 20);
  std::unique_ptr<xmlParserCtxt, CtxtFree> ctxt(xmlNewParserCtxt());
  if (!ctxt) fail("voc", "{}: cannot create an XML parser (out of memory)", path);
  FirstError first;
  current_error = &first;
  ctxt->sax->serror = record_error;  // called before the NOERROR-silenced printers
  // Errors raised without the parser context (encoding errors) go to this thread's handler:
  // recorded too, never printed to stderr; the previous handler is restored after.
  const xmlStructuredErrorFunc saved_handler = xmlStructuredError;
  void* const saved_context = xmlStructuredErrorContext;
  xmlSetStructuredErrorFunc(nullptr, record_error);
  constexpr int kOptions = XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
                           XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
  Doc doc(xmlCtxtReadMemory(ctxt.get(), text.data(), int(text.size()), path.c_str(), nullptr,
                            kOptions));
  xmlSetStructuredErrorFunc(saved_context, saved_handler);
  current_error = nullptr;
  if (first.set) {
    if (first.code == XML_ERR_COMMENT_NOT_FINISHED)
      fail("voc", "{}:{}: unterminated <!-- comment", path, first.line);
    fail("voc", "{}:{}: malformed XML: {}", path, first.line, first.message);
  }
  if (!doc || ctxt->wellFormed == 0) fail("voc", "{}: malformed XML", path);
  return doc;
}

// Where a node is, for messages: "file:line".
struct Where {
  const std::string& path;
  std::string operator()(const xmlNode* n) const {
    return fmt::format("{}:{}", path, xmlGetLineNo(n));
  }
};

std::string local_name(const xmlNode* n) { return reinterpret_cast<const char*>(n->name); }

// The first child element named `name` (local name: a namespace prefix does not matter).
const xmlNode* child(const xmlNode* parent, const char* name) {
  for (const xmlNode* c = parent->children; c != nullptr; c = c->next)
    if (c->type == XML_ELEMENT_NODE && local_name(c) == name) return c;
  return nullptr;
}

// An element's text: its text and CDATA children joined and trimmed; comments and processing
// instructions skipped. An entity reference is refused, never expanded (that is the billion
// laughs and the external-file read); so is a child element (a field holds text).
std::string text_of(const xmlNode* el, const Where& at) {
  std::string v;
  for (const xmlNode* c = el->children; c != nullptr; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      if (c->content != nullptr) v += reinterpret_cast<const char*>(c->content);
    } else if (c->type == XML_ENTITY_REF_NODE) {
      fail("voc", "{}: <{}> uses the entity &{}; (entities are not expanded)", at(c),
           local_name(el), local_name(c));
    } else if (c->type == XML_ELEMENT_NODE) {
      fail("voc", "{}: <{}> holds an element <{}> (expected text)", at(c), local_name(el),
           local_name(c));
    }
  }
  const auto ws = [](unsigned char ch) { return std::isspace(ch) != 0; };
  v.erase(v.begin(), std::find_if_not(v.begin(), v.end(), ws));
  v.erase(std::find_if_not(v.rbegin(), v.rend(), ws).base(), v.end());
  return v;
}

// The number in <field> under `parent`; a missing field or text that is not a whole number
// names its line.
double number(const xmlNode* parent, const char* field, const Where& at) {
  const xmlNode* el = child(parent, field);
  if (el == nullptr) fail("voc", "{}: <{}> has no <{}>", at(parent), local_name(parent), field);
  const std::string v = text_of(el, at);
  try {
    size_t used = 0;
    const double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (const std::exception&) {
  }
  fail("voc", "{}: <{}> is not a number (got '{}')", at(el), field, v);
}

// An image side from <size>: a whole number of pixels (0 means unknown, as some VOC files say).
int64_t image_side(const xmlNode* size, const char* field, const Where& at) {
  const double d = number(size, field, at);
  if (!(d >= 0 && d <= double(INT32_MAX)) || d != std::floor(d))
    fail("voc", "{}: <{}> must be a whole number of pixels in [0, {}] (got {})",
         at(child(size, field)), field, INT32_MAX, d);
  return int64_t(d);
}

int class_index(std::vector<std::string>& classes, const std::string& name, bool fixed,
                const std::string& where) {
  auto it = std::find(classes.begin(), classes.end(), name);
  if (it != classes.end()) return static_cast<int>(it - classes.begin());
  if (fixed)
    fail("voc", "{}: unknown class '{}' (expected one of {})", where, name,
         fmt::join(classes, ", "));
  classes.push_back(name);
  return static_cast<int>(classes.size() - 1);
}

Box read_object(const xmlNode* obj, std::vector<std::string>& classes, bool fixed,
                const Where& at) {
  const xmlNode* name_el = child(obj, "name");
  const std::string name = name_el != nullptr ? text_of(name_el, at) : std::string();
  if (name.empty()) fail("voc", "{}: <object> without <name>", at(obj));
  const xmlNode* bb = child(obj, "bndbox");
  if (bb == nullptr) fail("voc", "{}: <object> '{}' without <bndbox>", at(obj), name);
  Box b{number(bb, "xmin", at), number(bb, "ymin", at), number(bb, "xmax", at),
        number(bb, "ymax", at), class_index(classes, name, fixed, at(name_el))};
  if (!(b.x1 > b.x0 && b.y1 > b.y0))
    fail("voc", "{}: empty box for '{}' ([{}, {}, {}, {}])", at(bb), name, b.x0, b.y0, b.x1, b.y1);
  return b;
}

}  // namespace

DetRecord parse_voc_annotation(const std::string& xml_path, const std::string& image_dir,
                               std::vector<std::string>& classes, bool fixed) {
  // Regular files only: a FIFO among the annotations must not block the reader.
  const Doc doc = parse_document(read_regular_file("voc", xml_path), xml_path);
  const Where at{xml_path};
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr) fail("voc", "{}: no root element", xml_path);
  if (local_name(root) != "annotation")
    fail("voc", "{}: the root element is <{}> (expected <annotation>)", at(root), local_name(root));
  DetRecord r;
  const xmlNode* file_el = child(root, "filename");
  const std::string file = file_el != nullptr ? text_of(file_el, at) : std::string();
  if (file.empty()) fail("voc", "{}: no <filename>", at(file_el != nullptr ? file_el : root));
  r.image = (fs::path(image_dir) / file).string();
  if (const xmlNode* size = child(root, "size")) {
    r.width = image_side(size, "width", at);
    r.height = image_side(size, "height", at);
  }
  for (const xmlNode* c = root->children; c != nullptr; c = c->next)
    if (c->type == XML_ELEMENT_NODE && local_name(c) == "object")
      r.boxes.push_back(read_object(c, classes, fixed, at));
  return r;
}

}  // namespace netspec::data
