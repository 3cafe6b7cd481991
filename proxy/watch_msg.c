/*
 * watch_msg.c: what a run may send on its channel (watch.c), one line
 * each, read here without sockets so that it can be tested and fuzzed.
 * The run is not trusted: a line is bounded (WATCH_MSG_MAX), is "end" or
 * one JSON object with exactly the keys of one message, each of its
 * type and within its bounds; anything else is malformed.
 *
 *   end					the sandbox is gone
 *   {"ask": SECS}				hold and ask (cordon run --ask)
 *   {"allow": P, "n": N}			a live rule of the run's
 *   {"deny": P, "n": N}			(answered with N)
 *   {"answer": ID, "decision": D}		allow-once, allow-run or deny
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/xmalloc.h"
#include "proxy/proxy.h"

/* The string at key (NULL: missing, or not a string), at most max bytes. */
static const char *
watch_msg_str(json_t *doc, const char *key, size_t max, char **cause)
{
	json_t		*v = json_object_get(doc, key);
	const char	*s;

	if (!json_is_string(v)) {
		xasprintf(cause, "\"%s\" must be a string", key);
		return NULL;
	}
	s = json_string_value(v);
	if (json_string_length(v) == 0 || json_string_length(v) > max ||
	    strlen(s) != json_string_length(v)) {
		xasprintf(cause, "\"%s\" must be 1 to %zu bytes", key, max);
		return NULL;
	}
	return s;
}

/* {"allow": P, "n": N} or {"deny": P, "n": N}. */
static int
watch_msg_rule(json_t *doc, const char *key, struct watch_msg *m,
    char **cause)
{
	json_t		*n = json_object_get(doc, "n");
	const char	*s;

	if (json_object_size(doc) != 2 || !json_is_integer(n) ||
	    json_integer_value(n) < 0) {
		xasprintf(cause, "{\"%s\": P, \"n\": N} has those two keys, "
		    "N a number from 0", key);
		return -1;
	}
	if ((s = watch_msg_str(doc, key, WATCH_MSG_TEXT_MAX, cause)) == NULL)
		return -1;
	m->wm_kind = strcmp(key, "allow") == 0 ? WM_ALLOW : WM_DENY;
	m->wm_n = (long long)json_integer_value(n);
	snprintf(m->wm_text, sizeof(m->wm_text), "%s", s);
	return 0;
}

/* {"answer": ID, "decision": D}. */
static int
watch_msg_answer(json_t *doc, struct watch_msg *m, char **cause)
{
	static const char *const decisions[] = {
		[WMD_ALLOW_ONCE] = "allow-once",
		[WMD_ALLOW_RUN] = "allow-run",
		[WMD_DENY] = "deny"
	};
	const char	*id, *d;
	size_t		 i;

	if (json_object_size(doc) != 2) {
		*cause = xstrdup("{\"answer\": ID, \"decision\": D} has those "
		    "two keys");
		return -1;
	}
	if ((id = watch_msg_str(doc, "answer", WATCH_ASK_ID_MAX, cause)) ==
	    NULL || (d = watch_msg_str(doc, "decision", 16, cause)) == NULL)
		return -1;
	for (i = 0; i < sizeof(decisions) / sizeof(decisions[0]); i++)
		if (strcmp(d, decisions[i]) == 0)
			break;
	if (i == sizeof(decisions) / sizeof(decisions[0])) {
		*cause = xstrdup("decision is allow-once, allow-run or deny");
		return -1;
	}
	m->wm_kind = WM_ANSWER;
	m->wm_decision = (enum watch_msg_decision)i;
	snprintf(m->wm_text, sizeof(m->wm_text), "%s", id);
	return 0;
}

/*
 * Reads one line (len bytes, without its '\n') a run sent into m.
 * Returns 0, or -1 with *cause: the line is malformed.
 */
int
watch_msg_parse(const char *line, size_t len, struct watch_msg *m,
    char **cause)
{
	json_error_t	 jerr;
	json_t		*doc, *v;
	int		 rc = -1;

	memset(m, 0, sizeof(*m));
	*cause = NULL;
	if (len > WATCH_MSG_MAX) {
		xasprintf(cause, "a line longer than %d bytes", WATCH_MSG_MAX);
		return -1;
	}
	if (len == 3 && memcmp(line, "end", 3) == 0) {
		m->wm_kind = WM_END;
		return 0;
	}
	if ((doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		xasprintf(cause, "not JSON: %s", jerr.text);
		return -1;
	}
	if (!json_is_object(doc))
		*cause = xstrdup("not a JSON object");
	else if ((v = json_object_get(doc, "ask")) != NULL) {
		if (json_object_size(doc) != 1 || !json_is_integer(v) ||
		    json_integer_value(v) < 1 ||
		    json_integer_value(v) > WATCH_ASK_SECS_MAX)
			xasprintf(cause, "{\"ask\": SECS} has that one key, "
			    "SECS from 1 to %d", WATCH_ASK_SECS_MAX);
		else {
			m->wm_kind = WM_ASK;
			m->wm_secs = (int)json_integer_value(v);
			rc = 0;
		}
	} else if (json_object_get(doc, "allow") != NULL)
		rc = watch_msg_rule(doc, "allow", m, cause);
	else if (json_object_get(doc, "deny") != NULL)
		rc = watch_msg_rule(doc, "deny", m, cause);
	else if (json_object_get(doc, "answer") != NULL)
		rc = watch_msg_answer(doc, m, cause);
	else
		*cause = xstrdup("a message is end, {\"ask\": SECS}, "
		    "{\"allow\": P, \"n\": N}, {\"deny\": P, \"n\": N} or "
		    "{\"answer\": ID, \"decision\": D}");
	json_decref(doc);
	return rc;
}
