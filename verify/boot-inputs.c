/* The inputs of the one boot verdict, loaded once (verify/boot-inputs.h). */
#include "verify/boot-inputs.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "keys/envelope.h"
#include "keys/firmware-ref-envelope.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/parfor.h"
#include "lib/str.h"
#include "lib/xalloc.h"

int boot_trust_init(struct boot_trust *t, const struct boot_keyrings *k, ingot_error *e)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < BOOT_ROLES; i++) {
		const char *path = k->role[i] ? k->role[i] : k->keyring;
		ingot_error le = { 0 };
		int r;

		if (!path) {
			t->no_key[i] = xasprintf("no keyring is named for the %s role: no key is trusted for %s "
						 "statements", key_role_name(i), key_role_name(i));
			continue;
		}
		/* The common keyring serves a role by its roles section only,
		 * but for manifests, which an untyped one always meant. */
		r = keyring_load_role(path, i, k->role[i] || i == KEY_ROLE_MANIFEST, &t->kr[i], &le);
		if (r == -ENOKEY) {
			t->no_key[i] = xstrdup(le.msg);
			continue;
		}
		if (r < 0) {
			*e = le;
			boot_trust_release(t);
			return r;
		}
		if (k->threshold[i] > t->kr[i]->n) {
			r = ingot_fail(e, -EINVAL, "%s: %s threshold %u: the keyring has %zu keys for the role", path,
				       key_role_name(i), k->threshold[i], t->kr[i]->n);
			boot_trust_release(t);
			return r;
		}
		if (k->threshold[i])
			t->kr[i]->threshold = k->threshold[i];
	}
	return 0;
}

int boot_trust_keyring(const struct boot_trust *t, enum key_role role, const struct keyring **out,
		       ingot_error *e)
{
	if ((unsigned)role < BOOT_ROLES && t->kr[role]) {
		*out = t->kr[role];
		return 0;
	}
	return ingot_fail_kind(e, -ENOKEY, ENVELOPE_FAIL_SIGNATURE, "%s",
			       (unsigned)role < BOOT_ROLES && t->no_key[role] ? t->no_key[role] : "no key is trusted for the role");
}

void boot_trust_release(struct boot_trust *t)
{
	for (unsigned i = 0; i < BOOT_ROLES; i++) {
		if (t->kr[i])
			keyring_free(t->kr[i]);
		free(t->no_key[i]);
	}
	for (size_t i = 0; i < t->n_en; i++)
		enrolment_release(&t->en[i]);
	free(t->en);
	free(t->ak);
	strmap_free(&t->en_of, NULL);
	free(t->fw);
	for (size_t i = 0; i < t->n_mf; i++)
		manifest_free(t->mf[i]);
	free(t->mf);
	memset(t, 0, sizeof(*t));
}

/* boot_trust_keyring, its refusal naming the statement. */
static int role_keyring(const struct boot_trust *t, enum key_role role, const char *path, const struct keyring **kr,
			ingot_error *e)
{
	int r = boot_trust_keyring(t, role, kr, e);

	return r < 0 ? ingot_prefix(e, "%s", path) : 0;
}

/* Record i as the verdict reads it (pointing into the record, its AK
 * parsed once when the record was loaded). */
static struct enrolled_ak enrolled_of(const struct boot_trust *t, size_t i)
{
	return (struct enrolled_ak){ .pem = t->en[i].ak_pem, .ak_id = t->en[i].ak_id, .node = t->en[i].node,
				     .key = t->en[i].ak };
}

int boot_trust_load_enrolment(const struct boot_trust *t, const char *path, struct enrolment *out, ingot_error *e)
{
	const struct keyring *kr = NULL;
	int r;

	/* The record's AK is parsed as it loads, once, not per piece of
	 * evidence: a key that does not parse fails it, naming the file. */
	memset(out, 0, sizeof(*out));
	if ((r = role_keyring(t, KEY_ROLE_ENROLMENT, path, &kr, e)) < 0)
		return r;
	return enrolment_load(path, kr, out, e);
}

/* Room for n more records.  It grows geometrically, and the AKs (which
 * point into the records) are rebuilt only when the records moved:
 * growing by one made loading 100,000 enrolments quadratic (minutes). */
static void reserve_enrolments(struct boot_trust *t, size_t n)
{
	if (t->n_en + n <= t->cap_en)
		return;
	while (t->cap_en < t->n_en + n)
		t->cap_en = t->cap_en ? 2 * t->cap_en : 16;
	t->en = xrealloc(t->en, t->cap_en * sizeof(*t->en));
	t->ak = xrealloc(t->ak, t->cap_en * sizeof(*t->ak));
	for (size_t i = 0; i < t->n_en; i++)
		t->ak[i] = enrolled_of(t, i);
}

/* The record at t->en[t->n_en], reserved and loaded, counted in. */
static void count_enrolment(struct boot_trust *t)
{
	int created;

	t->ak[t->n_en] = enrolled_of(t, t->n_en);
	void **slot = strmap_put(&t->en_of, t->en[t->n_en].node, &created);
	if (created)
		*slot = (void *)(uintptr_t)(t->n_en + 1);
	t->n_en++;
}

void boot_trust_insert_enrolment(struct boot_trust *t, struct enrolment *en)
{
	reserve_enrolments(t, 1);
	t->en[t->n_en] = *en;
	memset(en, 0, sizeof(*en));
	count_enrolment(t);
}

int boot_trust_add_enrolment(struct boot_trust *t, const char *path, ingot_error *e)
{
	struct enrolment en;
	int r = boot_trust_load_enrolment(t, path, &en, e);

	if (r == 0)
		boot_trust_insert_enrolment(t, &en);
	return r;
}

int boot_trust_add_firmware_ref(struct boot_trust *t, const char *path, ingot_error *e)
{
	struct firmware_ref fw;
	const struct keyring *kr = NULL;
	int r;

	if ((r = role_keyring(t, KEY_ROLE_FIRMWARE_REF, path, &kr, e)) < 0 || (r = firmware_ref_load(path, kr, &fw, e)) < 0)
		return r;
	t->fw = xrealloc(t->fw, (t->n_fw + 1) * sizeof(*t->fw));
	t->fw[t->n_fw++] = fw;
	return 0;
}

int boot_trust_add_manifest(struct boot_trust *t, const char *path, time_t now, ingot_error *e)
{
	struct verify_policy pol = { .now = now };
	struct verify_outcome vo;
	const struct keyring *kr = NULL;
	struct manifest *m = NULL;
	int r;

	if ((r = role_keyring(t, KEY_ROLE_MANIFEST, path, &kr, e)) < 0 ||
	    (r = envelope_verify(path, kr, &pol, &m, &vo, e)) < 0)
		return r;
	t->mf = xrealloc(t->mf, (t->n_mf + 1) * sizeof(*t->mf));
	t->mf[t->n_mf++] = m;
	return 0;
}

const char *boot_manifest_vendor(const struct manifest *m)
{
	return json_string_value(json_object_get(m->tuple, "vendor"));
}

int boot_trust_mixed_vendors(const struct boot_trust *t, size_t *a, size_t *b)
{
	const char *first = NULL;

	for (size_t i = 0; i < t->n_mf; i++) {
		const char *v = boot_manifest_vendor(t->mf[i]);
		if (!v)
			continue;
		if (!first) {
			first = v, *a = i;
		} else if (strcmp(first, v)) {
			*b = i;
			return 1;
		}
	}
	return 0;
}

static int only_json(const struct dirent *d)
{
	return d->d_name[0] != '.' && ends_with(d->d_name, ".json");
}

/* Loading a directory of enrolment records on every core: each record's
 * signature check and AK parse are independent, and 100,000 of them took
 * minutes on one.  Records are loaded into their reserved slots, in name
 * order; the first (by name) that fails fails them all. */
struct dir_load {
	const struct boot_trust *t;
	struct enrolment *slot;          /* t->en + t->n_en: one per name */
	const char *dir;
	struct dirent **ents;
};

static int load_one(void *ctx, void *local, size_t i, ingot_error *e)
{
	struct dir_load *l = ctx;
	_cleanup_free_ char *p = path_join(l->dir, l->ents[i]->d_name);

	(void)local;
	return boot_trust_load_enrolment(l->t, p, &l->slot[i], e);
}

static int add_enrolment_dir(struct boot_trust *t, const char *dir, struct dirent **ents, int n, ingot_error *e)
{
	struct dir_load l = { .t = t, .dir = dir, .ents = ents };
	struct parfor pf = { .n = (size_t)n, .min_share = 4, .stop = true, .fn = load_one, .ctx = &l };
	int r;

	if (n == 0)
		return 0;
	reserve_enrolments(t, (size_t)n);
	l.slot = t->en + t->n_en;
	memset(l.slot, 0, (size_t)n * sizeof(*l.slot));
	if ((r = parfor_run(&pf, NULL, e)) < 0) {
		for (int i = 0; i < n; i++)
			enrolment_release(&l.slot[i]);
		return r;
	}
	for (int i = 0; i < n; i++)
		count_enrolment(t);
	return 0;
}

int boot_trust_add_dir(struct boot_trust *t, const char *dir, bool firmware_refs, ingot_error *e)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, only_json, alphasort), r = 0;

	if (n < 0)
		return ingot_fail_kind(e, -errno, ENVELOPE_FAIL_IO, "%s: cannot read directory: %s", dir,
				       strerror(errno));
	if (!firmware_refs)
		r = add_enrolment_dir(t, dir, ents, n, e);
	for (int i = 0; i < n; i++) {
		if (r == 0 && firmware_refs) {
			_cleanup_free_ char *p = path_join(dir, ents[i]->d_name);
			r = boot_trust_add_firmware_ref(t, p, e);
		}
		free(ents[i]);
	}
	free(ents);
	return r;
}

int boot_proof_load(struct boot_proof *p, const char *quote_path, const char *log_path, const struct nonce *nonce,
		    ingot_error *e)
{
	int r;

	memset(p, 0, sizeof(*p));
	if (nonce)
		p->nonce = *nonce;
	if ((r = json_read_file(quote_path, &p->quote, e)) < 0 || (r = eventlog_load(log_path, &p->log, e)) < 0)
		return r;
	return 0;
}

int boot_proof_parse(struct boot_proof *p, const char *name, const json_t *quote, const void *log, size_t log_len,
		     const struct nonce *nonce, ingot_error *e)
{
	memset(p, 0, sizeof(*p));
	if (nonce)
		p->nonce = *nonce;
	if (!json_is_object(quote))
		return ingot_fail(e, -EINVAL, "%s: quote: expected a quote document (JSON object)", name);
	p->quote = json_incref((json_t *)quote);
	return eventlog_parse(name, log, log_len, &p->log, e);
}

void boot_proof_release(struct boot_proof *p)
{
	json_decref(p->quote);
	eventlog_free(&p->log);
	memset(p, 0, sizeof(*p));
}

/* The quote's claimed sha256 PCR i (unproven until the verdict), or NULL. */
static const uint8_t *claimed(const struct pcr_values *v, unsigned i)
{
	const struct pcr_bank *b = pcr_values_find(v, 0x000B /* TPM2_ALG_SHA256 */);

	return b && i < PCR_COUNT && (b->mask & (1u << i)) ? b->value[i] : NULL;
}

const struct enrolled_ak *boot_trust_enrolled(const struct boot_trust *t, const char *node)
{
	uintptr_t k = node ? (uintptr_t)strmap_get(&t->en_of, node) : 0;

	return k ? &t->ak[k - 1] : NULL;
}

const struct firmware_ref *boot_trust_firmware(const struct boot_trust *t, const struct pcr_values *v)
{
	const uint8_t *p0 = claimed(v, BOOT_PCR_FIRMWARE), *p2 = claimed(v, BOOT_PCR_OPTION_ROMS);

	for (size_t i = 0; p0 && p2 && i < t->n_fw; i++)
		if (!memcmp(p0, t->fw[i].pcr0, 32) && !memcmp(p2, t->fw[i].pcr2, 32))
			return &t->fw[i];
	return NULL;
}

void boot_trust_pick(const struct boot_trust *t, const struct boot_proof *p, const char *node, struct boot_pick *out)
{
	struct pcr_values v;
	ingot_error e = { 0 };
	int have = pcr_values_from_json(json_object_get(p->quote, "pcrs"), "quote.pcrs", &v, &e) == 0;
	const uint8_t *p15 = have ? claimed(&v, BOOT_PCR_IMAGE) : NULL;
	char hex[SHA256_HEX_LEN + 1] = "";

	memset(out, 0, sizeof(*out));
	out->ak = boot_trust_enrolled(t, node);
	if (p15)
		hex_encode(p15, 32, hex);
	for (size_t i = 0; i < t->n_mf && !out->manifest; i++) {
		const char *want = manifest_boot_pcr15(t->mf[i]);
		if (want && *hex && !strcmp(want, hex))
			out->manifest = t->mf[i];
	}
	if (!out->manifest) {
		uint64_t best = 0;
		for (size_t i = 0; i < t->n_mf; i++) {
			uint64_t s = t->mf[i]->serial;
			if (!out->manifest || s > best) {
				best = s;
				out->manifest = t->mf[i];
			}
		}
	}
	out->fw = have ? boot_trust_firmware(t, &v) : NULL;
}

void boot_inputs_evidence(const struct boot_proof *p, const struct boot_pick *pick, const char *node,
			  unsigned accept_weak, struct boot_evidence *ev)
{
	*ev = (struct boot_evidence){
		.quote = p->quote, .log = &p->log, .nonce = p->nonce.len ? &p->nonce : NULL, .ak = pick->ak, .node = node,
		.boot = pick->manifest ? &pick->manifest->boot : NULL, .fw = pick->fw, .accept_weak = accept_weak,
	};
}
