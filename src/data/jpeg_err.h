// libjpeg error plumbing shared by the image decoders (image.cpp, region.cpp): error_exit must
// not return, so it longjmps back to the decoding function; warnings (a truncated stream, corrupt
// data) are errors too. A frame that calls setjmp holds only C objects across it.
#pragma once
#include <setjmp.h>

#include <cstdio>
#include <string>
// jpeglib.h needs size_t and FILE declared first (cstdio above).
#include <jpeglib.h>

namespace netspec::data {

struct JpegErr {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr c);
void jpeg_emit(j_common_ptr c, int level);

// Points cinfo at `err` with the handlers above.
inline void use_jpeg_err(jpeg_decompress_struct& cinfo, JpegErr& err) {
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = jpeg_error_exit;
  err.pub.emit_message = jpeg_emit;
  err.msg[0] = 0;
}

// Decodes `bytes` with libjpeg: the decompressor with the handlers above, the header read, then
// body(cinfo) (start, scanlines, finish or abort), the decompressor destroyed after it. A libjpeg
// error longjmps out of body, so body's frame must hold only C objects and references (nothing
// to destroy). Returns libjpeg's message, or "" when body returned.
template <class Body>
std::string with_jpeg(const std::string& bytes, const Body& body) {
  jpeg_decompress_struct cinfo;
  JpegErr err;
  use_jpeg_err(cinfo, err);
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return err.msg[0] ? err.msg : "unknown libjpeg error";
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  body(cinfo);
  jpeg_destroy_decompress(&cinfo);
  return "";
}

// Output colour for a read header: YCbCr and grayscale convert to RGB in libjpeg; CMYK/YCCK come
// out as CMYK (4 components, for cmyk_to_rgb_inplace). Returns whether that CMYK is inverted
// (Adobe's files).
inline bool set_rgb_output(jpeg_decompress_struct& cinfo) {
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  return cmyk && cinfo.saw_Adobe_marker;
}

// CMYK -> RGB as PIL in place (4 -> 3 bytes per pixel; see image.cpp).
void cmyk_to_rgb_inplace(unsigned char* px, size_t pixels, bool inverted);

}  // namespace netspec::data
