#include "verify/tuplecheck.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/version.h"
#include "recipes/tuple-fields.h"
#include "recipes/tuple.h"

/* The declared value of a row of the one tuple-field table, as text (a
 * list comma-joined, a boolean "true"/"false"), or NULL when the tuple
 * does not set it. */
static const char *declared(const struct tuple *t, const struct tuple_field *f, char *buf, size_t n)
{
	const struct tuple_value *v = tuple_get(t, f->path);
	size_t len = 0;

	if (!v)
		return NULL;
	switch (v->type) {
	case TUPLE_BOOL:
		snprintf(buf, n, "%s", v->b ? "true" : "false");
		break;
	case TUPLE_LIST:
		buf[0] = '\0';
		for (size_t i = 0; i < v->n_list && len + strlen(v->list[i]) + 2 < n; i++)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", v->list[i]);
		break;
	default:
		snprintf(buf, n, "%s", v->str);
		break;
	}
	return buf;
}

/* A declared component must be found on the node when the image carries
 * it (the tuple names its artifact: "<component>.artifact") or when it
 * is the node's own identity (vendor, loaded driver); otherwise it may
 * live in containers only. */
static int must_be_on_node(const struct tuple *t, const struct tuple_field *f)
{
	char path[96];
	const char *dot = strchr(f->path, '.');

	if (f < tuple_fields + TUPLE_FIELDS_DRIVER_END)
		return 1;
	if (!dot)
		return 0;
	snprintf(path, sizeof(path), "%.*s.artifact", (int)(dot - f->path), f->path);
	return tuple_get(t, path) != NULL;
}

/* Every probed model (comma list) must name one of the declared models as
 * a whole word: "H100" matches "NVIDIA H100 80GB HBM3", not "H1000". */
static int models_match(const char *declared, const char *probed)
{
	char pbuf[512];
	snprintf(pbuf, sizeof(pbuf), "%s", probed);
	char *save = NULL;
	for (char *m = strtok_r(pbuf, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		int ok = 0;
		const char *d = declared;
		while (*d && !ok) {
			size_t dl = strcspn(d, ",");
			for (const char *s = m; *s && !ok; s++) {
				if (strncasecmp(s, d, dl))
					continue;
				int left = s == m || !isalnum((unsigned char)s[-1]);
				int right = !isalnum((unsigned char)s[dl]);
				ok = left && right;
			}
			d += dl + (d[dl] == ',');
		}
		if (!ok)
			return 0;
	}
	return 1;
}

static int values_match(enum tuple_match how, const char *want, const char *have)
{
	char a[128], b[128];
	if (strchr(have, ','))
		return 0;   /* several versions on one node never match one pin */
	switch (how) {
	case MATCH_EXACT:
		return !strcmp(want, have);
	case MATCH_MODEL:
		return models_match(want, have);
	case MATCH_VERSION:
	case MATCH_PREFIX:
		if (!version_upstream(want, a, sizeof(a)) || !version_upstream(have, b, sizeof(b)))
			return !strcmp(want, have);
		if (how == MATCH_VERSION)
			return version_components(a) == version_components(b) && version_cmp(a, b) == 0;
		return version_prefix_match(a, b);
	}
	return 0;
}

struct state {
	struct verify_report *r;
	json_t *fields;
	char first[512];
	unsigned mismatches;
	char first_not_made[1024];
	json_t *not_made_list;
	unsigned not_made;      /* comparisons whose node side could not be read */
};

static void mismatch(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(struct state *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!s->mismatches++)
		snprintf(s->first, sizeof(s->first), "%s", line);
	report_evidence(s->r, CHECK_TUPLE, "mismatch: %s", line);
}

static void record(struct state *s, const char *name, const char *want, const char *have,
		   const char *source, int match)
{
	json_object_set_new(s->fields, name, json_pack("{s:o, s:o, s:s, s:b}",
		"manifest", want ? json_string(want) : json_null(),
		"node", have ? json_string(have) : json_null(),
		"source", source ? source : "", "match", match));
}

/* A comparison that was required but could not be made: listed in the
 * details' "not_made" (not among the compared "fields", whose match=false
 * means drift), and the check ends in error, never pass, unless something
 * refuses. */
static void not_made(struct state *s, const char *name, const char *want, const char *source,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void not_made(struct state *s, const char *name, const char *want, const char *source,
		     const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(s->not_made_list, json_pack("{s:s, s:o, s:s, s:s}", "field", name,
		"manifest", want ? json_string(want) : json_null(),
		"source", source ? source : "not probed", "comparison", line));
	if (!s->not_made++)
		snprintf(s->first_not_made, sizeof(s->first_not_made), "not made: %s (%s)", line,
			 source ? source : "not probed");
	report_evidence(s->r, CHECK_TUPLE, "not made: %s (%s)", line, source ? source : "not probed");
}

/* Could the probe not read a fact it looked for (as opposed to finding
 * nothing there)? */
static int unreadable(const struct node_probe *p, const char *key)
{
	const struct probe_fact *f = probe_find(p, key);
	return f && !f->value && f->unreadable;
}

/* Where a fact came from; probes rebuilt from a report (the audit) may
 * lack facts this probe always records. */
static const char *source_of(const struct node_probe *p, const char *key)
{
	const struct probe_fact *f = probe_find(p, key);
	return f ? f->source : "not probed";
}

/* Facts of the node that must agree with each other whatever the tuple says. */
static void consistency(struct state *s, const struct tuple *tuple, const struct node_probe *p)
{
	const char *fm_key = tuple_fields[TF_FABRIC_MANAGER].probe;
	const char *drv = probe_get(p, tuple_fields[TF_DRIVER].probe);
	const char *fm = probe_get(p, fm_key);
	const char *nvs = probe_get(p, "nvswitch.count");
	const struct tuple_value *decl_nvs = tuple_get(tuple, tuple_fields[TF_NVSWITCH].path);
	int nvswitch = (decl_nvs && decl_nvs->b) || (nvs && strcmp(nvs, "0"));
	const char *vendor = probe_get(p, tuple_fields[TF_VENDOR].probe);

	/* What follows holds NVIDIA's parts against each other; the in-tree
	 * amdgpu is the kernel's own and has none of them. */
	if (vendor && !strcmp(vendor, "amd"))
		return;

	/* rule: nv-fabricmanager must equal the driver exactly on NVSwitch systems
	 * (else CUDA error 802, "system not yet initialized"). */
	if (nvswitch && drv && fm) {
		int ok = values_match(MATCH_VERSION, drv, fm);
		record(s, "fabric_manager==driver", drv, fm,
		       source_of(p, fm_key), ok);
		if (!ok)
			mismatch(s, "fabric manager %s != driver %s", fm, drv);
		else
			report_evidence(s->r, CHECK_TUPLE, "ok: fabric manager %s == driver (NVSwitch)", fm);
	} else if (nvswitch && drv && !fm) {
		record(s, "fabric_manager==driver", drv, NULL,
		       source_of(p, fm_key), 0);
		mismatch(s, "NVSwitch system without fabric manager (driver %s)", drv);
	}
	const char *ko = probe_get(p, "driver.ko_version");
	if (drv && ko) {
		int ok = values_match(MATCH_VERSION, ko, drv);
		record(s, "loaded==nvidia.ko", ko, drv, source_of(p, "driver.ko_version"), ok);
		if (!ok)
			mismatch(s, "loaded driver %s != image's nvidia.ko %s", drv, ko);
	} else if (drv) {
		/* A loaded NVIDIA module the image's own module cannot be held
		 * against: unreadable, unparsable or absent, it is not a pass. */
		not_made(s, "loaded==nvidia.ko", NULL, source_of(p, "driver.ko_version"),
			 "loaded driver %s vs the image's nvidia.ko", drv);
	}
	/* NVML and libcuda refuse a module of another version ("Driver/library
	 * version mismatch"): the image's user space must match what is loaded. */
	const char *ul = probe_get(p, "driver.userspace_version");
	if (drv && ul) {
		int ok = values_match(MATCH_VERSION, drv, ul);
		record(s, "userspace==driver", drv, ul, source_of(p, "driver.userspace_version"), ok);
		if (!ok)
			mismatch(s, "NVIDIA user-space libraries %s != loaded driver %s", ul, drv);
	}
	const char *smi = probe_get(p, "gpu.driver_version");
	if (drv && smi && !values_match(MATCH_VERSION, drv, smi))
		mismatch(s, "nvidia-smi reports driver %s, module %s", smi, drv);
	const char *gsp = probe_get(p, "firmware.gsp");
	if (drv && gsp) {
		int ok = values_match(MATCH_VERSION, drv, gsp);
		record(s, "firmware.gsp==driver", drv, gsp, source_of(p, "firmware.gsp"), ok);
		if (!ok)
			mismatch(s, "GSP firmware %s != driver %s", gsp, drv);
	}
}

/* No GPU driver loaded (no GPU, or the module not loaded yet): what the
 * driver would say cannot be read, but the image's driver parts are files
 * and are still held against the tuple's driver version.  A part of
 * another version, or a module built for another kernel, refuses; a
 * module that could not be read is not made. */
static void image_driver(struct state *s, const struct tuple *tuple, const struct node_probe *p,
			 unsigned *compared)
{
	static const struct { const char *name, *fact, *label; } parts[] = {
		{ "nvidia.ko", "driver.ko_version", "the image's nvidia.ko" },
		{ "nvml", "driver.userspace_version", "NVML (libnvidia-ml.so)" },
		{ "nvml.package", "nvml.version", "the NVML package" },
		{ "nvidia-smi.package", "smi.version", "the nvidia-smi package" },
		{ "firmware.gsp", "firmware.gsp", "GSP firmware" },
	};
	char want[128], vendor[32], flavor[32];
	const char *v = declared(tuple, &tuple_fields[TF_VENDOR], vendor, sizeof(vendor));

	if (!v || strcmp(v, "nvidia") || !declared(tuple, &tuple_fields[TF_DRIVER], want, sizeof(want)))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		const char *have = probe_get(p, parts[i].fact);
		const char *src = source_of(p, parts[i].fact);
		if (!have && unreadable(p, parts[i].fact)) {
			not_made(s, parts[i].name, want, src, "%s vs driver %s", parts[i].label, want);
			continue;
		}
		if (!have && i == 0) {
			/* The driver is the node's own identity: without a loaded
			 * module, the image must at least carry one for this kernel. */
			(*compared)++;
			record(s, parts[i].name, want, NULL, src, 0);
			mismatch(s, "driver: manifest %s, no nvidia.ko for the running kernel (%s)", want, src);
			continue;
		}
		if (!have)
			continue;
		int ok = values_match(MATCH_VERSION, want, have);
		(*compared)++;
		record(s, parts[i].name, want, have, src, ok);
		if (ok)
			report_evidence(s->r, CHECK_TUPLE, "ok: %s %s (%s)", parts[i].label, have, src);
		else
			mismatch(s, "%s %s != manifest driver %s (%s)", parts[i].label, have, want, src);
	}
	/* The open modules are "Dual MIT/GPL", the proprietary ones "NVIDIA". */
	const char *lic = probe_get(p, "driver.ko_license");
	if (lic && declared(tuple, &tuple_fields[TF_DRIVER_FLAVOR], flavor, sizeof(flavor))) {
		const char *have = strcmp(lic, "NVIDIA") ? "open" : "proprietary";
		int ok = !strcmp(flavor, have);
		(*compared)++;
		record(s, "nvidia.ko.flavor", flavor, have, source_of(p, "driver.ko_license"), ok);
		if (ok)
			report_evidence(s->r, CHECK_TUPLE, "ok: the image's nvidia.ko is the %s flavor "
					"(license %s)", have, lic);
		else
			mismatch(s, "driver flavor: manifest %s, the image's nvidia.ko is %s (license %s)",
				 flavor, have, lic);
	}
	/* What modprobe would refuse ("disagrees about version of symbol",
	 * "invalid module format"): a module built for another kernel. */
	const char *kv = probe_get(p, "driver.ko_vermagic"), *run = probe_get(p, "kernel.release");
	if (kv && run) {
		int ok = !strcmp(kv, run);
		(*compared)++;
		record(s, "nvidia.ko.vermagic", run, kv, source_of(p, "driver.ko_vermagic"), ok);
		if (ok)
			report_evidence(s->r, CHECK_TUPLE, "ok: the image's nvidia.ko is built for the "
					"running kernel %s", run);
		else
			mismatch(s, "the image's nvidia.ko is built for kernel %s, running %s (%s)", kv, run,
				 source_of(p, "driver.ko_vermagic"));
	}
}

/* Firmware pins (docs/tuple.md): each device's revision must be one of the
 * validated revisions; an entry "MODEL=REV" holds for that model only.  The
 * model is the entry's own ("MT_0000000838=28.39.1002", from the NIC) or,
 * for facts without one, the node's (model_key: GPU or system product). */
struct fw_pin {
	const char *label, *tuple, *fact, *model_key;
	bool qualified;   /* the fact's entries are "MODEL=REV" */
};

static const struct fw_pin fw_pins[] = {
	{ "VBIOS", "firmware.vbios", "firmware.vbios", "gpu.model", false },
	{ "NVSwitch firmware", "firmware.nvswitch", "firmware.nvswitch", NULL, false },
	{ "NIC firmware", "firmware.nic", "firmware.nic", NULL, true },
	{ "Ethernet firmware", "firmware.ethernet", "firmware.ethernet", NULL, true },
	{ "BMC firmware", "firmware.bmc", "firmware.bmc", "system.product_name", false },
	{ "BIOS", "firmware.bios", "firmware.bios", "system.product_name", false },
};

/* Is rev of a device of model (NULL: unknown) among the pins? */
static bool pinned(const struct tuple_value *pins, const char *model, bool model_is_word, const char *rev)
{
	for (size_t i = 0; i < pins->n_list; i++) {
		const char *pin = pins->list[i], *eq = strchr(pin, '=');
		if (!eq) {
			if (!strcmp(pin, rev))
				return true;
			continue;
		}
		char m[128];
		snprintf(m, sizeof(m), "%.*s", (int)(eq - pin), pin);
		if (strcmp(eq + 1, rev) || !model)
			continue;
		if (model_is_word ? models_match(m, model) : !strcmp(m, model))
			return true;
	}
	return false;
}

static void firmware_check(struct state *s, const struct tuple *tuple, const struct node_probe *p,
			   unsigned *compared)
{
	for (size_t k = 0; k < sizeof(fw_pins) / sizeof(fw_pins[0]); k++) {
		const struct fw_pin *f = &fw_pins[k];
		const struct tuple_value *pins = tuple_get(tuple, f->tuple);
		const struct probe_fact *pf = probe_find(p, f->fact);
		const char *src = pf ? pf->source : "not probed";
		_cleanup_free_ char *want = NULL;

		if (!pins || !pins->n_list)
			continue;
		for (size_t i = 0; i < pins->n_list; i++) {
			char *w = xasprintf("%s%s%s", want ? want : "", want ? ", " : "", pins->list[i]);
			free(want);
			want = w;
		}
		if (!pf || !pf->value) {
			/* Pinned firmware the node does not show is unchecked drift. */
			not_made(s, f->tuple, want, src, "%s pinned to %s", f->label, want);
			continue;
		}
		(*compared)++;
		const char *model = f->model_key ? probe_get(p, f->model_key) : NULL;
		_cleanup_free_ char *vals = xstrdup(pf->value);
		char *save = NULL, bad[256] = "", agree[160] = "";
		struct strbuf seen = STRBUF_INIT;   /* "\nMODEL\n" per entry so far */
		strbuf_init(&seen, 64);
		strbuf_addch(&seen, '\n');
		for (char *e = vals ? strtok_r(vals, ",", &save) : NULL; e; e = strtok_r(NULL, ",", &save)) {
			char *eq = f->qualified ? strchr(e, '=') : NULL;
			const char *rev = eq ? eq + 1 : e;
			char dev[128], m[132];
			snprintf(dev, sizeof(dev), "%.*s", eq ? (int)(eq - e) : 0, e);
			snprintf(m, sizeof(m), "\n%s\n", dev);
			/* Entries are distinct: two of one model (every GPU is one
			 * model here) differ, and one stale device is drift even when
			 * both revisions are validated. */
			if (!agree[0] && strstr(seen.buf, m))
				snprintf(agree, sizeof(agree), "%s", dev);
			strbuf_addstr(&seen, m + 1);
			if (!bad[0] && !pinned(pins, eq ? dev : model, !eq, rev))
				snprintf(bad, sizeof(bad), "%s%s%s", dev, eq ? " " : "", rev);
		}
		strbuf_release(&seen);
		bool disagree = strchr(pf->value, ',') && (!f->qualified || agree[0]);
		int ok = !bad[0] && !disagree;
		record(s, f->tuple, want, pf->value, src, ok);
		if (disagree && !f->qualified)
			mismatch(s, "%s differs between devices: %s (one stale device is drift; pinned %s)",
				 f->label, pf->value, want);
		else if (disagree)
			mismatch(s, "%s differs between devices of model %s: %s (pinned %s)", f->label,
				 agree, pf->value, want);
		else if (bad[0])
			mismatch(s, "%s: node %s, validated %s (%s)", f->label, bad, want, src);
		else
			report_evidence(s->r, CHECK_TUPLE, "ok: %s %s (%s)", f->label, pf->value, src);
	}
}

void tuplecheck_run(const json_t *doc, const struct node_probe *p, struct verify_report *r)
{
	struct state s = { .r = r, .fields = json_object(), .not_made_list = json_array() };
	struct tuple *tuple = NULL;
	ingot_error e = { 0 };
	char want[256], models[512];
	unsigned compared = 0;
	/* No vendor: neither NVIDIA's nor AMD's module is loaded (a node
	 * without a GPU, or before modprobe); the loaded driver's facts are
	 * then not made, never a mismatch. */
	const char *vendor_key = tuple_fields[TF_VENDOR].probe;
	const bool loaded = probe_get(p, vendor_key) != NULL;

	if (!json_is_object(doc)) {
		report_set(r, CHECK_TUPLE, ST_SKIP, "manifest has no tuple");
		json_decref(s.fields);
		json_decref(s.not_made_list);
		return;
	}
	/* Typed once, by the recipe's own schema: a tuple it refuses is
	 * compared with nothing, and the check is not made. */
	if (tuple_from_json_declared(doc, "manifest", &tuple, &e) < 0) {
		report_set(r, CHECK_TUPLE, ST_ERROR, "%s", e.msg);
		json_decref(s.fields);
		json_decref(s.not_made_list);
		return;
	}
	/* Vendor, driver and flavor first, then what must agree with the
	 * driver, then the rest: the first mismatch becomes the reason, and
	 * "fabric manager X != driver Y" says more than "fabric manager: X". */
	for (size_t i = 0; i < tuple_fields_n; i++) {
		const struct tuple_field *f = &tuple_fields[i];
		if (!f->probe)
			continue;
		if (i == TUPLE_FIELDS_DRIVER_END && loaded)
			consistency(&s, tuple, p);
		else if (i == TUPLE_FIELDS_DRIVER_END)
			image_driver(&s, tuple, p, &compared);
		if (!declared(tuple, f, want, sizeof(want)))
			continue;
		const struct probe_fact *pf = probe_find(p, f->probe);
		if ((!pf || !pf->value) && f->fallback && probe_get(p, f->fallback))
			pf = probe_find(p, f->fallback);
		const char *have = pf ? pf->value : NULL;
		const char *src = pf ? pf->source : "not probed";
		int ok = have && values_match(f->how, want, have);
		/* The SMI tool answers only through a loaded driver. */
		if (!have && !loaded && (i < TUPLE_FIELDS_DRIVER_END || i == TF_SMI)) {
			not_made(&s, f->report, want, source_of(p, vendor_key), "%s %s: no GPU driver loaded",
				 f->label, want);
			continue;
		}
		if (!have && unreadable(p, f->probe) && !must_be_on_node(tuple, f)) {
			not_made(&s, f->report, want, src, "%s %s", f->label, want);
			continue;
		}
		if (!have && !must_be_on_node(tuple, f)) {
			/* Declared for the pool (e.g. CUDA that travels in containers)
			 * but neither on the node nor carried by the image. */
			report_evidence(r, CHECK_TUPLE, "absent: %s %s is not on the node and no "
					"image artifact carries it (%s)", f->label, want, src);
			continue;
		}
		compared++;
		record(&s, f->report, want, have, src, ok);
		if (ok)
			report_evidence(r, CHECK_TUPLE, "ok: %s %s (%s)", f->label, have, src);
		else if (!have)
			mismatch(&s, "%s: manifest %s, node: %s", f->label, want, src);
		else
			mismatch(&s, "%s: manifest %s, node %s (%s)", f->label, want, have, src);
	}
	if (declared(tuple, &tuple_fields[TF_GPU_MODELS], models, sizeof(models))) {
		const struct probe_fact *pf = probe_find(p, "gpu.model");
		const char *have = pf ? pf->value : NULL;
		int ok = have && models_match(models, have);
		if (!have) {
			/* Declared GPUs the node does not show: nothing was compared. */
			not_made(&s, "gpu", models, pf ? pf->source : "not probed", "GPU %s", models);
			goto done_models;
		}
		compared++;
		record(&s, "gpu", models, have, pf ? pf->source : "not probed", ok);
		if (ok)
			report_evidence(r, CHECK_TUPLE, "ok: GPU %s (%s)", have, pf->source);
		else
			mismatch(&s, "GPU: manifest %s, node %s", models, have);
	}
done_models:
	firmware_check(&s, tuple, p, &compared);
	for (size_t i = 0; i < tuple_fields_n; i++) {
		const struct tuple_field *f = &tuple_fields[i];
		if (f->report && !f->probe && declared(tuple, f, want, sizeof(want)))
			report_evidence(r, CHECK_TUPLE, "not probed: %s (manifest %s)", f->report, want);
	}

	tuple_free(tuple);
	r->checks[CHECK_TUPLE].details = json_pack("{s:o, s:o}", "fields", s.fields,
						    "not_made", s.not_made_list);
	if (s.mismatches)
		report_set(r, CHECK_TUPLE, ST_FAIL, "%s", s.first);
	else if (s.not_made)
		report_set(r, CHECK_TUPLE, ST_ERROR, "%s", s.first_not_made);
	else if (!compared)
		report_set(r, CHECK_TUPLE, ST_SKIP, "manifest tuple declares no field the probe reads");
	else
		report_set(r, CHECK_TUPLE, ST_PASS, "%u tuple fields match the node", compared);
}
