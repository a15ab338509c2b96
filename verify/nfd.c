#include "verify/nfd.h"

#include <ctype.h>
#include <string.h>

#include "lib/fileio.h"

/* A Kubernetes label value: at most 63 characters of [A-Za-z0-9._-],
 * starting and ending alphanumeric; anything else becomes '_' or is cut. */
static void add_label(struct strbuf *out, const char *name, const char *value)
{
	char v[64];
	size_t n = 0;
	for (const char *s = value ? value : ""; *s && n < 63; s++)
		v[n++] = isalnum((unsigned char)*s) || strchr("._-", *s) ? *s : '_';
	while (n && !isalnum((unsigned char)v[n - 1]))
		n--;
	v[n] = '\0';
	const char *start = v;
	while (*start && !isalnum((unsigned char)*start))
		start++;
	strbuf_addf(out, "%s%s=%s\n", NFD_LABEL_PREFIX, name, start);
}

void nfd_format(const struct verify_report *r, struct strbuf *out)
{
	char tuple[33] = "";
	char status[16];
	if (r->tuple_digest)
		snprintf(tuple, sizeof(tuple), "%s", r->tuple_digest);
	snprintf(status, sizeof(status), "%d", r->exit_status);
	strbuf_addf(out, "# written by ingot verify at %s; replaced on every boot\n",
		    r->time ? r->time : "?");
	add_label(out, "pool", r->pool ? r->pool : "none");
	add_label(out, "tuple", tuple[0] ? tuple : "none");
	add_label(out, "verdict", r->verdict ? r->verdict : "could-not-check");
	add_label(out, "exit-status", status);
}

int nfd_write(const char *path, const struct verify_report *r, ingot_error *e)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;
	strbuf_init(&sb, 256);
	nfd_format(r, &sb);
	ret = write_file_atomic(path, sb.buf, sb.len, 0644, e);
	strbuf_release(&sb);
	return ret;
}
