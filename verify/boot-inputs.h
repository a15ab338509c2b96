/* The inputs of the one boot verdict (attest/verdict.h), each read,
 * verified and decoded once, in one place: `ingot attest boot-check` and
 * `firmware-ref` load them from files, `ingot verify` its trust, `ingot
 * serve` holds the trusted part for its lifetime and decodes each node's
 * evidence from a request, `ingot audit` from each node's report.
 *
 * Two halves:
 *   - the trust (struct boot_trust): one keyring and threshold per role
 *     (keys/keyring.h), and what each vouches for: enrolment records (the
 *     AK of a node), firmware references (a platform's PCRs 0, 2 and 7)
 *     and manifest envelopes (the images a node may boot), each verified
 *     when added against its own role's keys only;
 *   - the proof (struct boot_proof): the node's quote document, its
 *     firmware event log and the verifier's nonce, decoded (the nonce
 *     once, by whoever took it in: nonce_decode; the judge and the
 *     verdict get its bytes).
 * boot_inputs_evidence joins them into the verdict's struct boot_evidence. */
#ifndef INGOT_VERIFY_BOOT_INPUTS_H
#define INGOT_VERIFY_BOOT_INPUTS_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "attest/eventlog.h"
#include "attest/firmware-ref.h"
#include "attest/nonce.h"
#include "attest/verdict.h"
#include "keys/enrolment.h"
#include "keys/keyring.h"
#include "lib/err.h"
#include "lib/strmap.h"

/* The roles of the verdict's statements (keys/keyring.h), indexes of
 * boot_trust's keyrings. */
#define BOOT_ROLES (KEY_ROLE_FIRMWARE_REF + 1)

/* Where each role's keys come from.  keyring: a keyring with roles (each
 * role its roles.ROLE), or an untyped one, then the manifest role's only
 * (what --keyring always meant to `ingot verify`); role[R]: a keyring
 * named for role R (an untyped one all of it, one with roles its
 * roles.R), in place of keyring's.  threshold[R] > 0: the signatures R
 * needs, in place of the keyring's (1 .. its keys for R), as a ring
 * policy sets a keyring's.  A role from neither has no key: its
 * statements are refused, naming the role. */
struct boot_keyrings {
	const char *keyring;
	const char *role[BOOT_ROLES];
	unsigned threshold[BOOT_ROLES];
};

struct boot_trust {
	struct keyring *kr[BOOT_ROLES];   /* NULL: no key trusted for the role ... */
	char *no_key[BOOT_ROLES];         /* ... and why (the loader's message) */
	struct enrolment *en;           /* n_en records, in the order added */
	struct enrolled_ak *ak;         /* the same, as the verdict reads them */
	size_t n_en, cap_en;            /* cap_en: room in en and ak */
	struct strmap en_of;            /* node -> index + 1 into en (first added wins) */
	struct firmware_ref *fw;
	size_t n_fw;
	struct manifest **mf;           /* verified manifests (own) */
	size_t n_mf;
};

/* Load each role's keyring: the trust starts empty (zeroed first).  A
 * keyring that cannot be read or parsed fails it (e->kind as
 * keyring_load sets it); a role no keyring gives keys is recorded, not
 * failed: its statements are refused when added. */
int boot_trust_init(struct boot_trust *t, const struct boot_keyrings *k, ingot_error *e);
/* The keyring of role (< BOOT_ROLES), or -ENOKEY, ENVELOPE_FAIL_SIGNATURE,
 * saying why none is trusted for it. */
int boot_trust_keyring(const struct boot_trust *t, enum key_role role, const struct keyring **out,
		       ingot_error *e);
void boot_trust_release(struct boot_trust *t);

/* Add one signed statement, verified against its role's keyring (never
 * another role's); e->kind is an
 * ENVELOPE_FAIL_* on failure (an unreadable file is IO, a bad signature
 * SIGNATURE), nothing added.  A manifest is verified as `ingot
 * verify-manifest` does it (signatures, statement, schema, expiry at
 * now). */
int boot_trust_add_enrolment(struct boot_trust *t, const char *path, ingot_error *e);
/* boot_trust_add_enrolment in two halves: load and verify a record
 * against t's enrolment keys (t unchanged: under a reader's lock, or
 * none, since the keyrings never change), then insert it (taking what
 * *en owns; a node's first record added wins). */
int boot_trust_load_enrolment(const struct boot_trust *t, const char *path, struct enrolment *out, ingot_error *e);
void boot_trust_insert_enrolment(struct boot_trust *t, struct enrolment *en);
int boot_trust_add_firmware_ref(struct boot_trust *t, const char *path, ingot_error *e);
int boot_trust_add_manifest(struct boot_trust *t, const char *path, time_t now, ingot_error *e);

/* The GPU vendor a manifest's tuple declares (tuple.vendor), or NULL: a
 * manifest without one declares no GPU stack. */
const char *boot_manifest_vendor(const struct manifest *m);
/* Whether the trusted manifests declare two vendors: 1 with *a and *b
 * the first such pair (indexes into t->mf), else 0.  One pool's images
 * are one vendor's unless its policy says otherwise (the caller's), so
 * it is asked once, when the manifests are loaded. */
int boot_trust_mixed_vendors(const struct boot_trust *t, size_t *a, size_t *b);

/* Every *.json in dir added as an enrolment record or a firmware
 * reference (sorted by name); the first that does not verify fails it
 * all: an operator who named a directory expects all of it to count.
 * Enrolment records are loaded on every core. */
int boot_trust_add_dir(struct boot_trust *t, const char *dir, bool firmware_refs, ingot_error *e);

/* The node's evidence, decoded. */
struct boot_proof {
	json_t *quote;                       /* the quote document (attest/quote.h) */
	struct eventlog log;
	struct nonce nonce;                  /* len 0 when none was issued */
};

/* From files (boot-check): the quote document and the log. */
int boot_proof_load(struct boot_proof *p, const char *quote_path, const char *log_path, const struct nonce *nonce,
		    ingot_error *e);
/* From bytes (a request, a node report): quote is borrowed (a reference
 * is taken), log is the raw binary log; name labels messages.  nonce
 * (copied) NULL: the verifier issued none (an audit without --nonces), so
 * the evidence is at best weak (no-nonce); a verifier that issues nonces
 * always passes its own. */
int boot_proof_parse(struct boot_proof *p, const char *name, const json_t *quote, const void *log, size_t log_len,
		     const struct nonce *nonce, ingot_error *e);
void boot_proof_release(struct boot_proof *p);

/* The node's enrolled AK (its first record added), or NULL. */
const struct enrolled_ak *boot_trust_enrolled(const struct boot_trust *t, const char *node);
/* The firmware reference whose PCRs 0 and 2 the quote claims (claimed:
 * its sha256 bank, unproven until the verdict), or NULL: unknown firmware. */
const struct firmware_ref *boot_trust_firmware(const struct boot_trust *t, const struct pcr_values *claimed);

/* Which trusted statements judge a proof. */
struct boot_pick {
	const struct enrolled_ak *ak;      /* NULL: none (at best unverified) */
	const struct manifest *manifest;   /* NULL: none (not made) */
	const struct firmware_ref *fw;     /* NULL: unknown firmware */
};

/* As an auditor picks them (ingot audit): the node's enrolment record;
 * the manifest whose predicted PCR 15 the quote claims (else the one of
 * highest serial, which the verdict then refuses by its PCRs); the
 * firmware reference whose PCRs 0 and 2 the quote claims.  The verdict
 * proves each claim or refuses: a claim only chooses what to check. */
void boot_trust_pick(const struct boot_trust *t, const struct boot_proof *p, const char *node, struct boot_pick *out);

/* The verdict's input from the proof and the picked statements (borrowed:
 * valid while t and p are). */
void boot_inputs_evidence(const struct boot_proof *p, const struct boot_pick *pick, const char *node,
			  unsigned accept_weak, struct boot_evidence *ev);

#endif
