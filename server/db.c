/* The verifier's database: the backend a spec names (server/db.h). */
#include "server/db.h"

#include <string.h>

const char *db_nonce_name(enum db_nonce n)
{
	switch (n) {
	case DB_NONCE_OK: return "ok";
	case DB_NONCE_UNKNOWN: return "not issued to this node";
	case DB_NONCE_USED: return "already used";
	case DB_NONCE_EXPIRED: return "expired";
	}
	return "?";
}

int db_open(const char *spec, struct db **out, ingot_error *e)
{
	if (!strncmp(spec, DB_PG_PREFIX, strlen(DB_PG_PREFIX)))
		return db_pg_open(spec + strlen(DB_PG_PREFIX), out, e);
	if (!strncmp(spec, "sqlite:", 7))
		spec += 7;
	if (!*spec)
		return ingot_fail(e, -EINVAL, "database: expected a path, sqlite:PATH or postgresql:CONNINFO, got \"\"");
	if (strstr(spec, "://"))
		return ingot_fail(e, -EINVAL, "database: %s: expected a path, sqlite:PATH or postgresql:CONNINFO", spec);
	return db_sqlite_open(spec, out, e);
}
