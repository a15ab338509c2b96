/* Units for recipes/tuple: parsing with positioned errors, derived
 * fields, canonical JSON and back, and tuple_check_artifacts against
 * mkart.py-built modules, libraries and .debs in a real store. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recipes/recipe.h"
#include "builder/store.h"
#include "builder/unpack.h"
#include "builder/tree.h"
#include "builder/tuple-check.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/yamlx.h"
#include "recipes/tuple.h"
#include "recipes/tuple-fields.h"
#include "helpers.h"

static int parse(const char *yaml, struct tuple **t, ingot_error *e)
{
	_cleanup_ydoc_ struct ydoc d = { 0 };
	yaml_node_t *root;
	int r = ydoc_load_buf(&d, "r.yaml", yaml, strlen(yaml), e);
	if (r < 0)
		return r;
	root = ydoc_root(&d);
	return tuple_parse(&d, ydoc_get(&d, root, "tuple"), t, e);
}

static const char h100[] =
	"tuple:\n"
	"  vendor: nvidia\n"
	"  gpu:\n"
	"    models: [H100, H200]\n"
	"  nvswitch: true\n"
	"  driver:\n"
	"    version: 580.95.05\n"
	"    flavor: open\n"
	"    artifact: drv\n"
	"  fabric-manager: {version: 580.95.05}\n"
	"  cuda: {version: \"13.0\"}\n"
	"  nccl: {version: 2.27.7, artifact: nccl}\n"
	"  firmware: {vbios: 96.00.AF.00.01}\n"
	"  frameworks: {pytorch: 2.9.0}\n";

static void test_parse_good(void **state)
{
	struct tuple *t = NULL;
	ingot_error e = { 0 };
	const struct tuple_value *v;
	(void)state;

	assert_int_equal(parse(h100, &t, &e), 0);
	v = tuple_get(t, "driver.version");
	assert_non_null(v);
	assert_string_equal(v->str, "580.95.05");
	assert_int_equal(v->line, 7);
	assert_int_equal(v->column, 14);
	/* derived: one architecture for two Hopper models, branch from version */
	v = tuple_get(t, "gpu.arch");
	assert_int_equal(v->n_list, 1);
	assert_string_equal(v->list[0], "hopper");
	assert_string_equal(tuple_get(t, "driver.branch")->str, "R580");
	assert_true(tuple_get(t, "nvswitch")->b);
	assert_true(tuple_has(t, "cuda"));
	assert_true(tuple_has(t, "frameworks"));
	assert_false(tuple_has(t, "rocm"));
	assert_false(tuple_has(t, "cud"));
	assert_string_equal(tuple_get(t, "frameworks.pytorch")->str, "2.9.0");
	tuple_free(t);
}

static void test_parse_errors(void **state)
{
	static const struct { const char *yaml, *msg; } cases[] = {
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  drivr: {version: 1}\n",
		  "r.yaml:4:3: tuple: unknown key 'drivr'" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  driver: {version: 1, flavour: open}\n",
		  "r.yaml:4:24: tuple.driver: unknown key 'flavour'" },
		{ "tuple:\n  vendor: intel\n  gpu: {models: [H100]}\n",
		  "r.yaml:2:11: tuple.vendor: expected one of nvidia, amd, got 'intel'" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  cuda: {version: 13.0-rc1}\n",
		  "r.yaml:4:19: tuple.cuda.version: expected a dotted numeric version like 580.95.05, got '13.0-rc1'" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H1000]}\n",
		  "r.yaml:3:18: tuple.gpu.models: expected one of M60, M40, P100, P40, V100, T4, A100, A10, A30, A40, L4, L40S, H100, H200, H20, GH200, B200, B300, GB200, GB300, MI100, MI210, MI250, MI250X, MI300A, MI300X, MI325X, MI350X, MI355X, got 'H1000'" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [V100], arch: [hopper]}\n",
		  "r.yaml:3:31: tuple.gpu.arch: expected volta (from gpu.models), got hopper" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  driver: {version: 580.95.05, branch: R570}\n",
		  "r.yaml:4:40: tuple.driver.branch: expected R580 (driver 580.95.05), got 'R570'" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  nvswitch: yes\n",
		  "r.yaml:4:13: tuple.nvswitch: expected true or false, got yes" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100, H100]}\n",
		  "r.yaml:3:24: tuple.gpu.models: duplicate entry 'H100'" },
		{ "tuple:\n  gpu: {models: [H100]}\n",
		  "r.yaml:2:3: tuple: missing required field 'vendor'" },
		{ "tuple:\n  vendor: amd\n  driver: {version: 6.16.6}\n",
		  "r.yaml:2:3: tuple.gpu.models: missing required field" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  frameworks: {PyTorch: 2.9.0}\n",
		  "r.yaml:4:16: tuple.frameworks: unknown key 'PyTorch'" },
		{ "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  smi: nvidia-smi\n  smi: amd-smi\n",
		  "r.yaml:5:3: tuple.smi: duplicate key" },
		{ "tuple: [nvidia]\n", "r.yaml:1:8: tuple: expected a mapping, got sequence" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tuple *t = (struct tuple *)1;
		ingot_error e = { 0 };
		assert_int_equal(parse(cases[i].yaml, &t, &e), -EINVAL);
		assert_null(t);
		assert_string_equal(e.msg, cases[i].msg);
	}
}

static void test_json_roundtrip(void **state)
{
	struct tuple *t = NULL, *t2 = NULL;
	ingot_error e = { 0 };
	_cleanup_json_ json_t *j = NULL, *j2 = NULL;
	_cleanup_free_ char *s = NULL, *s2 = NULL;
	(void)state;

	assert_int_equal(parse(h100, &t, &e), 0);
	j = tuple_to_json(t);
	s = json_compact(j, NULL);
	assert_string_equal(s,
		"{\"cuda\":{\"version\":\"13.0\"},"
		"\"driver\":{\"artifact\":\"drv\",\"branch\":\"R580\",\"flavor\":\"open\",\"version\":\"580.95.05\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"},"
		"\"firmware\":{\"vbios\":\"96.00.AF.00.01\"},"
		"\"frameworks\":{\"pytorch\":\"2.9.0\"},"
		"\"gpu\":{\"arch\":[\"hopper\"],\"models\":[\"H100\",\"H200\"]},"
		"\"nccl\":{\"artifact\":\"nccl\",\"version\":\"2.27.7\"},"
		"\"nvswitch\":true,\"vendor\":\"nvidia\"}");
	assert_int_equal(tuple_from_json(j, "m.json", &t2, &e), 0);
	j2 = tuple_to_json(t2);
	s2 = json_compact(j2, NULL);
	assert_string_equal(s, s2);
	tuple_free(t);
	tuple_free(t2);

	/* a manifest with a tampered field type is refused */
	json_object_set_new(json_object_get(j, "driver"), "version", json_integer(580));
	assert_int_equal(tuple_from_json(j, "m.json", &t2, &e), -EINVAL);
	assert_string_equal(e.msg, "m.json: tuple.driver.version: expected a string");
	json_object_set_new(json_object_get(j, "driver"), "version", json_string("580.95.05"));
	json_object_set_new(j, "color", json_string("green"));
	assert_int_equal(tuple_from_json(j, "m.json", &t2, &e), -EINVAL);
	assert_string_equal(e.msg, "m.json: tuple: unknown field 'color'");
	assert_true(json_is_null(tuple_to_json(NULL)));
}

/* ---------------------------------------------- tuple_check_artifacts -- */

struct fx {
	char dir[64];
	struct store s;
	struct tree t;
	struct recipe r;
	struct artifact a[2];
	struct unpack_stats st[2];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || th_store_setup(f->dir, sizeof(f->dir), "tuple", &f->s) < 0)
		return -1;
	tree_init(&f->t);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int r;
	tuple_free(f->r.tuple);
	tree_free(&f->t);
	r = th_store_teardown(f->dir, &f->s);
	free(f);
	return r;
}

/* Make a file with mkart.py, put it in the store, return its digest. */
static void mkart(struct fx *f, const char *args, uint8_t sha[32])
{
	char cmd[768], path[128];
	ingot_error e = { 0 };
	snprintf(path, sizeof(path), "%s/out", f->dir);
	snprintf(cmd, sizeof(cmd), "python3 scripts/mkart.py %s --out '%s'", args, path);
	assert_int_equal(th_run(cmd), 0);
	assert_int_equal(sha256_file(path, sha, NULL, &e), 0);
	assert_int_equal(store_import(&f->s, "out", path, sha, &e), 0);
}

static void add_file(struct fx *f, const char *path, const char *origin, const char *mkargs)
{
	struct tree_entry ent = { .path = (char *)path, .type = TREE_FILE, .mode = 0644,
				  .origin = (char *)origin };
	ingot_error e = { 0 };
	mkart(f, mkargs, ent.sha256);
	assert_int_equal(tree_add(&f->t, &ent, false, &e), 0);
}

/* A .deb artifact is unpacked (its control Version read into its stats). */
static void unpack_art(struct fx *f, struct artifact *a, struct unpack_stats *st)
{
	char path[128];
	struct tree l;
	ingot_error e = { 0 };
	snprintf(path, sizeof(path), "%s/out", f->dir);
	a->path = a->source = path;
	assert_int_equal(unpack_list(&f->s, a, NULL, &l, st, &e), 0);
	tree_free(&l);
	a->path = a->source = NULL;
}

static void set_recipe(struct fx *f, const char *yaml)
{
	ingot_error e = { 0 };
	assert_int_equal(parse(yaml, &f->r.tuple, &e), 0);
	f->r.artifacts = f->a;
	f->r.n_artifacts = 2;
	f->a[0].name = "drv";
	f->a[0].kind = ART_TAR;
	f->a[1].name = "nccl";
	f->a[1].kind = ART_TAR;
}

/* One file an artifact put in the tree, made by scripts/mkart.py. */
struct art_file { const char *path, *origin, *mkargs; };

#define KO_OPEN { "lib/modules/6.8.0/kernel/drivers/video/nvidia.ko", "drv", \
		  "ko --name nvidia --version 580.95.05 --flavor open" }

static const struct check_case {
	const char *what, *yaml;
	struct art_file files[2];
	const char *msg;      /* NULL: the check passes */
} check_cases[] = {
	{ "ok", h100,
	  { KO_OPEN, { "usr/lib/libnccl.so.2.27.7", "nccl",
		       "so --soname libnccl.so.2 --version-string 'NCCL version 2.27.7+cuda13.0'" } },
	  NULL },
	{ "nccl_mismatch", h100,
	  { KO_OPEN, { "usr/lib/libnccl.so.2.21.5", "nccl",
		       "so --soname libnccl.so.2 --version-string 'NCCL version 2.21.5+cuda12.4'" } },
	  "tuple.nccl.version: recipe declares 2.27.7, artifact 'nccl' carries 2.21.5 (/usr/lib/libnccl.so.2.21.5)" },
	/* renamed to look right, but the library's own banner tells the truth */
	{ "nccl_renamed", h100,
	  { KO_OPEN, { "usr/lib/libnccl.so.2.27.7", "nccl",
		       "so --soname libnccl.so.2 --version-string 'NCCL version 2.21.5+cuda12.4'" } },
	  "tuple.nccl.version: recipe declares 2.27.7, artifact 'nccl' carries 2.21.5 (/usr/lib/libnccl.so.2.27.7: \"NCCL version 2.21.5+cuda12.4\")" },
	/* right NCCL version, but the build for the wrong CUDA */
	{ "nccl_cuda",
	  "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n"
	  "  nccl: {version: 2.27.7, cuda: \"13.0\", artifact: nccl}\n",
	  { { "usr/lib/libnccl.so.2.27.7", "nccl",
	      "so --soname libnccl.so.2 --version-string 'NCCL version 2.27.7+cuda12.9'" } },
	  "tuple.nccl.cuda: recipe declares 13.0, artifact 'nccl' is built for CUDA 12.9 (/usr/lib/libnccl.so.2.27.7: \"NCCL version 2.27.7+cuda12.9\")" },
	{ "driver_flavor", h100,
	  { { "lib/modules/6.8.0/kernel/drivers/video/nvidia.ko", "drv",
	      "ko --name nvidia --version 580.95.05 --flavor proprietary" },
	    { "usr/lib/libnccl.so.2.27.7", "nccl",
	      "so --soname libnccl.so.2 --version-string 'NCCL version 2.27.7'" } },
	  "tuple.driver.flavor: recipe declares open, artifact 'drv' carries proprietary modules (/lib/modules/6.8.0/kernel/drivers/video/nvidia.ko: license=NVIDIA)" },
	{ "driver_version", h100,
	  { { "lib/modules/6.8.0/kernel/drivers/video/nvidia.ko", "drv",
	      "ko --name nvidia --version 580.82.07 --flavor open" } },
	  "tuple.driver.version: recipe declares 580.95.05, artifact 'drv' carries 580.82.07 (/lib/modules/6.8.0/kernel/drivers/video/nvidia.ko: version=580.82.07)" },
	/* a distribution's CUDA runtime (no version.json): the file name */
	{ "cudart_ok",
	  "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  cuda: {version: \"12.4\", artifact: nccl}\n",
	  { { "usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127", "nccl", "so --soname libcudart.so.12" } },
	  NULL },
	{ "cudart_mismatch",
	  "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  cuda: {version: \"12.4\", artifact: nccl}\n",
	  { { "usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89", "nccl", "so --soname libcudart.so.11.0" } },
	  "tuple.cuda.version: recipe declares 12.4, artifact 'nccl' carries the CUDA 11.8 runtime (/usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89)" },
	/* the runtime's third field is its own: 13.3.77 ships with toolkit 13.3.1 */
	{ "cudart_toolkit_patch",
	  "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n  cuda: {version: 13.3.1, artifact: nccl}\n",
	  { { "usr/local/cuda-13.3/lib64/libcudart.so.13.3.77", "nccl", "so --soname libcudart.so.13" } },
	  NULL },
	/* RCCL: its banner's +hipA.B against rccl.hip, its bundle ids against
	 * rccl.targets and the pool's GPU */
	{ "rccl_hip",
	  "tuple:\n  vendor: amd\n  gpu: {models: [MI210]}\n  rccl: {version: 2.13.4, hip: \"6.1\", artifact: nccl}\n",
	  { { "usr/lib/librccl.so.1.0", "nccl",
	      "so --soname librccl.so.1 --version-string 'RCCL version 2.13.4+hip5.7' "
	      "--version-string hipv4-amdgcn-amd-amdhsa--gfx90a" } },
	  "tuple.rccl.hip: recipe declares 6.1, artifact 'nccl' is built for HIP 5.7 (/usr/lib/librccl.so.1.0: \"RCCL version 2.13.4+hip5.7\")" },
	{ "rccl_ok",
	  "tuple:\n  vendor: amd\n  gpu: {models: [MI210]}\n  rccl: {version: 2.13.4, hip: \"5.7\", targets: [gfx90a, gfx1030], artifact: nccl}\n",
	  { { "usr/lib/librccl.so.1.0", "nccl",
	      "so --soname librccl.so.1 --version-string 'RCCL version 2.13.4+hip5.7' "
	      "--version-string hipv4-amdgcn-amd-amdhsa--gfx1030 --version-string hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" } },
	  NULL },
	/* code objects the tuple does not declare: the rules could not judge them */
	{ "rccl_targets_undeclared",
	  "tuple:\n  vendor: amd\n  gpu: {models: [MI300X]}\n  rccl: {version: 2.13.4, artifact: nccl}\n",
	  { { "usr/lib/librccl.so.1.0", "nccl",
	      "so --soname librccl.so.1 --version-string 'RCCL version 2.13.4+hip5.7' "
	      "--version-string hipv4-amdgcn-amd-amdhsa--gfx90a --version-string hipv4-amdgcn-amd-amdhsa--gfx908" } },
	  "tuple.rccl.targets: not declared, artifact 'nccl' carries code objects for [gfx90a, gfx908] (/usr/lib/librccl.so.1.0): declare them, the rules hold them against gpu.models" },
	{ "hip_name",
	  "tuple:\n  vendor: amd\n  gpu: {models: [MI210]}\n  hip: {version: \"6.1\", artifact: nccl}\n",
	  { { "usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921", "nccl", "so --soname libamdhip64.so.5" } },
	  "tuple.hip.version: recipe declares 6.1, artifact 'nccl' carries 5.7.31921 (/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921)" },
	/* the nccl artifact put no libnccl anywhere: an unverifiable claim */
	{ "no_evidence", h100,
	  { KO_OPEN, { "usr/lib/libnccl.so.2.27.7", "drv",
		       "so --soname libnccl.so.2 --version-string 'NCCL version 2.27.7'" } },
	  "tuple.nccl.version: artifact 'nccl' carries no evidence of nccl 2.27.7 (see docs/tuple.md, \"Artifact checks\"); drop artifact: or fix the artifact" },
};

static void test_check_cases(void **state)
{
	struct fx *f = *state;
	for (size_t i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		const struct check_case *c = &check_cases[i];
		ingot_error e = { 0 };
		int rc;

		/* each case starts from an empty tree; the store may keep blobs */
		tuple_free(f->r.tuple);
		f->r.tuple = NULL;
		tree_free(&f->t);
		tree_init(&f->t);
		set_recipe(f, c->yaml);
		for (size_t j = 0; j < 2 && c->files[j].path; j++)
			add_file(f, c->files[j].path, c->files[j].origin, c->files[j].mkargs);
		rc = tuple_check_artifacts(&f->r, &f->t, &f->s, f->st, &e);
		if (c->msg ? rc != -EINVAL || strcmp(e.msg, c->msg) : rc != 0)
			fail_msg("case %s: rc %d\n  expected: %s\n  got:      %s", c->what, rc,
				 c->msg ? c->msg : "success", e.msg);
	}
}

/* The banner straddles the scanner's 64 KiB read boundary. */
static void test_check_banner_boundary(void **state)
{
	static const struct art_file ko = KO_OPEN;
	struct fx *f = *state;
	ingot_error e = { 0 };
	char path[128];
	static const char banner[] = "NCCL version 2.21.5+cuda12.4";
	struct tree_entry ent = { .path = "usr/lib/libnccl.so.2", .type = TREE_FILE, .mode = 0644,
				  .origin = "nccl" };
	FILE *fp;

	set_recipe(f, h100);
	add_file(f, ko.path, ko.origin, ko.mkargs);
	snprintf(path, sizeof(path), "%s/big", f->dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	for (int i = 0; i < 65536 - 7; i++)
		fputc('x', fp);
	fputs(banner, fp);
	for (int i = 0; i < 70000; i++)
		fputc('\0', fp);
	fclose(fp);
	assert_int_equal(sha256_file(path, ent.sha256, NULL, &e), 0);
	assert_int_equal(store_import(&f->s, "big", path, ent.sha256, &e), 0);
	assert_int_equal(tree_add(&f->t, &ent, false, &e), 0);
	assert_int_equal(tuple_check_artifacts(&f->r, &f->t, &f->s, f->st, &e), -EINVAL);
	assert_string_equal(e.msg, "tuple.nccl.version: recipe declares 2.27.7, artifact 'nccl' carries 2.21.5 (/usr/lib/libnccl.so.2: \"NCCL version 2.21.5+cuda12.4\")");
}

static void test_check_deb(void **state)
{
	struct fx *f = *state;
	ingot_error e = { 0 };
	char cmd[256];
	static const char yaml[] =
		"tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n"
		"  driver: {version: 580.95.05}\n"
		"  fabric-manager: {version: 580.95.05, artifact: drv}\n";

	set_recipe(f, yaml);
	f->r.n_artifacts = 1;
	f->a[0].kind = ART_DEB;
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/fm/usr/bin' && echo x > '%s/fm/usr/bin/nv-fabricmanager'",
		 f->dir, f->dir);
	assert_int_equal(th_run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "deb --package nvidia-fabricmanager-580 --version 580.82.07-1 --root '%s/fm'",
		 f->dir);
	mkart(f, cmd, f->a[0].sha256);
	/* before unpacking, the control Version is not known: not made */
	assert_int_equal(tuple_check_artifacts(&f->r, &f->t, &f->s, f->st, &e), -ENOENT);
	unpack_art(f, &f->a[0], &f->st[0]);
	assert_int_equal(tuple_check_artifacts(&f->r, &f->t, &f->s, f->st, &e), -EINVAL);
	assert_string_equal(e.msg, "tuple.fabric-manager.version: recipe declares 580.95.05, artifact 'drv' carries 580.82.07 (control Version: 580.82.07-1)");

	snprintf(cmd, sizeof(cmd), "deb --package nvidia-fabricmanager-580 --version 580.95.05-1 --root '%s/fm'",
		 f->dir);
	mkart(f, cmd, f->a[0].sha256);
	unpack_art(f, &f->a[0], &f->st[0]);
	assert_int_equal(tuple_check_artifacts(&f->r, &f->t, &f->s, f->st, &e), 0);
}

/* The one tuple-field table: each row's report name is its YAML path
 * with '_' for '-', a probed row's probe key is its report name, every
 * path is one the parser accepts, and the named rows are the fields their
 * names say (the node check's report order). */
static void test_field_table(void **state)
{
	(void)state;
	static const char *const named[] = { "vendor", "driver.version", "driver.flavor",
		"fabric-manager.version", "nccl.version", "rccl.version", "cuda.version",
		"container-toolkit.version", "rocm.version", "rocm.stream", "rocm.prefix", "smi",
		"hip.version", "hsa-runtime.version", "smi-lib.version" };
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		assert_string_equal(tuple_fields[i].path, named[i]);
		assert_non_null(tuple_fields[i].probe);
	}
	assert_string_equal(tuple_fields[TF_FABRIC_MANAGER].report, "fabric_manager.version");
	for (size_t i = 0; i < tuple_fields_n; i++) {
		const struct tuple_field *f = &tuple_fields[i];
		enum tuple_type type;
		assert_non_null(f->path);
		assert_int_equal(tuple_schema_type(f->path, &type, NULL), 0);
		assert_int_equal(type, f->type);
		assert_ptr_equal(tuple_field_find(f->path), f);
		if (f->probe)
			assert_string_equal(f->probe, f->report);
		if (!f->report)
			continue;
		char want[64];
		snprintf(want, sizeof(want), "%s", f->path);
		for (char *c = want; *c; c++)
			if (*c == '-')
				*c = '_';
		assert_string_equal(f->report, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_field_table),
		cmocka_unit_test_setup_teardown(test_check_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_banner_boundary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_deb, setup, teardown),
	};
	return cmocka_run_group_tests_name("tuple", tests, NULL, NULL);
}
