/* Nonces for quotes: parsing, and a file of nonces already accepted so a
 * verifier can refuse a replayed quote. */
#ifndef INGOT_ATTEST_NONCE_H
#define INGOT_ATTEST_NONCE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define NONCE_MIN 8    /* 64 bits: a verifier's nonce nobody can guess or exhaust */
#define NONCE_MAX 64   /* TPM2B_DATA holds at most sizeof(TPMU_HA) */

/* The one nonce rule (attest/judge.h): 16..128 hex digits (8..64 bytes),
 * either case. */
int nonce_parse(const char *hex, uint8_t out[NONCE_MAX], size_t *len, ingot_error *e);

/* A verifier's nonce, decoded once where a verdict's inputs are
 * assembled (verify/boot-inputs.h, the CLI's options) and passed down as
 * bytes: the judge and the verdict never parse hex again. */
struct nonce {
	uint8_t bytes[NONCE_MAX];
	size_t len;                    /* NONCE_MIN..NONCE_MAX */
	char hex[2 * NONCE_MAX + 1];   /* the same, lower case, for messages and the seen-nonces file */
};

/* nonce_parse into n (the same rule and message). */
int nonce_decode(const char *hex, struct nonce *n, ingot_error *e);

/* The seen-nonces file holds one lower-case hex nonce per LF-terminated
 * line, nothing else.  Returns 1 when nonce is listed, 0 when not (or the
 * file does not exist), -EBADMSG (file:line:column) when the file is
 * corrupt: a NUL, a CR, any other byte or a missing final LF. */
int nonce_seen(const char *path, const struct nonce *nonce, ingot_error *e);

/* The seen-nonce rule, one for the quote judge and the boot verdict
 * (attest/judge.h checks first and records last, so a refused quote or
 * boot never uses a nonce up): 0 when nonce is not in the file, -EEXIST
 * ("nonce HEX: already used (listed in PATH): refusing a replayed
 * quote") when it is, another -errno when the file cannot be read (the
 * check was not made). */
int nonce_check_unseen(const char *path, const struct nonce *n, ingot_error *e);

/* The parser behind both: buf (len bytes, the file's content) holds lines
 * of 2-128 lower-case hex digits (an even number: the nonces ever
 * recorded), each ending in LF, and nothing else.  1 when hex is one of
 * them, 0 when not, -EBADMSG naming path:line:column when buf is not
 * exactly that. */
int nonce_list_find(const char *path, const char *buf, size_t len, const char *hex, ingot_error *e);

/* Add nonce to the file (created when missing) under an exclusive lock
 * on "<path>.lock"; the file is rewritten atomically.  -EEXIST (and a
 * message) when it is already there, so check-and-record is one step. */
int nonce_record(const char *path, const struct nonce *nonce, ingot_error *e);

#endif
