/* Measured-boot policy (see bootpolicy.h). */
#include "attest/bootpolicy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attest/bootpredict.h"
#include "lib/digest.h"
#include "lib/strbuf.h"

#define EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003u
#define SHA256_ALG 0x000b

/* Record the decision; returns v so callers can `return decide(...)`. */
static int decide(struct boot_decision *out, enum boot_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int decide(struct boot_decision *out, enum boot_verdict v, const char *fmt, ...)
{
	va_list ap;
	out->verdict = v;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	return (int)v;
}

const char *boot_verdict_name(enum boot_verdict v)
{
	return v == BOOT_ADMIT ? "admit" : v == BOOT_REFUSE ? "refuse" : "not-made";
}

/* A 32-byte hex member at path "a.b" of the boot object. */
static int get_hex32(const json_t *boot, const char *obj, const char *key, uint8_t out[32])
{
	const json_t *o = obj ? json_object_get(boot, obj) : boot;
	const char *s = json_string_value(json_object_get(o, key));
	return s && is_sha256_hex(s) ? hex_decode(s, out, 32) : -EINVAL;
}

static const uint8_t *quoted_pcr(const struct pcr_bank *b, unsigned pcr)
{
	return b && (b->mask & (1u << pcr)) ? b->value[pcr] : NULL;
}

static void hex32(const uint8_t *d, char out[65])
{
	hex_encode(d, 32, out);
}

/* PCR 4: the boot applications the firmware measured, in log order. */
static int check_pcr4(const struct eventlog *log, const uint8_t uki[32], const uint8_t linux_auth[32],
		       struct boot_decision *out)
{
	size_t apps = 0;
	char got[65], want[65];

	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];
		const uint8_t *d = NULL;
		if (ev->pcr != BOOT_PCR_FIRMWARE_APP || ev->type != EV_EFI_BOOT_SERVICES_APPLICATION)
			continue;
		for (size_t k = 0; k < ev->ndigests; k++)
			if (ev->digests[k].bank->alg == SHA256_ALG)
				d = ev->digests[k].d;
		if (!d)
			return decide(out, BOOT_NOT_MADE, "PCR 4: event %zu carries no sha256 digest", i + 1);
		if (memcmp(d, apps ? linux_auth : uki, 32)) {
			hex32(d, got);
			hex32(apps ? linux_auth : uki, want);
			return decide(out, BOOT_REFUSE, "PCR 4: boot application %zu (event %zu) has Authenticode sha256 %s, "
				      "expected %s (%s): the node booted something else", apps + 1, i + 1, got, want,
				      apps ? "the UKI's kernel" : "the manifest's UKI");
		}
		apps++;
	}
	if (!apps)
		return decide(out, BOOT_REFUSE, "PCR 4: the log measures no boot application");
	return decide(out, BOOT_ADMIT, "PCR 4: the manifest's UKI was the boot application");
}

static int check_value(const struct pcr_bank *q, unsigned pcr, const uint8_t want[32], const char *what,
		       struct boot_decision *out)
{
	const uint8_t *got = quoted_pcr(q, pcr);
	char g[65], w[65];

	if (!got) {
		decide(out, BOOT_NOT_MADE, "PCR %u: not in the quote (quote %s)", pcr, BOOT_QUOTE_PCRS);
		return -1;
	}
	if (memcmp(got, want, 32)) {
		hex32(got, g);
		hex32(want, w);
		decide(out, BOOT_REFUSE, "PCR %u: sha256 %s, expected %s: %s", pcr, g, w, what);
		return -1;
	}
	return 0;
}

static int judge(const json_t *manifest, const struct eventlog *log, const struct pcr_values *quoted,
		 struct boot_decision *out)
{
	const json_t *boot = json_object_get(manifest, "boot");
	const struct pcr_bank *q = pcr_values_find(quoted, SHA256_ALG);
	const char *name = json_string_value(json_object_get(json_object_get(manifest, "recipe"), "name"));
	uint8_t uki[32], linux_auth[32], pcr11[32], root[32], pcr15[32], zero[32] = { 0 }, d[32];
	struct pcr_selection sel;
	ingot_error e = { 0 };
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	const struct bank *sha256 = bank_by_alg(SHA256_ALG);

	if (!boot)
		return decide(out, BOOT_NOT_MADE, "manifest: no boot object (the image was not built with a boot: section)");
	if (get_hex32(boot, "uki", "authenticode_sha256", uki) < 0 ||
	    get_hex32(boot, NULL, "linux_authenticode_sha256", linux_auth) < 0 ||
	    get_hex32(json_object_get(boot, "pcr11"), "predicted", "sha256", pcr11) < 0 ||
	    get_hex32(manifest, "verity", "root_hash", root) < 0 || !name)
		return decide(out, BOOT_NOT_MADE, "manifest: boot: expected uki.authenticode_sha256, "
			      "linux_authenticode_sha256, pcr11.predicted.sha256 and verity.root_hash");
	/* PCR 15 is recomputed from the image's identity, not read from the
	 * manifest: the event the init writes depends on nothing else. */
	if (boot_image_event(name, root, &ev) < 0 || bank_hash(sha256, ev.buf, ev.len, d) < 0 ||
	    (memset(pcr15, 0, 32), bank_extend(sha256, pcr15, d)) < 0)
		return decide(out, BOOT_NOT_MADE, "manifest: recipe.name \"%.64s\" cannot be measured", name);
	if (!q)
		return decide(out, BOOT_NOT_MADE, "quote: no sha256 bank (quote %s)", BOOT_QUOTE_PCRS);
	if (pcr_selection_parse("sha256:4,7,9,11,12", &sel, &e) < 0 || eventlog_compare(log, quoted, &sel, &e) < 0)
		return decide(out, BOOT_REFUSE, "event log: %s", e.msg);
	if (check_pcr4(log, uki, linux_auth, out) != BOOT_ADMIT)
		return out->verdict;
	if (check_value(q, BOOT_PCR_UKI, pcr11, "systemd-stub measured another kernel, initramfs, os-release or command line", out) < 0 ||
	    check_value(q, BOOT_PCR_CMDLINE, zero, "a command line override was measured (the UKI's .cmdline and its root hash were not what booted)", out) < 0 ||
	    check_value(q, BOOT_PCR_IMAGE, pcr15, "expected exactly one extend with the image's event "
			"(another image opened, none, or PCR 15 extended again)", out) < 0)
		return out->verdict;
	return decide(out, BOOT_ADMIT, "booted the manifest's UKI (PCR 4, 11, 12) and opened image %s with dm-verity root %.16s... (PCR 15)",
		      name, json_string_value(json_object_get(json_object_get(manifest, "verity"), "root_hash")));
}

void boot_policy_check(const json_t *manifest, const struct eventlog *log, const struct pcr_values *quoted,
		       struct boot_decision *out)
{
	judge(manifest, log, quoted, out);
}

const char *boot_manifest_pcr15(const json_t *manifest)
{
	const json_t *p = json_object_get(json_object_get(json_object_get(manifest, "boot"), "pcr15"), "predicted");
	return json_string_value(json_object_get(p, "sha256"));
}
