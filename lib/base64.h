/* Standard base64 (RFC 4648 section 4, padded, no line breaks): encoding
 * through OpenSSL's EVP_EncodeBlock, decoding here.  Decoding is strict: only
 * the standard alphabet, correct padding, no whitespace, and canonical
 * (unused trailing bits zero), so one byte string has one encoding. */
#ifndef INGOT_BASE64_H
#define INGOT_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Encoded length of n bytes, without the NUL. */
size_t base64_encoded_len(size_t n);
/* malloc'd NUL-terminated encoding (len, if non-NULL, excludes the NUL);
 * NULL when n is absurdly large. */
char *base64_encode(const void *data, size_t n, size_t *len);
/* Decode exactly inlen characters of in.  *out is malloc'd with a NUL
 * after the *outlen bytes.  -EINVAL for anything not strict base64. */
int base64_decode(const char *in, size_t inlen, uint8_t **out, size_t *outlen);

#endif
