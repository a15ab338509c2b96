/* Keyrings: the public keys a verifier trusts and how many of them must
 * sign.  File format (JSON), untyped:
 *   {"keys":[{"name":"release-1","keyid":"<hex>","public_key":"-----BEGIN PUBLIC KEY-----..."}],
 *    "threshold":1}
 * or with roles, as TUF's root names the keys of each role:
 *   {"keys":[...], "roles":{"manifest":{"keys":["release-1"],"threshold":1},
 *                           "enrolment":{"keys":["verifier"],"threshold":1}}}
 * keyid must equal the id computed from public_key (so a keyring cannot
 * claim one key and carry another); names and ids are unique.
 *
 * Each signed statement is verified against the keys of its own role: a
 * key trusted for one role proves nothing in another.  A keyring with
 * roles gives a role the keys (and threshold) it names for it, and none
 * for a role it does not name; an untyped keyring serves only the role
 * its user named it for (keyring_load_role). */
#ifndef INGOT_KEYS_KEYRING_H
#define INGOT_KEYS_KEYRING_H

#include <stdbool.h>
#include <stddef.h>

#include "keys/key.h"
#include "lib/err.h"

#define KEYRING_FILE_MAX (1u << 20)
#define KEYRING_MAX_KEYS 256
#define KEYRING_NAME_MAX 128

/* The statements a keyring vouches for, one role each. */
enum key_role {
	KEY_ROLE_MANIFEST,      /* signed manifests: the images a node may boot */
	KEY_ROLE_ENROLMENT,     /* enrolment records: which AK is a node's */
	KEY_ROLE_FIRMWARE_REF,  /* firmware references: a platform's PCRs 0, 2, 7 */
	KEY_ROLE_EVIDENCE,      /* test evidence about an image (ingot evidence) */
	KEY_ROLE_PROMOTION,     /* promotions of an image to a ring */
	KEY_ROLE_COUNT
};
/* "manifest", "enrolment", "firmware-ref", "evidence", "promotion": the
 * names of the file's "roles" section. */
const char *key_role_name(enum key_role role);
/* A role by name; -EINVAL if none. */
int key_role_parse(const char *name, enum key_role *out);

struct keyring_role {
	size_t *idx;              /* indexes into keys; NULL: the role is not named */
	size_t n;
	unsigned threshold;
};

struct keyring_key {
	char *name;
	struct public_key *key;   /* key->keyid is the id */
};

struct keyring {
	char *file;
	struct keyring_key *keys;
	size_t n;
	unsigned threshold;       /* 1 .. n; 0 for a keyring with roles read whole,
				   * which verifies nothing (keyring_load_role) */
	const char *role;         /* the role it was restricted to (key_role_name);
				   * NULL: read whole */
	bool has_roles;           /* the file has a "roles" section ... */
	struct keyring_role roles[KEY_ROLE_COUNT];   /* ... naming these (read whole only) */
};

/* The whole file (for listing and editing it; a keyring with roles read
 * this way has threshold 0: it verifies nothing). */
int keyring_load(const char *path, struct keyring **out, ingot_error *e);
/* The keys trusted for role, to verify that role's statements with.
 * A keyring with roles: the keys and threshold of its roles.ROLE, and
 * -ENOKEY if it names none for role.  An untyped keyring: all of it
 * when named_for_role (its user named this file for role), else -ENOKEY:
 * an untyped keyring never vouches for a role it was not named for.  The
 * message of -ENOKEY names the file and the role. */
int keyring_load_role(const char *path, enum key_role role, bool named_for_role, struct keyring **out,
		      ingot_error *e);
void keyring_free(struct keyring *kr);
static inline void keyring_freep(struct keyring **kr) { if (*kr) keyring_free(*kr); }
#define _cleanup_keyring_ __attribute__((cleanup(keyring_freep)))

/* The key with this id, or NULL. */
const struct keyring_key *keyring_find(const struct keyring *kr, const char *keyid);

/* Add the public key in pub_path under name to the keyring file at path
 * (created if absent), atomically.  roles 0: an untyped keyring (created
 * with threshold 1), threshold > 0 sets its threshold.  roles a mask of
 * 1u << KEY_ROLE_*: a keyring with roles, the key added to each role
 * (created with threshold 1), threshold > 0 setting theirs.  Refuses a
 * duplicate name or key, roles on an untyped keyring and none on one
 * with roles. */
int keyring_add(const char *path, const char *pub_path, const char *name, unsigned threshold,
		unsigned roles, ingot_error *e);

#endif
