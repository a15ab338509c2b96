/* GET /v1/manifests/POOL[/NAME] (server/manifests.h, docs/verifier.md). */
#include "server/manifests.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attest/predict.h"
#include "keys/envelope.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "manifest/dsse.h"
#include "verify/boot-inputs.h"

/* The subject name of the file list the envelope at path binds ("" for a
 * v1 envelope).  It was verified when the service loaded it; here it is
 * only read, to name the file beside it. */
static int bound_name(const char *path, struct manifest_ref *ref, ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL, *head = NULL;
	_cleanup_free_ uint8_t *payload = NULL;
	size_t len;
	int r;

	memset(ref, 0, sizeof(*ref));
	if ((r = envelope_read_file(path, &env, e)) < 0 || (r = envelope_parse(path, env, &payload, &len, e)) < 0)
		return r;
	return envelope_statement_parse(path, payload, len, MANIFEST_REVIEW, NULL, &head, ref, e);
}

/* path opened for sending: a regular file of at most max bytes. */
static unsigned open_file(const char *path, uint64_t max, int *fd, uint64_t *size, ingot_error *e)
{
	struct stat st;
	int r = open_regular(path, O_RDONLY | O_CLOEXEC, &st, e);

	if (r < 0)
		return 500;
	if ((uint64_t)st.st_size > max) {
		close(r);
		return ingot_fail(e, -EFBIG, "manifests: %s: %lld bytes, over the limit %llu", path,
				  (long long)st.st_size, (unsigned long long)max), 500;
	}
	*fd = r;
	*size = (uint64_t)st.st_size;
	return 200;
}

unsigned manifests_get(const struct serve_config *c, const struct boot_trust *trust, const char *rest,
		       const char *root, int *fd, uint64_t *size, ingot_error *e)
{
	_cleanup_free_ char *pool = NULL, *file = NULL;
	const char *slash = strchr(rest, '/'), *name = slash ? slash + 1 : NULL;
	const struct manifest *best = NULL;
	size_t at = 0;
	struct manifest_ref ref;

	*fd = -1;
	pool = slash ? xstrndup(rest, (size_t)(slash - rest)) : xstrdup(rest);
	if (!*pool || !attest_name_ok(pool) || strchr(pool, '/'))
		return ingot_fail(e, -EINVAL, "manifests: expected a pool name, got \"%.80s\"", pool), 400;
	if (name && (!*name || !attest_name_ok(name) || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")))
		return ingot_fail(e, -EINVAL, "manifests: pool %s: expected a file list's name, got \"%.80s\"", pool,
				  name), 400;
	if (root && !is_sha256_hex(root))
		return ingot_fail(e, -EINVAL, "manifests: root: expected 64 lower-case hex digits, got \"%.80s\"", root),
		       400;
	for (size_t i = 0; i < trust->n_mf; i++) {
		const struct manifest *m = trust->mf[i];
		if (!m->recipe.name || strcmp(m->recipe.name, pool) || (root && strcmp(m->verity.root_hex, root)))
			continue;
		if (!best || m->serial > best->serial)
			best = m, at = i;
	}
	if (!best && root)
		return ingot_fail(e, -ENOENT, "manifests: pool %s: no manifest of this verifier for image root %.16s...",
				  pool, root), 404;
	if (!best)
		return ingot_fail(e, -ENOENT, "manifests: pool %s: no manifest of this verifier names it", pool), 404;
	/* trust->mf[i] was verified from c->manifests[i] (serve_start adds them in order) */
	const char *path = json_string_value(json_array_get(c->manifests, at));
	if (!name)
		return open_file(path, ENVELOPE_FILE_MAX, fd, size, e);
	if (bound_name(path, &ref, e) < 0)
		return 500;
	if (strcmp(ref.name, name))
		return ingot_fail(e, -ENOENT, "manifests: pool %s: its manifest (serial %llu) binds no file list %.80s",
				  pool, (unsigned long long)best->serial, name), 404;
	file = manifest_ref_path(path, NULL, &ref);
	return open_file(file, MANIFEST_FILE_MAX, fd, size, e);
}
