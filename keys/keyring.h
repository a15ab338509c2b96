/* Keyrings: the public keys a verifier trusts and how many of them must
 * sign.  File format (JSON):
 *   {"keys":[{"name":"release-1","keyid":"<hex>","public_key":"-----BEGIN PUBLIC KEY-----..."}],
 *    "threshold":1}
 * keyid must equal the id computed from public_key (so a keyring cannot
 * claim one key and carry another); names and ids are unique. */
#ifndef INGOT_KEYS_KEYRING_H
#define INGOT_KEYS_KEYRING_H

#include <stddef.h>

#include "keys/key.h"
#include "lib/err.h"

#define KEYRING_FILE_MAX (1u << 20)
#define KEYRING_MAX_KEYS 256
#define KEYRING_NAME_MAX 128

struct keyring_key {
	char *name;
	struct public_key *key;   /* key->keyid is the id */
};

struct keyring {
	char *file;
	struct keyring_key *keys;
	size_t n;
	unsigned threshold;       /* 1 .. n */
};

int keyring_load(const char *path, struct keyring **out, ingot_error *e);
void keyring_free(struct keyring *kr);
static inline void keyring_freep(struct keyring **kr) { if (*kr) keyring_free(*kr); }
#define _cleanup_keyring_ __attribute__((cleanup(keyring_freep)))

/* The key with this id, or NULL. */
const struct keyring_key *keyring_find(const struct keyring *kr, const char *keyid);

/* Add the public key in pub_path under name to the keyring file at path
 * (created with threshold 1 if absent), atomically.  threshold > 0 also
 * sets the threshold.  Refuses a duplicate name or key. */
int keyring_add(const char *path, const char *pub_path, const char *name, unsigned threshold,
		ingot_error *e);

#endif
