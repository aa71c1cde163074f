// libjpeg error plumbing shared by the image decoders (image.cpp, region.cpp): error_exit must
// not return, so it longjmps back to the decoding function; warnings (a truncated stream, corrupt
// data) are errors too. A frame that calls setjmp holds only C objects across it.
#pragma once
#include <setjmp.h>

#include <cstdio>
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

// CMYK -> RGB as PIL in place (4 -> 3 bytes per pixel; see image.cpp).
void cmyk_to_rgb_inplace(unsigned char* px, size_t pixels, bool inverted);

}  // namespace netspec::data
