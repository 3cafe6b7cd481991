/*
 * policy_load.h: what the loader's files share, and nothing else sees
 * (policy.h has the loader's interface).  policy_load.c walks a layer's
 * JSON through its tables of keys; policy_rec.c loads the records, the
 * objects of network.inspect[] and credentials[].
 */
#ifndef CORDON_POLICY_LOAD_H
#define CORDON_POLICY_LOAD_H

#include <stdbool.h>

#include <jansson.h>

#include "lib/util.h"
#include "policies/policy.h"

/* The state of one load. */
struct loader {
	struct policy		*l_policy;
	const struct policy_ctx	*l_ctx;
	const char		*l_name;	/* file name for messages */
	struct errlist		 l_errors;
};

/* policy_load.c */
void		 policy_load_error(struct loader *, const char *, const char *,
		    const char *);
bool		 policy_load_env_name_ok(const char *, bool);
bool		 policy_load_expect(struct loader *, const json_t *, json_type,
		    const char *, const char *);

/* policy_rec.c */
void		 policy_rec_inspect(struct loader *, const char *, const char *,
		    json_t *);
void		 policy_rec_cred(struct loader *, const char *, const char *,
		    json_t *);

/* policy_ident.c */
void		 policy_ident_load(struct loader *, const char *, const char *,
		    json_t *);

#endif
