/* Signing keys: Ed25519 (default) and ECDSA P-256 with SHA-256, through
 * OpenSSL 3 EVP only.  Files are PEM: PKCS#8 private keys (optionally
 * passphrase-encrypted) and SubjectPublicKeyInfo public keys, so keys
 * made by `openssl genpkey` work and ours work with `openssl pkeyutl`.
 * A key id is the lower-case hex sha256 of the DER SubjectPublicKeyInfo
 * of the key in its one canonical form (P-256: named curve, uncompressed
 * point), so another encoding of the same key has the same id. */
#ifndef INGOT_KEYS_KEY_H
#define INGOT_KEYS_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

#include "lib/err.h"

#define KEYID_HEX_LEN 64
#define KEY_FILE_MAX (64u << 10)     /* a PEM key is < 1 KiB; refuse silly files */
#define KEY_PASSPHRASE_MAX 1024
#define KEY_PASSPHRASE_ENV "INGOT_KEY_PASSPHRASE"

enum key_type { KEY_ED25519, KEY_P256 };

/* A private key.  Loading one makes the process non-dumpable (prctl
 * PR_SET_DUMPABLE 0: no core dumps, no ptrace by other users) for the
 * rest of its life: restoring it on free would be wrong while a second
 * key is still loaded, and ingot's processes are short-lived. */
struct signing_key {
	EVP_PKEY *pkey;
	enum key_type type;
	char keyid[KEYID_HEX_LEN + 1];
	char *path;
};

/* A public key (keyrings, `keys id`). */
struct public_key {
	EVP_PKEY *pkey;
	enum key_type type;
	char keyid[KEYID_HEX_LEN + 1];
};

const char *key_type_name(enum key_type t);          /* "ed25519", "p256" */
int key_type_from_name(const char *s, enum key_type *out);  /* -EINVAL if unknown */

/* Which of our types pkey is; -EINVAL (message names what) for RSA,
 * other curves, ... */
int key_type_of(EVP_PKEY *pkey, const char *what, enum key_type *out, ingot_error *e);
/* Hex sha256 of the DER SubjectPublicKeyInfo of pkey's canonical form. */
int key_id(EVP_PKEY *pkey, char out[KEYID_HEX_LEN + 1], ingot_error *e);

/* Generate a key pair: PREFIX.key (PKCS#8 PEM, mode 0600, encrypted with
 * AES-256-CBC when passphrase is non-NULL and non-empty) and PREFIX.pub
 * (mode 0644).  Refuses to overwrite existing files.  keyid (if non-NULL)
 * gets the new key's id. */
int key_generate(enum key_type type, const char *prefix, const char *passphrase,
		 char keyid[KEYID_HEX_LEN + 1], ingot_error *e);

/* Load a private key.  The passphrase (for encrypted keys) comes from the
 * environment variable INGOT_KEY_PASSPHRASE.  Key files that are not
 * regular files or have any group/other permission bit are refused. */
int signing_key_load(const char *path, struct signing_key **out, ingot_error *e);
/* Same with an explicit passphrase (NULL: none; the CLI reads it from
 * --passphrase-fd, never from argv). */
int signing_key_load_pass(const char *path, const char *passphrase, struct signing_key **out,
			  ingot_error *e);
void signing_key_free(struct signing_key *k);

/* Read a passphrase from fd (up to KEY_PASSPHRASE_MAX bytes, one trailing
 * newline dropped) into secure memory; free with key_passphrase_free. */
int key_read_passphrase_fd(int fd, char **out, ingot_error *e);
void key_passphrase_free(char *p);
static inline void signing_key_freep(struct signing_key **k) { if (*k) signing_key_free(*k); }
#define _cleanup_signing_key_ __attribute__((cleanup(signing_key_freep)))

/* Sign msg: Ed25519 (pure) or ECDSA P-256 over SHA-256, DER-encoded.
 * *sig is malloc'd. */
int signing_key_sign(const struct signing_key *k, const void *msg, size_t len, uint8_t **sig,
		     size_t *siglen, ingot_error *e);

/* Public keys: from a PEM file or a PEM string (name used in messages);
 * a P-256 key is kept in its canonical form whatever its encoding. */
int public_key_load(const char *path, struct public_key **out, ingot_error *e);
int public_key_from_pem(const char *name, const char *pem, size_t len, struct public_key **out,
			ingot_error *e);
/* PEM text of the SubjectPublicKeyInfo (malloc'd, NUL-terminated). */
char *public_key_pem(EVP_PKEY *pkey);
void public_key_free(struct public_key *k);
static inline void public_key_freep(struct public_key **k) { if (*k) public_key_free(*k); }
#define _cleanup_public_key_ __attribute__((cleanup(public_key_freep)))

/* 1 if sig is a valid signature of msg by pkey, 0 if not (never an error:
 * garbage signatures simply do not verify).  ECDSA signatures are DER or,
 * 64 bytes long, raw r || s (IEEE P1363, as other DSSE signers write). */
int key_verify(EVP_PKEY *pkey, const void *msg, size_t len, const uint8_t *sig, size_t siglen);

#endif
