/* Kubernetes node-feature-discovery "local" feature file: one
 * "name=value" label per line, read by nfd-worker from
 * /etc/kubernetes/node-feature-discovery/features.d/. */
#ifndef INGOT_VERIFY_NFD_H
#define INGOT_VERIFY_NFD_H

#include <stdbool.h>
#include "lib/err.h"
#include "lib/strbuf.h"
#include "verify/node-report.h"

#define NFD_DEFAULT_PATH "/etc/kubernetes/node-feature-discovery/features.d/ingot"
#define NFD_LABEL_PREFIX "ingot.dev/"

#define NFD_VALUE_SIZE 64   /* a label value (63 at most) and its NUL */

/* The label value for a name, one to one: a name that is a valid label
 * value (at most 63 of [A-Za-z0-9._-], alphanumeric at both ends) is kept;
 * any other, and a valid one that ends like a disambiguated value, becomes
 * its readable prefix + "--" + 12 hex digits of its sha256 (e.g. "pool-a."
 * -> "pool-a--<hash>", never "pool-a").  Returns true when it did so. */
bool nfd_label_value(const char *name, char out[NFD_VALUE_SIZE]);

/* The file's text: labels ingot.dev/pool, ingot.dev/tuple (first 32 hex
 * digits of the tuple digest: label values stop at 63 characters),
 * ingot.dev/verdict, ingot.dev/exit-status, each through nfd_label_value
 * (a disambiguated value is preceded by a comment naming it). */
void nfd_format(const struct verify_report *r, struct strbuf *out);
/* Write it atomically (mode 0644). */
int nfd_write(const char *path, const struct verify_report *r, ingot_error *e);

#endif
