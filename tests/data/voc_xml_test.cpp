// VOC annotation XML through libxml2 (data/voc_xml.cpp, issue 40 item 14): entities are never
// expanded (billion laughs, external files), DTDs never loaded, nesting bounded; CDATA, comments,
// attributes, namespaces and character references read as XML means them; errors name file:line.
#include "data/voc_xml.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/det_data.h"
#include "tests/error_of.h"
#include "tests/support/test_files.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;
using test_util::error_of;

struct VocFile {
  fs::path dir = test_util::fresh_dir(
      "voc_xml", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string path = (dir / "a.xml").string();
  std::vector<std::string> classes;

  DetRecord read(const std::string& xml) {
    std::ofstream(path) << xml;
    return read_voc_xml(path, dir.string(), classes);
  }
  std::string error(const std::string& xml) {
    return error_of([&] { read(xml); });
  }
};

const char* kBox = "<bndbox><xmin>1</xmin><ymin>2</ymin><xmax>3</xmax><ymax>4</ymax></bndbox>";

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Ten levels of ten references each: 10^9 "lol"s (3 GB) if expanded. Refused at once, small.
TEST(VocXml, BillionLaughsIsRefusedWithoutExpanding) {
  VocFile f;
  std::string dtd = "<!DOCTYPE annotation [<!ENTITY lol0 \"lol\">\n";
  for (int i = 1; i < 10; ++i) {
    dtd += "<!ENTITY lol" + std::to_string(i) + " \"";
    for (int k = 0; k < 10; ++k) dtd += "&lol" + std::to_string(i - 1) + ";";
    dtd += "\">\n";
  }
  dtd += "]>\n";
  const long rss0 = max_rss_kb();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = f.error(dtd + "<annotation><filename>a.png</filename><object><name>" +
                                "&lol9;</name>" + kBox + "</object></annotation>");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(e.rfind("[voc] " + f.path + ":", 0), 0u) << e;
  EXPECT_NE(e.find("entit"), std::string::npos) << e;  // the parser's loop check or ours
  EXPECT_EQ(e.find("lollol"), std::string::npos) << e;
  EXPECT_LT(secs, 2.0);
  EXPECT_LT(max_rss_kb() - rss0, 100 * 1024);  // KB: far from the 3 GB expansion
  EXPECT_TRUE(f.classes.empty());
}

// An internal entity is not substituted either: the field that uses it is refused by name.
TEST(VocXml, AnEntityInAFieldIsRefusedNamingItAndItsLine) {
  VocFile f;
  const std::string e = f.error(
      "<!DOCTYPE annotation [<!ENTITY pet \"cat\">]>\n<annotation>\n<filename>a.png</filename>\n"
      "<object><name>&pet;</name>" +
      std::string(kBox) + "</object></annotation>");
  EXPECT_EQ(e, "[voc] " + f.path + ":4: <name> uses the entity &pet; (entities are not expanded)");
}

// External entities (a general one and a parameter entity pulling in a DTD) are never fetched:
// the file's text (a class name, or /etc/passwd's "root:") appears nowhere.
TEST(VocXml, ExternalEntitiesAreNeverRead) {
  VocFile f;
  const fs::path secret = f.dir / "secret.txt", dtd = f.dir / "leak.dtd";
  std::ofstream(secret) << "secretclass";
  std::ofstream(dtd) << "<!ENTITY leak \"secretclass\">";
  std::string e = f.error("<!DOCTYPE annotation [<!ENTITY xxe SYSTEM \"file://" + secret.string() +
                          "\">]>\n<annotation><filename>a.png</filename><object><name>&xxe;"
                          "</name>" +
                          kBox + "</object></annotation>");
  EXPECT_EQ(e, "[voc] " + f.path + ":2: <name> uses the entity &xxe; (entities are not expanded)");
  e = f.error(
      "<!DOCTYPE annotation [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n<annotation>"
      "<filename>&xxe;</filename></annotation>");
  EXPECT_NE(e.find("<filename> uses the entity &xxe;"), std::string::npos) << e;
  EXPECT_EQ(e.find("root:"), std::string::npos) << e;
  // An external DTD and an external parameter entity: neither loaded, so &leak; stays undeclared.
  e = f.error("<!DOCTYPE annotation SYSTEM \"file://" + dtd.string() +
              "\" [<!ENTITY % ext SYSTEM \"file://" + dtd.string() +
              "\"> %ext;]>\n"
              "<annotation><filename>a.png</filename><object><name>&leak;</name>" +
              kBox + "</object></annotation>");
  EXPECT_EQ(e.find("secretclass"), std::string::npos) << e;
  EXPECT_NE(e.find("leak"), std::string::npos) << e;
  EXPECT_TRUE(f.classes.empty());
}

// CDATA is text, comments are skipped (also inside a field), attributes and namespace prefixes
// do not hide an element, predefined entities and character references are the characters
// they name, and an <object>'s <part>s (VOC person layout) do not shadow its own <name>.
TEST(VocXml, CdataCommentsAttributesNamespacesAndCharacterReferences) {
  VocFile f;
  const DetRecord r = f.read(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<v:annotation xmlns:v=\"urn:voc\" verified=\"yes\">\n"
      "  <v:filename><![CDATA[x & y.png]]></v:filename>\n"
      "  <size unit=\"px\"><width> 40 </width><height><!-- h -->20</height></size>\n"
      "  <!-- <object><name>ghost</name></object> -->\n"
      "  <object id=\"1\"><part><name>hand</name></part><name>c<!-- mid -->at</name>"
      "<bndbox><xmin>2</xmin><ymin><![CDATA[3]]></ymin><xmax>1&#50;</xmax><ymax>13</ymax>"
      "</bndbox></object>\n"
      "  <object><name>dog &amp; co</name><bndbox><xmin>20</xmin><ymin>1</ymin><xmax>30</xmax>"
      "<ymax>9</ymax></bndbox></object>\n"
      "</v:annotation>\n");
  EXPECT_EQ(r.image, (f.dir / "x & y.png").string());
  EXPECT_EQ(r.width, 40);
  EXPECT_EQ(r.height, 20);
  EXPECT_EQ(f.classes, (std::vector<std::string>{"cat", "dog & co"}));
  ASSERT_EQ(r.boxes.size(), 2u);
  EXPECT_EQ(r.boxes[0], (Box{2, 3, 12, 13, 0}));
  EXPECT_EQ(r.boxes[1], (Box{20, 1, 30, 9, 1}));
}

// Every refusal names the file and the line of the element at fault.
TEST(VocXml, ErrorsNameFileAndLine) {
  VocFile f;
  const std::string p = "[voc] " + f.path;
  EXPECT_EQ(f.error("<annotation>\n<filename>a.png</filename>\n<object>\n<name>cat</name>\n"
                    "<bndbox><xmin>x</xmin></bndbox></object></annotation>"),
            p + ":5: <xmin> is not a number (got 'x')");
  EXPECT_EQ(f.error("<annotation>\n<filename>a.png</filename>\n<object>\n<name>cat</name>\n"
                    "<bndbox><xmin>1</xmin></bndbox></object></annotation>"),
            p + ":5: <bndbox> has no <ymin>");
  EXPECT_EQ(f.error("<annotation><filename>a.png</filename>\n<object><name>cat</name>"
                    "<bndbox><xmin>5</xmin><ymin>2</ymin><xmax>3</xmax><ymax>4</ymax></bndbox>"
                    "</object></annotation>"),
            p + ":2: empty box for 'cat' ([5, 2, 3, 4])");
  EXPECT_EQ(f.error("<annotation>\n<object>\n" + std::string(kBox) + "</object></annotation>"),
            p + ":1: no <filename>");
  EXPECT_EQ(f.error("<annotation><filename>a.png</filename>\n\n<object><name> </name>" +
                    std::string(kBox) + "</object></annotation>"),
            p + ":3: <object> without <name>");
  EXPECT_EQ(f.error("<annotation><filename>a.png</filename>\n<size><width>-3</width>"
                    "<height>2</height></size></annotation>"),
            p + ":2: <width> must be a whole number of pixels in [0, 2147483647] (got -3)");
  EXPECT_EQ(f.error("<annotation><filename><b>a.png</b></filename></annotation>"),
            p + ":1: <filename> holds an element <b> (expected text)");
  EXPECT_EQ(f.error("\n<voc><filename>a.png</filename></voc>"),
            p + ":2: the root element is <voc> (expected <annotation>)");
  // Malformed XML: the parser's own message at its line.
  std::string e = f.error("<annotation>\n<filename>a.png</filename>\n<object>\n</annotation>");
  EXPECT_EQ(e.rfind(p + ":4: malformed XML: ", 0), 0u) << e;
  e = f.error("<annotation><filename>a.png</filename>\n\n<!-- open");
  EXPECT_EQ(e, p + ":3: unterminated <!-- comment");
  EXPECT_EQ(f.error("").rfind(p + ":1: malformed XML: ", 0), 0u) << f.error("");
  // A fixed class list names what it expects.
  std::ofstream(f.path) << "<annotation><filename>a.png</filename>\n<object>\n<name>dog</name>" +
                               std::string(kBox) + "</object></annotation>";
  f.classes = {"bird", "fish"};
  EXPECT_EQ(error_of([&] { parse_voc_annotation(f.path, "", f.classes, true); }),
            p + ":3: unknown class 'dog' (expected one of bird, fish)");
}

// A byte sequence invalid in the declared encoding: refused naming the file, and libxml2's own
// "encoding error" report (raised outside the parser context) is not printed to stderr.
TEST(VocXml, EncodingErrorsAreRefusedNotPrinted) {
  VocFile f;
  const std::string bad = std::string("<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?>\n") +
                          "<annotation>\x1b$B" + std::string(1, '\0') + " ve</annotation>";
  ::testing::internal::CaptureStderr();
  const std::string e = f.error(bad);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(e.rfind("[voc] " + f.path + ":", 0), 0u) << e;
  EXPECT_NE(e.find("malformed XML"), std::string::npos) << e;
  EXPECT_EQ(printed, "");
}

// 100,000 nested elements: refused by the parser's depth limit, no stack overflow.
TEST(VocXml, DeepNestingIsRefused) {
  VocFile f;
  std::string xml = "<annotation>";
  for (int i = 0; i < 100000; ++i) xml += "<a>";
  const std::string e = f.error(xml);
  EXPECT_EQ(e.rfind("[voc] " + f.path + ":1: malformed XML: ", 0), 0u) << e;
  EXPECT_NE(e.find("depth"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::data
