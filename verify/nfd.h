/* Kubernetes node-feature-discovery "local" feature file: one
 * "name=value" label per line, read by nfd-worker from
 * /etc/kubernetes/node-feature-discovery/features.d/. */
#ifndef INGOT_VERIFY_NFD_H
#define INGOT_VERIFY_NFD_H

#include "lib/err.h"
#include "lib/strbuf.h"
#include "verify/node_report.h"

#define NFD_DEFAULT_PATH "/etc/kubernetes/node-feature-discovery/features.d/ingot"
#define NFD_LABEL_PREFIX "ingot.dev/"

/* The file's text: labels ingot.dev/pool, ingot.dev/tuple (first 32 hex
 * digits of the tuple digest: label values stop at 63 characters),
 * ingot.dev/verdict, ingot.dev/exit-status.  Values are reduced to the
 * label alphabet [A-Za-z0-9._-]. */
void nfd_format(const struct verify_report *r, struct strbuf *out);
/* Write it atomically (mode 0644). */
int nfd_write(const char *path, const struct verify_report *r, ingot_error *e);

#endif
