/* The GPU tuple: schema, YAML/JSON parsing, canonical JSON, field access.
 * The artifact checks live in tuple-check.c. */
#include "recipes/tuple.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/version.h"
#include "lib/xalloc.h"
#include "recipes/tuple-fields.h"
#include "recipes/tuple-private.h"

static const char *const vendors[] = { "nvidia", "amd", NULL };
static const char *const cpu_arches[] = { "x86_64", "arm64", NULL };
static const char *const smis[] = { "nvidia-smi", "amd-smi", "rocm-smi", NULL };
static const char *const flavors[] = { "open", "proprietary", NULL };
static const char *const streams[] = { "legacy", "core", NULL };

/* Every GPU model ingot knows, with its architecture.  Order = display. */
static const struct { const char *model, *arch; } gpu_models[] = {
	{ "M60", "maxwell" },   { "M40", "maxwell" },  { "P100", "pascal" },  { "P40", "pascal" },
	{ "V100", "volta" },    { "T4", "turing" },    { "A100", "ampere" },  { "A10", "ampere" },
	{ "A30", "ampere" },    { "A40", "ampere" },   { "L4", "ada" },       { "L40S", "ada" },
	{ "H100", "hopper" },   { "H200", "hopper" },  { "H20", "hopper" },   { "GH200", "hopper" },
	{ "B200", "blackwell" }, { "B300", "blackwell" }, { "GB200", "blackwell" },
	{ "GB300", "blackwell" },
	{ "MI100", "cdna" },    { "MI210", "cdna2" },  { "MI250", "cdna2" },  { "MI250X", "cdna2" },
	{ "MI300A", "cdna3" },  { "MI300X", "cdna3" }, { "MI325X", "cdna3" }, { "MI350X", "cdna4" },
	{ "MI355X", "cdna4" },
};
static const char *const model_names[] = {
	"M60", "M40", "P100", "P40", "V100", "T4", "A100", "A10", "A30", "A40", "L4", "L40S",
	"H100", "H200", "H20", "GH200", "B200", "B300", "GB200", "GB300", "MI100", "MI210",
	"MI250", "MI250X", "MI300A", "MI300X", "MI325X", "MI350X", "MI355X", NULL
};
static const char *const arch_names[] = {
	"maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell",
	"cdna", "cdna2", "cdna3", "cdna4", NULL
};

/* Rows with a probe key: YAML path, type, words, report name, probe key,
 * fallback, label, how it compares, what the rules take.  Versions match
 * numerically ("580.95.05" == "580.95.5" is not accepted: MATCH_VERSION
 * needs the same components); declared CUDA/ROCm/toolkit versions may be
 * shorter than what the node carries ("13.0" matches "13.0.1"). */
#define PROBED(path, type, words, report, fallback, label, how, rules) \
	{ path, type, words, report, report, fallback, label, how, rules }
/* Reported by the node check as "not probed". */
#define UNPROBED(name, report) \
	{ name ".version", TUPLE_VERSION, NULL, report, NULL, NULL, NULL, MATCH_EXACT, RULES_NONE }
#define FIELD(path, type, words) \
	{ path, type, words, NULL, NULL, NULL, NULL, MATCH_EXACT, RULES_NONE }
/* Components that carry a version may name the artifact holding them. */
#define ARTIFACT(name) FIELD(name ".artifact", TUPLE_STR, NULL)

const struct tuple_field tuple_fields[] = {
	[TF_VENDOR] = PROBED("vendor", TUPLE_ENUM, vendors, "vendor", NULL, "vendor", MATCH_EXACT,
			     RULES_DECLARED),
	[TF_DRIVER] = PROBED("driver.version", TUPLE_VERSION, NULL, "driver.version", NULL, "driver",
			     MATCH_VERSION, RULES_PROBED),
	[TF_DRIVER_FLAVOR] = PROBED("driver.flavor", TUPLE_ENUM, flavors, "driver.flavor", NULL,
				    "driver flavor", MATCH_EXACT, RULES_PROBED),
	[TF_FABRIC_MANAGER] = PROBED("fabric-manager.version", TUPLE_VERSION, NULL,
				     "fabric_manager.version", NULL, "fabric manager", MATCH_VERSION,
				     RULES_PROBED),
	[TF_NCCL] = PROBED("nccl.version", TUPLE_VERSION, NULL, "nccl.version", NULL, "NCCL",
			   MATCH_VERSION, RULES_PROBED),
	[TF_RCCL] = PROBED("rccl.version", TUPLE_VERSION, NULL, "rccl.version", NULL, "RCCL",
			   MATCH_VERSION, RULES_PROBED),
	[TF_CUDA] = PROBED("cuda.version", TUPLE_VERSION, NULL, "cuda.version", "cuda.runtime", "CUDA",
			   MATCH_PREFIX, RULES_PROBED),
	[TF_CONTAINER_TOOLKIT] = PROBED("container-toolkit.version", TUPLE_VERSION, NULL,
					"container_toolkit.version", NULL, "container toolkit",
					MATCH_PREFIX, RULES_PROBED),
	[TF_ROCM] = PROBED("rocm.version", TUPLE_VERSION, NULL, "rocm.version", NULL, "ROCm",
			   MATCH_PREFIX, RULES_PROBED),
	[TF_ROCM_STREAM] = PROBED("rocm.stream", TUPLE_ENUM, streams, "rocm.stream", NULL,
				  "ROCm stream", MATCH_EXACT, RULES_PROBED),
	[TF_ROCM_PREFIX] = PROBED("rocm.prefix", TUPLE_STR, NULL, "rocm.prefix", NULL, "ROCm prefix",
				  MATCH_EXACT, RULES_NONE),
	[TF_SMI] = PROBED("smi", TUPLE_ENUM, smis, "smi", NULL, "SMI tool", MATCH_EXACT, RULES_PROBED),
	/* ROCm's runtime pieces by their own versions, as distributions ship
	 * them apart (Debian 13: HIP 5.7 over the HSA runtime and SMI library
	 * of ROCm 6.1): HIP from libamdhip64.so.X.Y.BUILD, the HSA runtime and
	 * the ROCm SMI library from their packages (their file names carry
	 * only an ABI version, libhsa-runtime64.so.1.13.0, librocm_smi64.so.1.0). */
	[TF_HIP] = PROBED("hip.version", TUPLE_VERSION, NULL, "hip.version", NULL, "HIP", MATCH_PREFIX,
			  RULES_PROBED),
	[TF_HSA_RUNTIME] = PROBED("hsa-runtime.version", TUPLE_VERSION, NULL, "hsa_runtime.version", NULL,
				  "HSA runtime", MATCH_PREFIX, RULES_PROBED),
	[TF_SMI_LIB] = PROBED("smi-lib.version", TUPLE_VERSION, NULL, "smi_lib.version", NULL,
			      "ROCm SMI library", MATCH_PREFIX, RULES_PROBED),
	[TF_DRIVER_BRANCH] = FIELD("driver.branch", TUPLE_STR, NULL),
	[TF_GPU_MODELS] = FIELD("gpu.models", TUPLE_LIST, model_names),
	[TF_GPU_ARCH] = FIELD("gpu.arch", TUPLE_LIST, arch_names),
	[TF_NVSWITCH] = FIELD("nvswitch", TUPLE_BOOL, NULL),
	UNPROBED("cudnn", "cudnn.version"),
	UNPROBED("cublas", "cublas.version"),
	UNPROBED("miopen", "miopen.version"),
	UNPROBED("rocblas", "rocblas.version"),
	UNPROBED("gpu-operator", "gpu_operator.version"),
	UNPROBED("imex", "imex.version"),
	FIELD("platform.os", TUPLE_STR, NULL),
	FIELD("platform.os-version", TUPLE_VERSION, NULL),
	FIELD("platform.cpu-arch", TUPLE_ENUM, cpu_arches),
	FIELD("multi-tenant", TUPLE_BOOL, NULL),
	ARTIFACT("driver"),
	ARTIFACT("fabric-manager"),
	ARTIFACT("cuda"),
	ARTIFACT("rocm"),
	ARTIFACT("cudnn"),
	ARTIFACT("miopen"),
	ARTIFACT("cublas"),
	ARTIFACT("rocblas"),
	ARTIFACT("nccl"),
	FIELD("nccl.cuda", TUPLE_VERSION, NULL),   /* the CUDA release NCCL was built for */
	ARTIFACT("rccl"),
	FIELD("rccl.hip", TUPLE_VERSION, NULL),     /* the HIP release RCCL was built for */
	/* The gfx targets RCCL carries code objects for (its offload bundle
	 * ids, hipv4-amdgcn-amd-amdhsa--gfx942): a GPU without its target
	 * cannot run RCCL's kernels at all. */
	FIELD("rccl.targets", TUPLE_LIST, NULL),
	ARTIFACT("hip"),
	ARTIFACT("hsa-runtime"),
	ARTIFACT("smi-lib"),
	ARTIFACT("container-toolkit"),
	ARTIFACT("gpu-operator"),
	ARTIFACT("imex"),
	/* Firmware pins: the validated revisions, one or a list; an entry
	 * "MODEL=REV" holds for devices of that model only (docs/tuple.md). */
	FIELD("firmware.vbios", TUPLE_LIST, NULL),
	FIELD("firmware.nic", TUPLE_LIST, NULL),
	FIELD("firmware.ethernet", TUPLE_LIST, NULL),
	FIELD("firmware.nvswitch", TUPLE_LIST, NULL),
	FIELD("firmware.bmc", TUPLE_LIST, NULL),
	FIELD("firmware.bios", TUPLE_LIST, NULL),
	/* The driver branch the pins were validated against ("R580"). */
	FIELD("firmware.driver-branch", TUPLE_STR, NULL),
};

const size_t tuple_fields_n = ARRAY_SIZE(tuple_fields);

/* frameworks.<name>: any framework name, each a version. */
#define FRAMEWORKS "frameworks"

static bool framework_name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return false;
	return true;
}

const struct tuple_field *tuple_field_find(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(tuple_fields); i++)
		if (!strcmp(tuple_fields[i].path, path))
			return &tuple_fields[i];
	return NULL;
}

static const struct tuple_field *schema_find(const char *path)
{
	static const struct tuple_field framework = FIELD(FRAMEWORKS ".*", TUPLE_VERSION, NULL);
	const struct tuple_field *f = tuple_field_find(path);

	if (f)
		return f;
	if (!strncmp(path, FRAMEWORKS ".", sizeof(FRAMEWORKS)) &&
	    framework_name_ok(path + sizeof(FRAMEWORKS)))
		return &framework;
	return NULL;
}

int tuple_schema_type(const char *path, enum tuple_type *type, const char *const **words)
{
	const struct tuple_field *f = schema_find(path);
	if (!f)
		return -ENOENT;
	if (type)
		*type = f->type;
	if (words)
		*words = f->words;
	return 0;
}

bool tuple_schema_group(const char *path)
{
	size_t n = strlen(path);
	if (!strcmp(path, FRAMEWORKS))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(tuple_fields); i++)
		if (!strncmp(tuple_fields[i].path, path, n) && tuple_fields[i].path[n] == '.')
			return true;
	return false;
}

static bool word_in(const char *const *words, const char *w)
{
	for (; words && *words; words++)
		if (!strcmp(*words, w))
			return true;
	return false;
}

static void words_join(const char *const *words, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (; words && *words && len + 1 < n; words++) {
		int k = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", *words);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

const char *tuple_model_arch(const char *model)
{
	for (size_t i = 0; i < ARRAY_SIZE(gpu_models); i++)
		if (!strcmp(gpu_models[i].model, model))
			return gpu_models[i].arch;
	return NULL;
}

/* ------------------------------------------------------------ storage -- */

static void value_clear(struct tuple_value *v)
{
	free(v->path);
	free(v->str);
	for (size_t i = 0; i < v->n_list; i++)
		free(v->list[i]);
	free(v->list);
}

void tuple_free(struct tuple *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		value_clear(&t->v[i]);
	free(t->v);
	free(t->file);
	free(t);
}

size_t tuple_size(const struct tuple *t) { return t ? t->n : 0; }
const struct tuple_value *tuple_at(const struct tuple *t, size_t i) { return &t->v[i]; }
const char *tuple_file(const struct tuple *t) { return t && t->file ? t->file : "tuple"; }

const struct tuple_value *tuple_get(const struct tuple *t, const char *path)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			return &t->v[i];
	return NULL;
}

bool tuple_has(const struct tuple *t, const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; t && i < t->n; i++)
		if (!strncmp(t->v[i].path, path, n) && (t->v[i].path[n] == '\0' || t->v[i].path[n] == '.'))
			return true;
	return false;
}

static struct tuple_value *tuple_add(struct tuple *t, const char *path, enum tuple_type type)
{
	struct tuple_value *v;
	if (t->n == t->alloc) {
		size_t na = t->alloc ? t->alloc * 2 : 32;
		v = xrealloc(t->v, na * sizeof(*v));
		t->v = v;
		t->alloc = na;
	}
	v = &t->v[t->n];
	memset(v, 0, sizeof(*v));
	v->path = xstrdup(path);
	v->type = type;
	t->n++;
	return v;
}

static void list_add(struct tuple_value *v, const char *w)
{
	char **l = xrealloc(v->list, (v->n_list + 1) * sizeof(*l));
	v->list = l;
	l[v->n_list] = xstrdup(w);
	v->n_list++;
}

static bool list_has(const struct tuple_value *v, const char *w)
{
	for (size_t i = 0; i < v->n_list; i++)
		if (!strcmp(v->list[i], w))
			return true;
	return false;
}

/* Check a scalar against the schema type; msg gets "expected X, got Y". */
static int check_scalar(const struct tuple_field *f, const char *s, char *msg, size_t n)
{
	char words[512];

	switch (f->type) {
	case TUPLE_VERSION:
		if (version_valid(s))
			return 0;
		snprintf(msg, n, "expected a dotted numeric version like 580.95.05, got '%s'", s);
		return -EINVAL;
	case TUPLE_ENUM:
	case TUPLE_LIST:
		if (!f->words)
			goto str;   /* a list of free text (firmware revisions) */
		if (word_in(f->words, s))
			return 0;
		words_join(f->words, words, sizeof(words));
		snprintf(msg, n, "expected one of %s, got '%s'", words, s);
		return -EINVAL;
	case TUPLE_STR:
	str:
		if (*s && strlen(s) <= 256 && !strpbrk(s, "\n\r\t"))
			return 0;
		snprintf(msg, n, "expected a one-line string of 1 to 256 characters");
		return -EINVAL;
	case TUPLE_BOOL:
		break;
	}
	return 0;
}

/* "file:line:col" of a declared value, or just the file for values read
 * from JSON (which has no positions to give). */
static const char *pos_of(const struct tuple *t, const struct tuple_value *v, char *buf, size_t n)
{
	if (v && v->line)
		snprintf(buf, n, "%s:%zu:%zu", t->file, v->line, v->column);
	else
		snprintf(buf, n, "%s", t->file);
	return buf;
}

/* Derived fields and cross-field checks shared by the YAML and JSON
 * readers: gpu.arch from the models, driver.branch from the version.
 * where names the tuple itself (for missing fields). */
static int tuple_finish(struct tuple *t, const char *where, ingot_error *e)
{
	char pos[600];
	const struct tuple_value *models = tuple_get(t, tuple_fields[TF_GPU_MODELS].path);
	const struct tuple_value *arch = tuple_get(t, tuple_fields[TF_GPU_ARCH].path);
	const struct tuple_value *drv = tuple_get(t, tuple_fields[TF_DRIVER].path);
	const struct tuple_value *branch = tuple_get(t, tuple_fields[TF_DRIVER_BRANCH].path);
	struct tuple_value derived = { 0 };
	int r = 0;

	if (!tuple_get(t, tuple_fields[TF_VENDOR].path))
		return ingot_fail(e, -EINVAL, "%s: tuple: missing required field 'vendor'", where);
	if (!models || models->n_list == 0)
		return ingot_fail(e, -EINVAL, "%s: tuple.gpu.models: missing required field", where);

	for (size_t i = 0; i < models->n_list; i++) {
		const char *a = tuple_model_arch(models->list[i]);
		if (!list_has(&derived, a))
			list_add(&derived, a);
	}
	if (arch) {
		bool same = arch->n_list == derived.n_list;
		for (size_t i = 0; same && i < derived.n_list; i++)
			same = list_has(arch, derived.list[i]);
		if (!same) {
			r = ingot_fail(e, -EINVAL, "%s: tuple.gpu.arch: expected %s%s (from gpu.models), got %s%s",
				       pos_of(t, arch, pos, sizeof(pos)), derived.list[0],
				       derived.n_list > 1 ? ", ..." : "", arch->list[0],
				       arch->n_list > 1 ? ", ..." : "");
			goto out;
		}
	} else {
		struct tuple_value *v = tuple_add(t, tuple_fields[TF_GPU_ARCH].path, TUPLE_LIST);
		v->list = TAKE_PTR(derived.list);
		v->n_list = derived.n_list;
		derived.n_list = 0;
	}

	if (drv) {
		char want[32], head[24];
		if (!version_head(drv->str, 1, head, sizeof(head)))
			head[0] = '\0';
		snprintf(want, sizeof(want), "R%s", head);
		if (branch && strcmp(branch->str, want) != 0) {
			r = ingot_fail(e, -EINVAL, "%s: tuple.driver.branch: expected %s (driver %s), got '%s'",
				       pos_of(t, branch, pos, sizeof(pos)), want, drv->str, branch->str);
			goto out;
		}
		if (!branch && !strcmp(tuple_get(t, tuple_fields[TF_VENDOR].path)->str, "nvidia")) {
			tuple_add(t, tuple_fields[TF_DRIVER_BRANCH].path, TUPLE_STR)->str = xstrdup(want);
		}
	} else if (branch) {
		r = ingot_fail(e, -EINVAL, "%s: tuple.driver.branch: needs driver.version",
			       pos_of(t, branch, pos, sizeof(pos)));
		goto out;
	}
out:
	for (size_t i = 0; i < derived.n_list; i++)
		free(derived.list[i]);
	free(derived.list);
	return r;
}

/* --------------------------------------------------------------- YAML -- */

static int parse_leaf(struct ydoc *d, struct tuple *t, const struct tuple_field *f,
		      const char *path, yaml_node_t *n, ingot_error *e)
{
	char field[192], msg[768];
	struct tuple_value *v;
	const char *s;
	int r;

	snprintf(field, sizeof(field), "tuple.%s", path);
	if (f->type == TUPLE_BOOL) {
		bool b;
		r = ydoc_bool(d, n, field, &b, e);
		if (r < 0)
			return r;
		v = tuple_add(t, path, f->type);
		v->b = b;
	} else if (f->type == TUPLE_LIST) {
		yaml_node_t *it;
		v = tuple_add(t, path, f->type);
		if (n->type == YAML_SCALAR_NODE) {
			/* a single model may be written without brackets */
			if ((r = ydoc_str(d, n, field, &s, e)) < 0)
				return r;
			if (check_scalar(f, s, msg, sizeof(msg)) < 0)
				return ydoc_fail(d, n, e, "%s: %s", field, msg);
			list_add(v, s);
		} else {
			if ((r = ydoc_expect_seq(d, n, field, e)) < 0)
				return r;
			ydoc_seq_foreach(d, n, it) {
				if ((r = ydoc_str(d, it, field, &s, e)) < 0)
					return r;
				if (check_scalar(f, s, msg, sizeof(msg)) < 0)
					return ydoc_fail(d, it, e, "%s: %s", field, msg);
				if (list_has(v, s))
					return ydoc_fail(d, it, e, "%s: duplicate entry '%s'", field, s);
				list_add(v, s);
			}
			if (v->n_list == 0)
				return ydoc_fail(d, n, e, "%s: expected at least one entry", field);
		}
	} else {
		if ((r = ydoc_str(d, n, field, &s, e)) < 0)
			return r;
		if (check_scalar(f, s, msg, sizeof(msg)) < 0)
			return ydoc_fail(d, n, e, "%s: %s", field, msg);
		v = tuple_add(t, path, f->type);
		v->str = xstrdup(s);
	}
	v->line = n->start_mark.line + 1;
	v->column = n->start_mark.column + 1;
	return 0;
}

static int parse_map(struct ydoc *d, struct tuple *t, const char *prefix, yaml_node_t *map,
		     ingot_error *e)
{
	yaml_node_t *k, *v;
	int r;

	if ((r = ydoc_expect_map(d, map, *prefix ? prefix : "tuple", e)) < 0)
		return r;
	ydoc_map_foreach(d, map, k, v) {
		char path[160];
		const char *key;
		const struct tuple_field *f;

		if (!k || k->type != YAML_SCALAR_NODE)
			return ydoc_fail(d, k, e, "tuple%s%s: expected a string key, got %s",
					 *prefix ? "." : "", prefix, ydoc_kind(k));
		key = (const char *)k->data.scalar.value;
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", key);
		if (tuple_get(t, path) || (tuple_schema_group(path) && tuple_has(t, path)))
			return ydoc_fail(d, k, e, "tuple.%s: duplicate key", path);
		f = schema_find(path);
		if (f) {
			if ((r = parse_leaf(d, t, f, path, v, e)) < 0)
				return r;
		} else if (!*prefix && tuple_schema_group(path)) {
			if ((r = parse_map(d, t, path, v, e)) < 0)
				return r;
		} else {
			return ydoc_fail(d, k, e, "tuple%s%s: unknown key '%s'", *prefix ? "." : "",
					 prefix, key);
		}
	}
	return 0;
}

int tuple_parse(struct ydoc *d, yaml_node_t *node, struct tuple **out, ingot_error *e)
{
	struct tuple *t;
	int r;

	*out = NULL;
	t = xcalloc(1, sizeof(*t));
	t->file = xstrdup(d->file);
	r = parse_map(d, t, "", node, e);
	if (r == 0) {
		char where[600];
		snprintf(where, sizeof(where), "%s:%zu:%zu", d->file, node->start_mark.line + 1,
			 node->start_mark.column + 1);
		r = tuple_finish(t, where, e);
	}
	if (r < 0) {
		tuple_free(t);
		return r;
	}
	*out = t;
	return 0;
}

/* --------------------------------------------------------------- JSON -- */

static int json_leaf(struct tuple *t, const char *name, const char *path, json_t *j,
		     ingot_error *e)
{
	const struct tuple_field *f = schema_find(path);
	struct tuple_value *v;
	char msg[768];

	if (!f)
		return ingot_fail(e, -EINVAL, "%s: tuple: unknown field '%s'", name, path);
	if (f->type == TUPLE_BOOL) {
		if (!json_is_boolean(j))
			return ingot_fail(e, -EINVAL, "%s: tuple.%s: expected true or false", name, path);
		tuple_add(t, path, f->type)->b = json_is_true(j);
		return 0;
	}
	if (f->type == TUPLE_LIST) {
		size_t i;
		json_t *it, *one = NULL;
		/* One entry may be a plain string, as in YAML (and as written). */
		if (json_is_string(j) && !(j = one = json_pack("[O]", j)))
			return ingot_fail(e, -ENOMEM, "%s: out of memory", name);
		_cleanup_json_ json_t *own = one;
		if (!json_is_array(j) || json_array_size(j) == 0)
			return ingot_fail(e, -EINVAL, "%s: tuple.%s: expected a non-empty array", name, path);
		v = tuple_add(t, path, f->type);
		json_array_foreach(j, i, it) {
			if (!json_is_string(it) || check_scalar(f, json_string_value(it), msg, sizeof(msg)) < 0)
				return ingot_fail(e, -EINVAL, "%s: tuple.%s[%zu]: %s", name, path, i,
						  json_is_string(it) ? msg : "expected a string");
			list_add(v, json_string_value(it));
		}
		return 0;
	}
	if (!json_is_string(j))
		return ingot_fail(e, -EINVAL, "%s: tuple.%s: expected a string", name, path);
	if (check_scalar(f, json_string_value(j), msg, sizeof(msg)) < 0)
		return ingot_fail(e, -EINVAL, "%s: tuple.%s: %s", name, path, msg);
	tuple_add(t, path, f->type)->str = xstrdup(json_string_value(j));
	return 0;
}

static int from_json(const json_t *j, const char *name, bool finish, struct tuple **out, ingot_error *e)
{
	struct tuple *t;
	const char *key, *k2;
	json_t *val, *v2;
	int r = 0;

	*out = NULL;
	if (!json_is_object(j))
		return ingot_fail(e, -EINVAL, "%s: tuple: expected an object", name);
	t = xcalloc(1, sizeof(*t));
	t->file = xstrdup(name);
	json_object_foreach((json_t *)j, key, val) {
		if (tuple_schema_group(key)) {
			if (!json_is_object(val)) {
				r = ingot_fail(e, -EINVAL, "%s: tuple.%s: expected an object", name, key);
				goto out;
			}
			json_object_foreach(val, k2, v2) {
				char path[160];
				snprintf(path, sizeof(path), "%s.%s", key, k2);
				if ((r = json_leaf(t, name, path, v2, e)) < 0)
					goto out;
			}
		} else if ((r = json_leaf(t, name, key, val, e)) < 0) {
			goto out;
		}
	}
	if (finish)
		r = tuple_finish(t, name, e);
out:
	if (r < 0) {
		tuple_free(t);
		return r;
	}
	*out = t;
	return 0;
}

int tuple_from_json(const json_t *j, const char *name, struct tuple **out, ingot_error *e)
{
	return from_json(j, name, true, out, e);
}

int tuple_from_json_declared(const json_t *j, const char *name, struct tuple **out, ingot_error *e)
{
	return from_json(j, name, false, out, e);
}

json_t *tuple_to_json(const struct tuple *t)
{
	json_t *root;

	if (!t)
		return json_null();
	root = json_object();
	for (size_t i = 0; root && i < t->n; i++) {
		const struct tuple_value *v = &t->v[i];
		const char *dot = strchr(v->path, '.');
		json_t *parent = root, *val;

		if (dot) {
			char group[64];
			snprintf(group, sizeof(group), "%.*s", (int)(dot - v->path), v->path);
			parent = json_object_get(root, group);
			if (!parent) {
				parent = json_object();
				if (json_object_set_new(root, group, parent) < 0)
					goto fail;
			}
		}
		switch (v->type) {
		case TUPLE_BOOL:
			val = json_boolean(v->b);
			break;
		case TUPLE_LIST:
			/* A single free-text entry stays a string: a pin written
			 * "vbios: X" reads back as the same bytes it always had. */
			if (v->n_list == 1 && !schema_find(v->path)->words) {
				val = json_string(v->list[0]);
				break;
			}
			val = json_array();
			for (size_t k = 0; val && k < v->n_list; k++)
				if (json_array_append_new(val, json_string(v->list[k])) < 0)
					goto fail;
			break;
		default:
			val = json_string(v->str);
			break;
		}
		if (json_object_set_new(parent, dot ? dot + 1 : v->path, val) < 0)
			goto fail;
	}
	return root;
fail:
	json_decref(root);
	return NULL;
}
