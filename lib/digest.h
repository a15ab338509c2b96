/* SHA-256 (and friends) through OpenSSL EVP, plus hex helpers. */
#ifndef INGOT_DIGEST_H
#define INGOT_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/types.h>
#include "lib/err.h"

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

void sha256_buf(const void *data, size_t len, uint8_t out[SHA256_LEN]);
/* Hash a whole file; size (if non-NULL) gets its length. */
int sha256_file(const char *path, uint8_t out[SHA256_LEN], uint64_t *size, ingot_error *e);
int sha256_fd(int fd, const char *name, uint8_t out[SHA256_LEN], uint64_t *size, ingot_error *e);

/* Incremental sha256 for bytes made a piece at a time (spliced JSON):
 * sha256_begin is NULL when out of memory; sha256_write has struct
 * json_out's shape (ctx: the EVP_MD_CTX); sha256_end frees c. */
EVP_MD_CTX *sha256_begin(void);
int sha256_write(void *c, const char *buf, size_t len, ingot_error *e);
void sha256_end(EVP_MD_CTX *c, uint8_t out[SHA256_LEN]);

/* out must hold 2*len+1 bytes. */
void hex_encode(const uint8_t *in, size_t len, char *out);
/* Strict lower/upper-case hex of exactly 2*len chars; -EINVAL otherwise. */
int hex_decode(const char *in, uint8_t *out, size_t len);
/* True when s is exactly 64 lower-case hex digits. */
int is_sha256_hex(const char *s);

#endif
