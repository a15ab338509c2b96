/* Paths inside an image, in the relative form the staging tree, the
 * recipe and the listings use ("usr/lib/x", never "/usr/lib/x").  Here,
 * not in builder/, because the recipe parser checks them too. */
#ifndef INGOT_IMGPATH_H
#define INGOT_IMGPATH_H

#include "lib/err.h"

/* Validate a relative image path: no "", no leading '/', no "." or ".."
 * components, no "//", no trailing '/', no NUL, at most 4095 bytes and
 * 255 per component.  what names the field in the error. */
int imgpath_check_shape(const char *path, const char *what, ingot_error *e);

/* imgpath_check_shape, and no control character (0x00-0x1f, 0x7f): what
 * recipes and archives may bring into an image.  The staging tree checks
 * only the shape, so test tools can build hostile images for readers. */
int imgpath_check(const char *path, const char *what, ingot_error *e);

#endif
