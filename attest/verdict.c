/* The measured-boot verdict (attest/verdict.h). */
#include "attest/verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attest/bootpredict.h"
#include "attest/judge.h"
#include "attest/nonce.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/strbuf.h"

#define SHA256_ALG 0x000b

/* EV_EFI_ACTION strings the firmware may measure into PCR 4 (TCG PC
 * Client Platform Firmware Profile, 10.4.4): allowed by their digest. */
static const char *const pcr4_actions[] = {
	"Calling EFI Application from Boot Option",
	"Returning from EFI Application from Boot Option",
};
/* The separator's defined data: 4 zero bytes (0xFFFFFFFF, an error, is
 * not allowed). */
static const uint8_t separator_data[4];

/* What the manifest predicts, read once. */
struct boot_want {
	const char *name;
	uint8_t apps[2][32];     /* PCR 4: the UKI's Authenticode, then its kernel's */
	uint8_t pcr11[32], pcr15[32];
	int secure_boot;         /* boot.secure_boot present */
	uint8_t signer[32];      /* its signer_cert_sha256 */
};

struct ctx {
	const struct boot_evidence *ev;
	struct boot_result *out;
	const struct pcr_bank *q;   /* the quote's proven sha256 PCRs */
	struct boot_want w;
	char weak_why[256];   /* the first boot weakness, in words */
};

static enum boot_verdict decide(struct boot_result *out, enum boot_verdict v, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum boot_verdict decide(struct boot_result *out, enum boot_verdict v, int code, const char *fmt, ...)
{
	va_list ap;
	out->verdict = v;
	out->code = code;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	return v;
}

const char *boot_verdict_name(enum boot_verdict v)
{
	static const char *const names[] = { "admit", "refuse", "unverified", "not-made" };
	return (unsigned)v < 4 ? names[v] : "unknown";
}

static void hex32(const uint8_t *d, char out[65])
{
	hex_encode(d, 32, out);
}

static int read_manifest(const struct boot_prediction *m, struct boot_want *w, struct boot_result *out)
{
	const unsigned need = MB_UKI | MB_LINUX | MB_PCR11 | MB_IMAGE;
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	const struct bank *sha256 = bank_by_alg(SHA256_ALG);
	uint8_t d[32];

	w->name = m ? m->name : NULL;
	if (!m || !(m->have & MB_BOOT))
		return decide(out, BOOT_NOT_MADE, -EINVAL, "manifest: no boot object (the image was not built with a boot: section)");
	if ((m->have & need) != need)
		return decide(out, BOOT_NOT_MADE, -EINVAL, "manifest: boot: expected uki.authenticode_sha256, "
			      "linux_authenticode_sha256, pcr11.predicted.sha256 and verity.root_hash");
	memcpy(w->apps[0], m->uki, 32);
	memcpy(w->apps[1], m->linux_app, 32);
	memcpy(w->pcr11, m->pcr11, 32);
	/* PCR 15 is recomputed from the image's identity, not read from the
	 * manifest: the event the init writes depends on nothing else. */
	if (boot_image_event(w->name, m->root, &ev) < 0 || bank_hash(sha256, ev.buf, ev.len, d) < 0 ||
	    (memset(w->pcr15, 0, 32), bank_extend(sha256, w->pcr15, d)) < 0)
		return decide(out, BOOT_NOT_MADE, -EINVAL, "manifest: recipe.name \"%.64s\" cannot be measured", w->name);
	/* boot.secure_boot's signer is checked by the schema when present. */
	if (m->have & MB_SECURE_BOOT) {
		memcpy(w->signer, m->signer, 32);
		w->secure_boot = 1;
	}
	return BOOT_ADMIT;
}

/* The quote, judged by attest/judge.h with the enrolled AK (or, with
 * none, the quote's own: consistency only, never admitted). */
static enum boot_verdict judge_quote(struct ctx *c)
{
	const struct boot_evidence *ev = c->ev;
	struct pcr_selection cover = { 0 }, logsel = { 0 };
	struct attest_expect x = {
		.nonce = ev->nonce, .ak_pem = ev->ak ? ev->ak->pem : NULL,
		.ak = ev->ak ? ev->ak->key : NULL, .cover = &cover,
		.log = ev->log, .log_sel = &logsel, .accept_weak = ev->accept_weak,
		.aks = ev->aks,
		/* Checked by the judge, recorded only once the boot is
		 * admitted (a refused boot never uses a nonce up). */
		.seen_nonces = ev->seen_nonces, .seen_check_only = 1,
	};
	ingot_error e = { 0 };
	int r;

	pcr_selection_add(&cover, SHA256_ALG, BOOT_QUOTE_PCR_MASK);
	pcr_selection_add(&logsel, SHA256_ALG, BOOT_LOG_PCR_MASK);
	r = attest_judge(ev->quote, &x, &c->out->qi, &e);
	c->out->quote_reason = c->out->qi.reason;
	c->out->weak |= c->out->qi.weak;
	if (r == 0) {
		c->q = pcr_values_find(&c->out->qi.pcrs, SHA256_ALG);
		return BOOT_ADMIT;
	}
	/* A check that could not be made, or a log that cannot be compared
	 * at all, is not a refusal. */
	if (c->out->qi.reason == VERDICT_NONCE_REUSED)
		return decide(c->out, BOOT_REFUSE, r, "%s", e.msg);
	if (c->out->qi.reason == VERDICT_NOT_MADE || (c->out->qi.reason == VERDICT_LOG_MISMATCH && e.code != -EBADMSG))
		return decide(c->out, BOOT_NOT_MADE, r, "%s", e.msg);
	if (c->out->qi.reason == VERDICT_WRONG_AK && ev->ak)
		return decide(c->out, BOOT_REFUSE, r, "quote refused (wrong-ak): not signed by the enrolled AK %.16s: %s",
			      ev->ak->ak_id ? ev->ak->ak_id : "", e.msg);
	return decide(c->out, BOOT_REFUSE, r, "quote refused (%s): %s", attest_verdict_name(c->out->qi.reason), e.msg);
}

/* SecureBoot as the log's PCR 7 variable event says (its data was checked
 * against its digest, and the log replays to the quoted PCR 7). */
static int log_secure_boot_on(const struct eventlog *log)
{
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];
		struct efi_variable var;
		if (ev->pcr == BOOT_PCR_SECURE_BOOT && ev->type == EV_EFI_VARIABLE_DRIVER_CONFIG &&
		    eventlog_efi_variable(ev, &var) == 0 && !strcmp(var.name, "SecureBoot"))
			return var.len == 1 && var.data[0] == 1;
	}
	return 0;
}

/* PCR 4: every event allowed by its digest, whatever its type says. */
static enum boot_verdict judge_pcr4(struct ctx *c)
{
	static const char *const app_name[2] = { "the manifest's UKI", "the UKI's kernel" };
	const struct eventlog *log = c->ev->log;
	const struct bank *b = bank_by_alg(SHA256_ALG);
	uint8_t sep[32], act[ARRAY_SIZE(pcr4_actions)][32];
	size_t apps = 0;
	/* Under Secure Boot systemd-stub (252) starts a kernel that db does not
	 * verify through its own security override, which firmware does not
	 * measure: only the UKI is logged (seen in make boot-test).  Without
	 * Secure Boot, or with a kernel db verifies, the kernel is logged too.
	 * Either way nothing but the predicted digests, in order. */
	size_t min_apps = log_secure_boot_on(log) ? 1 : 2;
	char got[65], want[65];

	bank_hash(b, separator_data, sizeof(separator_data), sep);
	for (size_t k = 0; k < ARRAY_SIZE(pcr4_actions); k++)
		bank_hash(b, pcr4_actions[k], strlen(pcr4_actions[k]), act[k]);
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];
		const uint8_t *d;
		const char *tn = eventlog_type_name(ev->type);
		size_t k;

		if (ev->pcr != BOOT_PCR_FIRMWARE_APP || ev->type == EV_NO_ACTION)
			continue;
		if (!(d = eventlog_event_digest(ev, SHA256_ALG)))
			return decide(c->out, BOOT_NOT_MADE, -EBADMSG, "PCR 4: event %zu carries no sha256 digest", i + 1);
		if (!memcmp(d, sep, 32))
			continue;
		for (k = 0; k < ARRAY_SIZE(act) && memcmp(d, act[k], 32); k++)
			;
		if (k < ARRAY_SIZE(act))
			continue;
		hex32(d, got);
		if (apps == 2)
			return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 4: event %zu (logged as %s) has digest %s: an extra "
				      "boot application or other event after the UKI and its kernel: refused",
				      i + 1, tn ? tn : "an unknown type", got);
		if (memcmp(d, c->w.apps[apps], 32)) {
			hex32(c->w.apps[apps], want);
			return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 4: boot application %zu (event %zu, logged as %s) "
				      "has digest %s, expected %s (%s): the node booted something else", apps + 1, i + 1,
				      tn ? tn : "an unknown type", got, want, app_name[apps]);
		}
		apps++;
	}
	if (apps < min_apps)
		return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 4: the log measures %zu of the %zu predicted boot "
			      "applications (the UKI%s)", apps, min_apps, min_apps == 2 ? ", then its kernel" : "");
	return BOOT_ADMIT;
}

static const uint8_t *fw_var(const struct firmware_ref *fw, const char *name)
{
	for (size_t i = 0; fw && i < fw->nvars; i++)
		if (!strcmp(fw->vars[i].name, name))
			return fw->vars[i].digest;
	return NULL;
}

static int fw_auth(const struct firmware_ref *fw, const uint8_t cert[32])
{
	for (size_t i = 0; fw && i < fw->nauth; i++)
		if (!memcmp(fw->auth[i], cert, 32))
			return 1;
	return 0;
}

/* Record a boot weakness; refused at the end unless accepted. */
static void weakness(struct ctx *c, unsigned bit, const char *why)
{
	if (!(c->out->weak & bit) && !c->weak_why[0] && !(c->ev->accept_weak & bit))
		snprintf(c->weak_why, sizeof(c->weak_why), "%s", why);
	c->out->weak |= bit;
}

/* PCR 7, when the manifest names its Secure Boot signer. */
static enum boot_verdict judge_pcr7(struct ctx *c)
{
	const struct eventlog *log = c->ev->log;
	const struct firmware_ref *fw = c->ev->fw;
	uint8_t sep[32], cert[32];
	int secure_boot = 0, signer = 0;
	size_t seen_vars = 0;
	char got[65], want[65];

	if (!c->w.secure_boot) {
		weakness(c, WEAK_SECURE_BOOT_UNJUDGED, "PCR 7 not judged: the manifest names no Secure Boot signer "
			 "(boot.secure_boot)");
		return BOOT_ADMIT;
	}
	bank_hash(bank_by_alg(SHA256_ALG), separator_data, sizeof(separator_data), sep);
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];
		const uint8_t *d = eventlog_event_digest(ev, SHA256_ALG), *ref;
		struct efi_variable var;

		if (ev->pcr != BOOT_PCR_SECURE_BOOT || ev->type == EV_NO_ACTION)
			continue;
		if (!d)
			return decide(c->out, BOOT_NOT_MADE, -EBADMSG, "PCR 7: event %zu carries no sha256 digest", i + 1);
		if (!memcmp(d, sep, 32))
			continue;
		/* The data of these two types was checked against the digest. */
		if (ev->type == EV_EFI_VARIABLE_DRIVER_CONFIG && eventlog_efi_variable(ev, &var) == 0) {
			if (!strcmp(var.name, "SecureBoot"))
				secure_boot = var.len == 1 && var.data[0] == 1 ? 1 : -1;
			if (fw && fw->nvars) {
				if (!(ref = fw_var(fw, var.name)))
					return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: event %zu: variable %s is not in "
						      "firmware reference %s", i + 1, var.name, fw->platform);
				if (memcmp(ref, d, 32)) {
					hex32(d, got);
					hex32(ref, want);
					return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: event %zu: variable %s has digest %s, "
						      "firmware reference %s has %s (other Secure Boot keys or state)",
						      i + 1, var.name, got, fw->platform, want);
				}
				seen_vars++;
			}
			continue;
		}
		if (firmware_authority_cert(ev, cert) == 0) {
			if (!memcmp(cert, c->w.signer, 32))
				signer = 1;
			else if (!fw_auth(fw, cert)) {
				hex32(cert, got);
				return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: event %zu: code verified by certificate "
					      "sha256 %s, neither the manifest's signer nor in the firmware reference", i + 1, got);
			}
			continue;
		}
		hex32(d, got);
		return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: event %zu (logged as %s) has digest %s: not a "
			      "separator, Secure Boot variable or authority: refused", i + 1,
			      eventlog_type_name(ev->type) ?: "an unknown type", got);
	}
	if (secure_boot != 1)
		return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: %s: the manifest's UKI is signed for Secure Boot",
			      secure_boot ? "SecureBoot is 0 (Secure Boot off)" : "no SecureBoot variable measured");
	if (!signer) {
		hex32(c->w.signer, want);
		return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: no authority event with the manifest's signer "
			      "certificate %.16s...: the UKI was not verified by it", want);
	}
	if (fw && fw->nvars && seen_vars < fw->nvars)
		return decide(c->out, BOOT_REFUSE, -EPERM, "PCR 7: %zu of firmware reference %s's %zu Secure Boot "
			      "variables measured", seen_vars, fw->platform, fw->nvars);
	if (fw && !fw->nvars)
		weakness(c, WEAK_UNKNOWN_FIRMWARE, "PCR 7 keys (PK, KEK, db, dbx) not judged: the firmware "
			 "reference records none");
	return BOOT_ADMIT;
}

static enum boot_verdict check_value(struct ctx *c, unsigned pcr, const uint8_t want[32], const char *what)
{
	char g[65], w[65];

	if (!memcmp(c->q->value[pcr], want, 32))
		return BOOT_ADMIT;
	hex32(c->q->value[pcr], g);
	hex32(want, w);
	return decide(c->out, BOOT_REFUSE, -EPERM, "PCR %u: sha256 %s, expected %s: %s", pcr, g, w, what);
}

static enum boot_verdict judge_firmware(struct ctx *c)
{
	const struct firmware_ref *fw = c->ev->fw;
	char what[256];

	if (!fw) {
		weakness(c, WEAK_UNKNOWN_FIRMWARE, "PCRs 0 and 2 not judged: no firmware reference for this platform");
		return BOOT_ADMIT;
	}
	snprintf(what, sizeof(what), "not firmware reference %s's firmware", fw->platform);
	if (check_value(c, BOOT_PCR_FIRMWARE, fw->pcr0, what) != BOOT_ADMIT)
		return c->out->verdict;
	snprintf(what, sizeof(what), "not firmware reference %s's option ROMs", fw->platform);
	return check_value(c, BOOT_PCR_OPTION_ROMS, fw->pcr2, what);
}

static enum boot_verdict judge(struct ctx *c)
{
	const struct boot_evidence *ev = c->ev;
	const uint8_t zero[32] = { 0 };
	ingot_error e = { 0 };
	int r;

	if (read_manifest(ev->boot, &c->w, c->out) != BOOT_ADMIT)
		return c->out->verdict;
	if (!ev->log)
		return decide(c->out, BOOT_NOT_MADE, -EINVAL, "no firmware event log: measured boot not checked");
	if (judge_quote(c) != BOOT_ADMIT)
		return c->out->verdict;
	if (!c->q)
		return decide(c->out, BOOT_NOT_MADE, -EINVAL, "quote: no sha256 bank (quote %s)", BOOT_QUOTE_PCRS);
	if ((r = eventlog_check_data(ev->log, &e)) < 0)
		return decide(c->out, BOOT_REFUSE, r, "%s", e.msg);
	if (judge_pcr4(c) != BOOT_ADMIT || judge_pcr7(c) != BOOT_ADMIT || judge_firmware(c) != BOOT_ADMIT)
		return c->out->verdict;
	if (check_value(c, BOOT_PCR_UKI, c->w.pcr11, "systemd-stub measured another kernel, initramfs, os-release or "
			"command line") != BOOT_ADMIT ||
	    check_value(c, BOOT_PCR_CMDLINE, zero, "a command line override was measured (the UKI's .cmdline and its "
			"root hash were not what booted)") != BOOT_ADMIT ||
	    check_value(c, BOOT_PCR_IMAGE, c->w.pcr15, "expected exactly one extend with the image's event "
			"(another image opened, none, or PCR 15 extended again)") != BOOT_ADMIT)
		return c->out->verdict;
	if (ev->ak && ev->ak->node && *ev->ak->node && ev->node && strcmp(ev->ak->node, ev->node))
		return decide(c->out, BOOT_REFUSE, -EPERM, "AK %.16s is enrolled for node %s, not %s", c->out->qi.ak_id,
			      ev->ak->node, ev->node);
	if (c->weak_why[0]) {
		_cleanup_strbuf_ struct strbuf w = STRBUF_INIT;
		attest_weakness_format(c->out->weak & ~ev->accept_weak, &w);
		c->out->quote_reason = VERDICT_WEAK;
		return decide(c->out, BOOT_REFUSE, -EPERM, "weak evidence refused by policy: %s (accept with "
			      "--accept-weak %s)", c->weak_why, w.buf);
	}
	if (!ev->ak)
		return decide(c->out, BOOT_UNVERIFIED, -EPERM, "no enrolled AK: nothing shows AK %.16s is a TPM's "
			      "(an AK carried by the evidence proves nothing); everything else agrees",
			      c->out->qi.ak_id);
	return BOOT_ADMIT;
}

enum boot_verdict attest_boot_verdict(const struct boot_evidence *ev, struct boot_result *out)
{
	struct ctx c = { .ev = ev, .out = out };
	_cleanup_strbuf_ struct strbuf w = STRBUF_INIT;
	const struct attest_expect seen = { .nonce = ev->nonce, .seen_nonces = ev->seen_nonces };
	ingot_error e = { 0 };
	int r;

	memset(out, 0, sizeof(*out));
	if (judge(&c) != BOOT_ADMIT)
		return out->verdict;
	if ((r = attest_seen_nonce(&seen, 1, &out->quote_reason, &e)) < 0)
		return decide(out, out->quote_reason == VERDICT_NONCE_REUSED ? BOOT_REFUSE : BOOT_NOT_MADE, r, "%s", e.msg);
	attest_weakness_format(out->weak, &w);
	return decide(out, BOOT_ADMIT, 0, "booted the manifest's UKI (PCR 4, 11, 12)%s%s%s, opened image %s (PCR 15), "
		      "quoted by enrolled AK %.16s%s%s", c.w.secure_boot ? " under Secure Boot (PCR 7)" : "",
		      ev->fw ? ", firmware of reference " : "", ev->fw ? ev->fw->platform : "", c.w.name,
		      out->qi.ak_id, w.len ? "; accepted weaknesses: " : "", w.len ? w.buf : "");
}
