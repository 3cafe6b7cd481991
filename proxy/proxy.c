/*
 * proxy.c: one proxy's life, shared by `cordon proxy` (proxy_cmd.c) and
 * the proxy of `cordon run` (runner/run.c): made with proxy_init(),
 * given its resolver with proxy_dns(), ended with proxy_clear().  Each
 * caller adds what is its own in between: listeners, the egress log,
 * hooks, inspection.  Also what the proxy owns and shares: its policies,
 * counted (a decision keeps the one it began with), and the phantom
 * credentials of a run.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "proxy/upool.h"

/*
 * Makes px a proxy on base with no connection yet, deciding with p
 * (taken), with the default limits; the caller may change them.  The
 * base stays the caller's: proxy_clear() frees everything else.
 */
void
proxy_init(struct proxy *px, struct event_base *base, struct policy *p)
{
	memset(px, 0, sizeof(*px));
	px->px_base = base;
	px->px_policy = proxy_policy_new(p);
	TAILQ_INIT(&px->px_conns);
	TAILQ_INIT(&px->px_watches);
	px->px_max = PROXY_MAX_CONNS;
	px->px_head_secs = PROXY_HEAD_SECS;
	px->px_connect_secs = PROXY_CONNECT_SECS;
	px->px_idle_secs = PROXY_IDLE_SECS;
	px->px_stats.ps_loaded = time(NULL);
	/* Workers share a log: ids are told apart by a random prefix. */
	if (str_random_hex(px->px_idpfx, sizeof(px->px_idpfx) - 1) == -1)
		fatal("proxy: getrandom");
}

/*
 * Gives px its resolver, asking servers (comma-separated, or NULL for
 * the system's), with the npins --resolve pins answered first.  Returns
 * 0, or -1 with *cause; proxy_clear() frees what was made either way.
 */
int
proxy_dns(struct proxy *px, const char *servers, const char *const *pins,
    size_t npins, char **cause)
{
	size_t	 i;

	if ((px->px_dns = dns_new(px->px_base, cause)) == NULL)
		return -1;
	if (servers != NULL && dns_servers(px->px_dns, servers, cause) == -1)
		return -1;
	for (i = 0; i < npins; i++)
		if (dns_pin(px->px_dns, pins[i], cause) == -1)
			return -1;
	return 0;
}

/*
 * Ends px, once its caller has closed what it opened on it, from above:
 * every connection (conn_close_all: each logs its line, and the metrics
 * and hk_observe hear of it, so they are still there), every run channel
 * (watch_close_all) and inspection (inspect_teardown).  Frees what px
 * holds; hk_drained is not called.  A caller that wants to know whether
 * the egress log has every line asks jsonl_failed() before this.
 */
void
proxy_clear(struct proxy *px)
{
	upool_free(&px->px_upool);
	jsonl_close(px->px_log);
	dns_free(px->px_dns);
	proxy_policy_unref(px->px_policy);
	proxy_phantoms_free(px->px_phantoms, px->px_nphantoms);
	ident_counts_free(&px->px_idents);
	memset(px, 0, sizeof(*px));
}

/* The rules of each identity's layer, the default's last (or null). */
static json_t *
proxy_digest_layers(const struct pidents *is)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i <= is->is_n; i++) {
		const struct pident *id = i < is->is_n ? &is->is_v[i] :
		    &is->is_default;

		json_array_append_new(a, id->id_layer != NULL ?
		    policy_show_json(id->id_layer, false) : json_null());
	}
	return a;
}

/*
 * Writes "sha256:" and the hex digest of p as `cordon policy show
 * --plain` would print it, compact with sorted keys, to out: the same
 * rules give the same digest on every replica, wherever their files
 * are (the annotations, which name the files, are left out); with the
 * rules of the identities' layers, so that a layer changed is a new
 * digest (and a reload).  Empty when it cannot be made.
 */
void
proxy_digest(const struct policy *p, char *out, size_t size)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0, i;
	json_t		*j;
	char		*text = NULL;
	size_t		 off;

	out[0] = '\0';
	if ((j = policy_show_json(p, false)) == NULL)
		return;
	if (p->p_idents != NULL)
		json_object_set_new(j, "identity_layers",
		    proxy_digest_layers(p->p_idents));
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (text != NULL && EVP_Digest(text, strlen(text), md, &mdlen,
	    EVP_sha256(), NULL) == 1 && size >= 7 + 2 * mdlen + 1) {
		off = (size_t)snprintf(out, size, "sha256:");
		for (i = 0; i < mdlen; i++, off += 2)
			snprintf(out + off, size - off, "%02x", md[i]);
	}
	free(text);
}

/* Frees n phantom credentials, wiping the real values first. */
void
proxy_phantoms_free(struct phantom *ph, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		policy_pitem_clear(&ph[i].ph_host);
		free(ph[i].ph_env);
		free(ph[i].ph_file);
		free(ph[i].ph_user);
		free(ph[i].ph_header);
		free(ph[i].ph_format);
		free(ph[i].ph_path);
		free(ph[i].ph_member);
		free(ph[i].ph_placeholder);
		free(ph[i].ph_was);
		if (ph[i].ph_value != NULL) {
			explicit_bzero(ph[i].ph_value, strlen(ph[i].ph_value));
			free(ph[i].ph_value);
		}
	}
	free(ph);
}

/* What a phantom is called in warnings: its variable, or its file. */
const char *
proxy_phantom_name(const struct phantom *ph)
{
	return ph->ph_env != NULL ? ph->ph_env : ph->ph_file;
}

/* Whether anyone hears of decisions (proxy_observe). */
bool
proxy_observed(const struct proxy *px)
{
	return px->px_metrics != NULL || px->px_nwatches > 0 ||
	    (px->px_hooks != NULL && px->px_hooks->hk_observe != NULL);
}

/*
 * Tells the metrics and the program (hk_observe) of a decision as it is
 * logged; hint and pattern as for hk_observe.
 */
void
proxy_observe(struct proxy *px, const struct egress *e, const char *hint,
    const char *pattern)
{
	if (px->px_metrics != NULL)
		metrics_count(px->px_metrics, e);
	if (px->px_hooks != NULL && px->px_hooks->hk_observe != NULL)
		px->px_hooks->hk_observe(e, hint, pattern, px->px_hooks_arg);
}

/*
 * Stops waiting for nothing: from now on, hk_drained is told when the
 * last connection goes.  Returns true if none is open now (nothing will
 * be told).
 */
bool
proxy_drain(struct proxy *px)
{
	px->px_draining = true;
	upool_free(&px->px_upool);	/* nothing new: none waits */
	return px->px_nconns == 0;
}
